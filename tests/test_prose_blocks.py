"""Notes, footnotes and tables in guide prose: drawn like the record's boxes, ids unique, inert.

Real builds of a fixture project whose probe guide carries the Markdown under test; the pages
are read back with BeautifulSoup. A mistake an editor would not see on the page (an unknown
note kind, a note never closed, a footnote cited but never written, or written but never cited)
is a located error.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from site_builder.render.markdown import render_markdown
from tests.conftest import Project, copy_project, soup, tree_digest
from tests.netlify_server import serve_netlify
from tests.new_guide import SLUG
from tests.scaling import BOUND, GROWTH, growth
from tests.test_linear_inputs import rendering
from tests.test_prose_links import write_body
from tests.test_site_browser import launch_chromium

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)> "onmouseover=alert(3)'
LONG_TABLE = "| Step | Tokens |\n|---|---|\n" + "".join(f"| {n} | {n * 512} |\n" for n in range(60))
BODY = f"""## What this guide answers

Whether a larger prefill chunk helps long prompts.[^chunk]

::: note
A plain note with **bold**, `code` and [a link](https://example.org/docs).

- first item
- second item
:::

::: tip Keep the old size
The 4096 default is the measured one.[^chunk]
:::

::: warning {HOSTILE}
Raising it past 8192 starves decode batches.[^2]
:::

## fn-1

## Notes

| Chunk | p99 (ms) |
|------:|---------:|
| 2048 | 410 |
| 4096 | 630 |

{LONG_TABLE}
[^chunk]: From the scheduler source, *not* measured.
[^2]: See [the scheduler](https://github.com/sgl-project/sglang).
"""


def errors(project: Project) -> list[str]:
    """Build; return the build's error lines, as `file: message`."""
    result = project.run()
    assert "Traceback" not in result.stderr
    assert result.returncode != 0, result.stdout
    found = (re.match(r"\s+error\s+\w+\s+(.*)$", line) for line in result.stderr.splitlines())
    return [match.group(1) for match in found if match]


def line_of(project: Project, source: str, text: str) -> int:
    """Return the 1-based line of the file that first holds `text`."""
    lines = (project.root / source).read_text("utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, BeautifulSoup]:
    """The fixture project with the probe guide's prose set to BODY, built once."""
    project = copy_project(tmp_path_factory.mktemp("prose-blocks") / "project")
    write_body(project, BODY)
    result = project.run()
    assert result.returncode == 0, result.stderr
    return project, soup(project.out / f"guides/{SLUG}/index.html")


def test_each_note_kind_is_an_aside_with_its_label_and_title(
    built: tuple[Project, BeautifulSoup],
) -> None:
    page = built[1]
    notes = page.select(".prose aside.callout")
    assert [note["class"] for note in notes] == [
        ["callout", "prose-note", f"note-{kind}"] for kind in ("note", "tip", "warning")
    ]
    assert all(note["role"] == "note" for note in notes)
    titles = [note.select_one(".note-title").get_text() for note in notes]
    assert titles == ["Note", "Tip: Keep the old size", f"Warning: {HOSTILE}"]
    assert [note.select_one(".callout-label").get_text() for note in notes] == [
        "Note",
        "Tip:",
        "Warning:",
    ]
    # Markdown inside a note is Markdown: emphasis, code, links, lists.
    plain = notes[0]
    assert plain.select_one("strong:not(.callout-label)").get_text() == "bold"
    assert plain.select_one("code").get_text() == "code"
    assert plain.select_one("a")["href"] == "https://example.org/docs"
    assert [item.get_text() for item in plain.select("ul li")] == ["first item", "second item"]
    assert ":::" not in page.select_one(".prose").get_text()


def test_hostile_note_titles_and_footnote_labels_stay_inert_text(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    label = '"><script>alert(4)</script>'
    write_body(project, f"::: tip {HOSTILE}\nBody.[^{label}]\n:::\n\n[^{label}]: {HOSTILE}\n")
    result = project.run()
    assert result.returncode == 0, result.stderr
    prose = soup(project.out / f"guides/{SLUG}/index.html").select_one(".prose")
    assert not prose.find_all(["script", "img"])
    for tag in prose.find_all(True):
        assert not [name for name in tag.attrs if name.lower().startswith("on")], tag
        for name in ("href", "id", "aria-labelledby"):
            assert re.fullmatch(r"[#\w:/.-]*", str(tag.get(name, ""))), tag
    assert prose.select_one(".note-title").get_text() == f"Tip: {HOSTILE}"
    assert prose.select_one(".footnote-item p").get_text().startswith(HOSTILE)


def test_an_unknown_note_kind_is_a_located_error(project: Project) -> None:
    source = write_body(project, "Intro.\n\n::: warnng Mind the gap\nText.\n:::\n")
    number = line_of(project, source, "::: warnng")
    assert errors(project) == [
        f"{source}: line {number}: '::: warnng Mind the gap' names an unknown note kind "
        f"'warnng' (note, tip, warning); did you mean 'warning'?"
    ]
    assert not project.out.exists()


def test_a_note_never_closed_is_a_located_error(project: Project) -> None:
    source = write_body(project, "Intro.\n\n::: tip\nThe rest of the page.\n\n## Later\n")
    number = line_of(project, source, "::: tip")
    assert errors(project) == [
        f"{source}: line {number}: '::: tip' is never closed: end the note with a line ':::'"
    ]


def test_footnotes_link_to_their_notes_and_back(built: tuple[Project, BeautifulSoup]) -> None:
    prose = built[1].select_one(".prose")
    refs = prose.select("sup.footnote-ref a")
    # Numbered in reading order; the first note is cited twice.
    assert [ref.get_text() for ref in refs] == ["1", "1", "2"]
    assert all(ref["role"] == "doc-noteref" for ref in refs)
    assert [ref["aria-label"] for ref in refs] == ["Note 1", "Note 1", "Note 2"]
    section = prose.select_one("section.footnotes")
    assert section is prose.find_all(recursive=False)[-1]  # at the end of the prose
    heading = section.find("h2")
    assert heading.get_text() == "Notes" and section["aria-labelledby"] == heading["id"]
    items = section.select("ol > li")
    assert items[0].get_text().startswith("From the scheduler source, not measured.")
    assert items[1].select_one("a")["href"] == "https://github.com/sgl-project/sglang"
    for ref in refs:
        note = prose.find(id=ref["href"][1:])
        assert note in items
        backs = [a["href"] for a in note.select("a.footnote-backref")]
        assert f"#{ref['id']}" in backs
    for back in section.select("a.footnote-backref"):
        assert back["role"] == "doc-backlink"
        assert prose.find(id=back["href"][1:]) in refs


def test_footnote_ids_never_collide_with_headings_or_each_other(
    built: tuple[Project, BeautifulSoup],
) -> None:
    page = built[1]
    ids = Counter(str(tag["id"]) for tag in page.find_all(id=True))
    assert [anchor for anchor, count in ids.items() if count > 1] == []
    # The prose headings named like a footnote and like the notes keep their ids.
    headings = {h.get_text(): h["id"] for h in page.select(".prose > h2")}
    assert headings["fn-1"] == "fn-1" and headings["Notes"] == "notes"
    notes = page.select(".prose section.footnotes li")
    assert notes[0]["id"] not in ("fn-1", "notes") and notes[0]["id"].startswith("fn-1")
    assert page.select_one(".prose section.footnotes h2")["id"] == "notes-2"


def test_footnote_mistakes_are_located_errors(project: Project) -> None:
    body = (
        "Cited but never written.[^missing]\n\n"
        "Cited once.[^a]\n\n"
        "[^a]: The note.\n"
        "[^unused]: Never cited.\n"
        "[^a]: Written twice.\n"
    )
    source = write_body(project, body)
    lines = {text: line_of(project, source, text) for text in ("[^missing]", "[^a]:", "[^un")}
    twice = line_of(project, source, "Written twice")
    assert errors(project) == [
        f"{source}: line {lines['[^missing]']}: '[^missing]' cites no footnote: write its text "
        f"on a line of its own, '[^missing]: ...', or put it in `backticks` to show it as text",
        f"{source}: line {lines['[^un']}: '[^unused]:' is never cited: cite it as [^unused] "
        f"in the text, or delete it",
        f"{source}: line {twice}: '[^a]:' repeats the note of line {lines['[^a]:']}; keep one",
    ]


def test_a_prose_table_scrolls_in_a_named_region_with_a_sticky_header(
    built: tuple[Project, BeautifulSoup],
) -> None:
    project, page = built
    table = page.select_one(".prose table")
    box = table.parent
    assert box.name == "div" and box["class"] == ["table-scroll"]
    assert box["role"] == "region" and box["tabindex"] == "0"
    assert box["aria-label"] == "Table: Chunk, p99 (ms)"
    assert [th.get_text() for th in table.select("thead th")] == ["Chunk", "p99 (ms)"]
    css = next((project.out / "assets").glob("style.*.css")).read_text("utf-8")
    assert re.search(r"thead th \{[^}]*position: sticky", css)
    assert re.search(r"\.table-scroll \{[^}]*overflow-x: auto", css)


STICKY_AND_COLOURS = """() => {
  const box = document.querySelector(".prose .table-scroll.long");
  box.scrollTop = 400;
  const head = box.querySelector("thead th").getBoundingClientRect().top;
  const notes = [...document.querySelectorAll(".prose aside.callout")];
  return {
    scrolled: box.scrollTop,
    offset: head - box.getBoundingClientRect().top,
    backgrounds: notes.map((note) => getComputedStyle(note).backgroundColor),
    borders: notes.map((note) => getComputedStyle(note).borderLeftColor),
  };
}"""


def test_a_long_prose_table_keeps_its_header_in_view_and_notes_differ_by_kind(
    built: tuple[Project, BeautifulSoup],
) -> None:
    from playwright.sync_api import sync_playwright

    project = built[0]
    with serve_netlify(project.out) as url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for scheme in ("light", "dark"):
                page = browser.new_page(viewport={"width": 900, "height": 700}, color_scheme=scheme)
                page.goto(f"{url}/guides/{SLUG}/")
                seen = page.evaluate(STICKY_AND_COLOURS)
                assert seen["scrolled"] > 0, seen
                assert abs(seen["offset"]) <= 2, seen  # the header row stuck to the box's top
                assert len(set(seen["backgrounds"])) == 3, seen
                assert len(set(seen["borders"])) == 3, seen
        finally:
            browser.close()


def test_a_long_prose_table_scrolls_in_its_own_box_like_a_record_table() -> None:
    rows = "".join(f"| {n} | x |\n" for n in range(41))
    html = render_markdown(f"| n | v |\n|---|---|\n{rows}").html
    box = BeautifulSoup(html, "html.parser").select_one("div.table-scroll")
    assert box["class"] == ["table-scroll", "long"]
    short = render_markdown("| n |\n|---|\n| 1 |\n").html
    assert 'class="table-scroll"' in short


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    digests = []
    for name in ("one", "two"):
        project = copy_project(tmp_path / name)
        write_body(project, BODY)
        assert project.run().returncode == 0
        digests.append(tree_digest(project.out))
    assert digests[0] == digests[1]


PROSE = {
    "notes": lambda n: "::: note\ntext\n:::\n\n" * n,
    "unclosed notes": lambda n: "::: note\ntext\n\n" * n,
    "footnotes": lambda n: "".join(f"See[^{i}].\n\n[^{i}]: note {i}\n\n" for i in range(n)),
    "references to one note": lambda n: "[^a] " * n + "\n\n[^a]: the note\n",
    "tables": lambda n: "| a | b |\n|---|---|\n| 1 | 2 |\n\n" * n,
}


@pytest.mark.parametrize("shape", sorted(PROSE))
def test_prose_block_costs_grow_linearly(shape: str) -> None:
    ratio = growth(rendering(PROSE[shape]), 2000)
    assert ratio < BOUND, f"{shape}: {GROWTH}x the input took {ratio:.1f}x the time"
