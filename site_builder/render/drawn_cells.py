"""Draw formatted cells as HTML: what a table cell, a list item or a fact of a record shows.

The one drawing of a `Cell` every template uses (`drawn_cell(c, verified)`), and of a table's
body rows (`drawn_rows`): a data-heavy page holds hundreds of cells, and drawing them here,
escaped once, costs a fraction of a Jinja loop and macro call for each. `verified` maps the
paths of values this build recomputed to the tooltip that names their formula.
"""

from __future__ import annotations

from collections.abc import Mapping

from markupsafe import Markup

from site_builder.present.blocks import Table
from site_builder.present.cells import Cell

_SPECIAL = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;"})
"""What Jinja's autoescape (markupsafe's `escape`) replaces, with what it puts instead."""


def drawn_cell(cell: Cell, verified: Mapping[str, str] | None = None) -> Markup:
    """Return a cell's HTML, with a verified mark if its value is in `verified`."""
    return Markup("".join(_parts(cell, verified or {})))


def drawn_rows(table: Table, verified: Mapping[str, str], note_column: bool) -> Markup:
    """Return a table's body rows, a line each cell, each line ending in a newline; with
    `note_column`, a last cell linking each row's caveats (numbered under the table)."""
    classes = [_escaped(column.css) for column in table.columns]
    anchor = _escaped(table.anchor)
    lines: list[str] = []
    for row in table.rows:
        lines.append("    <tr>\n")
        for css, cell in zip(classes, row.cells, strict=True):
            lines.append(f'      <td class="{css}">{"".join(_parts(cell, verified))}</td>\n')
        if note_column:
            refs = "".join(
                f'<a class="note-ref" href="#{anchor}-note-{n}" aria-label="Caveat {n}">{n}</a>'
                for n in row.notes
            )
            lines.append(f'      <td class="note-cell">{refs}</td>\n')
        lines.append("    </tr>\n")
    return Markup("".join(lines))


def _parts(cell: Cell, verified: Mapping[str, str]) -> list[str]:
    """Return the HTML of a cell in pieces, every text escaped."""
    kind, text = cell.kind, _escaped(cell.text)
    if kind == "bool":
        parts = [f'<span class="badge badge-{text}">{text}</span>']
    elif kind in ("null", "empty"):
        parts = [f'<span class="muted">{text}</span>']
    elif kind == "number":
        parts = [f'<span class="number">{text}</span>']
    elif kind == "hash":
        parts = [f'<code class="hash" title="{text}" data-pagefind-ignore>{text}</code>']
    elif kind == "link":
        parts = [f'<a class="url" href="{_escaped(cell.href)}" rel="nofollow noopener">{text}</a>']
    elif kind == "time":
        label = f"{_escaped(cell.label)}: " if cell.label else ""
        parts = [f'{label}<time datetime="{_escaped(cell.datetime)}">{text}</time>']
    elif kind == "list":
        parts = ['<ul class="cell-list">']
        for item in cell.items:
            parts += ["<li>", *_parts(item, verified), "</li>"]
        parts.append("</ul>")
    else:
        parts = [text]
    if cell.path and cell.path in verified:
        formula = verified[cell.path]
        inferred = " inferred" if "(inferred)" in formula else ""
        parts.append(
            f' <span class="verified-mark{inferred}" title="{_escaped(formula)}" data-pagefind-ignore>✓'
            '<span class="visually-hidden"> verified</span></span>'
        )
    return parts


def _escaped(text: str) -> str:
    """Return text escaped as Jinja's autoescape escapes it, as a plain string: most cells hold
    none of the five characters, and making a `Markup` of each costs more than the test."""
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return text.translate(_SPECIAL)
    return text
