"""Notes, footnotes and tables in the editor's Markdown, drawn like the record's own boxes.

`::: note`, `::: tip` and `::: warning` (an optional title after the kind) open a note that a
line `:::` closes; it is drawn as the record's callouts are. `[^label]` cites a footnote
written `[^label]: text`: references are numbered in reading order and the notes are listed
under a "Notes" heading at the end of the prose, each with a link back to every reference. A
table scrolls inside a named, focusable box, as a record table does. Every id is claimed from
the page's `PageIds`; an unknown note kind, a note never closed, a reference with no note and
a note never cited are reported at their line. markdown.py owns markdown_it and hands in the
two plugins: everything here works on its tokens and renderer without importing it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from difflib import get_close_matches
from html import escape
from typing import Any

from site_builder.model.links import ProseLink
from site_builder.present.ids import PageIds

KINDS = {"note": "Note", "tip": "Tip", "warning": "Warning"}
"""The kinds of note an editor may write, with the label each is drawn with."""
NOTES_HEADING = "Notes"
LONG_TABLE = 40
"""Rows past which a table scrolls in a box of its own, header kept in view (as macros.html)."""
LABEL_LIMIT = 100
_UNDEFINED_REF = re.compile(r"\[\^[^\]\s]+\]")
_CLOSING_FENCE = re.compile(r"^[\s>]*:{3,}\s*$")
_PROBLEMS = "prose_block_problems"
"""Key of the parse env: (line in the text, as typed, problem, line it names) found parsing."""

Token = Any  # markdown_it's Token: duck-typed, markdown.py owns the library


def install_prose_blocks(
    md: Any, container_plugin: Callable[..., None], footnote_plugin: Callable[..., None]
) -> None:
    """Teach the parser notes (`::: kind`), footnotes (`[^1]`) and scrolling tables."""
    md.use(container_plugin, "note", validate=_is_note_fence, render=_render_note)
    md.use(footnote_plugin, inline=False)
    md.core.ruler.before("footnote_tail", "footnote_definitions", _footnote_definitions)
    md.core.ruler.after("footnote_tail", "footnotes_heading", _footnotes_heading)
    rules: dict[str, Callable[..., str]] = {
        "footnote_ref": _render_ref,
        "footnote_block_open": _render_notes_open,
        "footnote_list_open": lambda *_: '<ol class="footnotes-list">\n',
        "footnote_block_close": lambda *_: "</ol>\n</section>\n",
        "footnote_open": _render_note_item,
        "footnote_close": lambda *_: "</li>\n",
        "footnote_anchor": _render_backlink,
        "table_open": _render_table_open,
        "table_close": lambda *_: "</table>\n</div>\n",
    }
    for name, rule in rules.items():
        md.add_render_rule(name, rule)


def claim_prose_ids(tokens: Sequence[Token], ids: PageIds) -> None:
    """Give every footnote and reference an id of the page; tell each where its link goes.

    Called after the headings have claimed theirs, so `## fn-1` keeps its id and the note
    takes the next free one.
    """
    refs = [
        child
        for token in tokens
        if token.type == "inline"
        for child in token.children or ()
        if child.type == "footnote_ref"
    ]
    notes = {
        token.meta["id"]: ids.claim(f"fn-{token.meta['id'] + 1}")
        for token in tokens
        if token.type == "footnote_open"
    }
    backs = {}
    for ref in refs:
        number = ref.meta["id"] + 1
        ref.meta["anchor"] = backs[ref.meta["id"], ref.meta["subId"]] = ids.claim(f"fnref-{number}")
        ref.meta["target"] = notes.get(ref.meta["id"], f"fn-{number}")
    for token in tokens:
        if token.type == "footnote_open":
            token.meta["anchor"] = notes[token.meta["id"]]
        elif token.type == "footnote_anchor":
            token.meta["target"] = backs.get((token.meta["id"], token.meta["subId"]), "")


def prose_block_problems(
    text: str, tokens: Sequence[Token], env: dict[str, Any], first_line: int
) -> list[ProseLink]:
    """Return each note and footnote the reader would not see as written, at its file line."""
    found = list(env.get(_PROBLEMS, ()))
    lines = re.split(r"\r\n?|\n", text)
    for token in tokens:
        if token.type == "container_note_open" and token.map:
            typed = f"{token.markup} {token.info.strip()}"
            kind = token.info.split()[0]
            if kind.lower() not in KINDS:
                guess = get_close_matches(kind.lower(), KINDS, n=1)
                hint = f"; did you mean '{guess[0]}'?" if guess else ""
                known = ", ".join(KINDS)
                problem = f"names an unknown note kind '{kind}' ({known}){hint}"
                found.append((token.map[0], typed, problem, -1))
            end = token.map[1]
            if end >= len(lines) or not _CLOSING_FENCE.match(lines[end]):
                problem = f"is never closed: end the note with a line '{token.markup}'"
                found.append((token.map[0], typed, problem, -1))
        if token.type == "inline" and token.children:
            line = token.map[0] if token.map else 0
            for child in token.children:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                if child.type == "text":
                    for match in _UNDEFINED_REF.finditer(child.content):
                        problem = (
                            f"cites no footnote: write its text on a line of its own, "
                            f"'{match.group()}: ...', or put it in `backticks` to show it as text"
                        )
                        found.append((line, match.group(), problem, -1))
    return [
        # Only a fixed message names another line: the editor's text is never a format string.
        ProseLink(
            first_line + line,
            typed,
            "",
            problem if other < 0 else problem.replace("{line}", str(first_line + other)),
        )
        for line, typed, problem, other in sorted(found)
    ]


def _is_note_fence(params: str, markup: str) -> bool:
    """Open a note on any `::: word`; an unknown word is reported, not shown as text."""
    return bool(params.strip())


def _kind(token: Token) -> tuple[str, str]:
    """Return the (known) kind of a note and its title as written."""
    kind, *title = token.info.split(None, 1)
    kind = kind.lower()
    return (kind if kind in KINDS else "note"), " ".join(title).strip()


def _render_note(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Draw a note as an aside with its label and escaped title, like a record callout."""
    token = tokens[idx]
    if token.nesting != 1:
        return "</aside>\n"
    kind, title = _kind(token)
    label = KINDS[kind] + (":" if title else "")
    heading = f'<strong class="callout-label">{label}</strong>'
    if title:
        heading += f" {escape(title)}"
    return (
        f'<aside class="callout prose-note note-{kind}" role="note">\n'
        f'<p class="note-title">{heading}</p>\n'
    )


