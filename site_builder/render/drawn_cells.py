"""Draw one formatted cell as HTML: what a table cell, a list item or a fact of a record shows.

The one drawing of a `Cell` every template uses (`drawn_cell(c, verified)`): a table of a
data-heavy page holds hundreds of cells, and drawing each here, escaped once, costs a fraction
of a Jinja macro call. `verified` maps the paths of values this build recomputed to the
tooltip that names their formula.
"""

from __future__ import annotations

from collections.abc import Mapping

from markupsafe import Markup, escape

from site_builder.present.cells import Cell


def drawn_cell(cell: Cell, verified: Mapping[str, str] | None = None) -> Markup:
    """Return a cell's HTML, with a verified mark if its value is in `verified`."""
    return Markup("".join(_parts(cell, verified or {})))


def _parts(cell: Cell, verified: Mapping[str, str]) -> list[str]:
    """Return the HTML of a cell in pieces, every text escaped."""
    kind, text = cell.kind, escape(cell.text)
    if kind == "bool":
        parts = [f'<span class="badge badge-{text}">{text}</span>']
    elif kind in ("null", "empty"):
        parts = [f'<span class="muted">{text}</span>']
    elif kind == "number":
        parts = [f'<span class="number">{text}</span>']
    elif kind == "hash":
        parts = [f'<code class="hash" title="{text}" data-pagefind-ignore>{text}</code>']
    elif kind == "link":
        parts = [f'<a class="url" href="{escape(cell.href)}" rel="nofollow noopener">{text}</a>']
    elif kind == "time":
        label = f"{escape(cell.label)}: " if cell.label else ""
        parts = [f'{label}<time datetime="{escape(cell.datetime)}">{text}</time>']
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
            f' <span class="verified-mark{inferred}" title="{escape(formula)}" data-pagefind-ignore>✓'
            '<span class="visually-hidden"> verified</span></span>'
        )
    return parts
