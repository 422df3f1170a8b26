"""Cells and table rows drawn in Python escape exactly as Jinja's autoescape would."""

from __future__ import annotations

import random

from bs4 import BeautifulSoup
from markupsafe import escape

from site_builder.present.blocks import Column, Row, Table
from site_builder.present.cells import Cell
from site_builder.render.drawn_cells import drawn_cell, drawn_rows

ALPHABET = "ab <>&\"'=/;#é✓\u202e"


def _texts(count: int) -> list[str]:
    """Return `count` strings mixing every character autoescape replaces with plain ones."""
    chance = random.Random(13)
    return [
        "".join(chance.choice(ALPHABET) for _ in range(chance.randint(0, 12))) for _ in range(count)
    ]


def test_a_cell_text_is_escaped_as_autoescape_escapes_it() -> None:
    for text in _texts(2000):
        assert drawn_cell(Cell("text", text)) == str(escape(text))


def test_attributes_of_a_cell_hold_their_text_and_nothing_else() -> None:
    for text in _texts(300):
        url = f"https://example.org/?q={text}"
        for cell, tag, attribute, value in (
            (Cell("link", url), "a", "href", url),
            (Cell("hash", text), "code", "title", text),
            (Cell("time", "t", datetime=text), "time", "datetime", text),
        ):
            drawn = BeautifulSoup(drawn_cell(cell), "html.parser")
            element = drawn.find(tag)
            assert element is not None and element[attribute] == value
            assert len(drawn.find_all(True)) == 1


def test_rows_escape_their_anchor_and_keep_one_cell_per_column() -> None:
    anchor = 'rows"><script>x</script>'
    columns = (Column("A", True, False), Column("B", False, True))
    rows = (Row((Cell("text", "<b>"), Cell("number", "1")), (1, 2)),)
    table = Table("T", anchor, columns, rows, ())
    drawn = BeautifulSoup(
        f"<table><tbody>{drawn_rows(table, {}, True)}</tbody></table>", "html.parser"
    )
    cells = drawn.find_all("td")
    assert [cell.get("class") for cell in cells] == [["verdict"], ["num"], ["note-cell"]]
    assert cells[0].get_text() == "<b>" and drawn.find("script") is None
    assert [link["href"] for link in cells[2].find_all("a")] == [
        f"#{anchor}-note-1",
        f"#{anchor}-note-2",
    ]