def _footnote_definitions(state: Any) -> None:
    """Before the footnotes move to the end: report a note defined twice or never cited."""
    refs = state.env.get("footnotes", {}).get("refs", {})
    seen: dict[str, int] = {}
    problems = state.env.setdefault(_PROBLEMS, [])
    for token in state.tokens:
        if token.type != "footnote_reference_open" or not token.map:
            continue
        label, line = token.meta["label"], token.map[0]
        typed = f"[^{label}]:"
        if label in seen:
            problems.append((line, typed, "repeats the note of line {line}; keep one", seen[label]))
        elif refs.get(":" + label, -1) < 0:
            problem = f"is never cited: cite it as [^{label}] in the text, or delete it"
            problems.append((line, typed, problem, -1))
        seen.setdefault(label, line)


def _footnotes_heading(state: Any) -> None:
    """Give the notes a `## Notes` heading of the prose, so its id is claimed like any other."""
    if not state.tokens or state.tokens[-1].type != "footnote_block_close":
        return
    index = next(i for i, t in enumerate(state.tokens) if t.type == "footnote_block_open")
    make = type(state.tokens[index])
    text = make("text", "", 0, content=NOTES_HEADING)
    heading = [
        make("heading_open", "h2", 1, markup="##", block=True),
        make("inline", "", 0, content=NOTES_HEADING, children=[text]),
        make("heading_close", "h2", -1, markup="##", block=True),
        make("footnote_list_open", "ol", 1, block=True),
    ]
    state.tokens[index + 1 : index + 1] = heading


def _render_notes_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Open the section of notes, named by its heading."""
    heading = tokens[idx + 1].attrGet("id") if idx + 1 < len(tokens) else None
    named = f' aria-labelledby="{escape(str(heading))}"' if heading else ""
    return f'<section class="footnotes"{named}>\n'


def _render_ref(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Draw a reference: its note's number, linking to the note."""
    meta = tokens[idx].meta
    number = meta["id"] + 1
    anchor = meta.get("anchor") or f"fnref-{number}"
    target = meta.get("target") or f"fn-{number}"
    return (
        f'<sup class="footnote-ref"><a href="#{escape(target)}" id="{escape(anchor)}" '
        f'role="doc-noteref" aria-label="Note {number}">{number}</a></sup>'
    )


def _render_note_item(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Open one note of the list, at its id."""
    meta = tokens[idx].meta
    anchor = meta.get("anchor") or f"fn-{meta['id'] + 1}"
    return f'<li id="{escape(anchor)}" class="footnote-item">'


def _render_backlink(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Link a note back to one of its references (numbered when it has several)."""
    meta = tokens[idx].meta
    number, sub = meta["id"] + 1, meta["subId"]
    target = meta.get("target") or f"fnref-{number}"
    shown = "\u21a9\ufe0e" + (str(sub + 1) if sub else "")
    label = f"Back to reference {number}" + (f" ({sub + 1})" if sub else "")
    return (
        f' <a href="#{escape(target)}" class="footnote-backref" role="doc-backlink" '
        f'aria-label="{label}">{shown}</a>'
    )


def _render_table_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """Open a table inside a scroll box named by its column headings, as record tables are."""
    headings: list[str] = []
    rows = 0
    for index in range(idx + 1, len(tokens)):  # not a slice: a copy per table is quadratic
        token = tokens[index]
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows += 1
        if token.type == "inline" and rows == 1:
            text = "".join(
                child.content
                for child in token.children or ()
                if child.type in ("text", "code_inline")
            )
            headings.append(" ".join(text.split()))
    label = ", ".join(heading for heading in headings if heading) or "untitled"
    if len(label) > LABEL_LIMIT:
        label = label[: LABEL_LIMIT - 1].rstrip() + "\u2026"
    long = " long" if rows - 1 > LONG_TABLE else ""
    return (
        f'<div class="table-scroll{long}" role="region" aria-label="Table: {escape(label)}" '
        f'tabindex="0">\n<table>\n'
    )
