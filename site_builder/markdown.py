"""Render the editor's Markdown: CommonMark plus tables, raw HTML off, only safe link targets.

The only module that imports markdown_it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin

_SAFE_TARGET = re.compile(r"^(https?://[^\s]+|/(?!/)[^\s]*|#[^\s]*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Heading:
    """A second-level prose heading, for the page's table of contents."""

    anchor: str
    text: str


@dataclass(frozen=True)
class Rendered:
    """HTML of a Markdown text and its second-level headings."""

    html: str
    headings: tuple[Heading, ...]


def _plain_text(inline: Token) -> str:
    """Return the visible text of an inline token (emphasis markers dropped)."""
    return "".join(
        child.content for child in inline.children or () if child.type in ("text", "code_inline")
    )


def is_safe_target(url: str) -> bool:
    """Return whether a link target is http(s), site-absolute or a fragment; nothing else links."""
    return _SAFE_TARGET.match(url.strip()) is not None


def _images_as_links(children: list[Token]) -> list[Token]:
    """Turn each image into a link to it, named by its alt text.

    The site hosts no images and its Content-Security-Policy loads none from elsewhere, so an
    <img> would show broken; a link keeps the reference readable and reachable.
    """
    result: list[Token] = []
    for child in children:
        if child.type != "image":
            result.append(child)
            continue
        src = str(child.attrGet("src") or "")
        text = "".join(
            part.content for part in child.children or () if part.type in ("text", "code_inline")
        )
        result.append(Token("link_open", "a", 1, attrs={"href": src, "class": "image-link"}))
        result.append(Token("text", "", 0, content=f"Image: {text or src}"))
        result.append(Token("link_close", "a", -1))
    return result


@cache
def make_markdown() -> MarkdownIt:
    """Return the one configured parser: raw HTML off, tables on, heading anchors on."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    anchors_plugin(md, min_level=2, max_level=4)
    md.validateLink = is_safe_target  # type: ignore[method-assign]
    return md


def render_markdown(
    text: str,
    resolve_link: Callable[[str], str] | None = None,
    reserved_ids: frozenset[str] = frozenset(),
) -> Rendered:
    """Return the HTML of `text` and its `##` headings.

    `resolve_link` rewrites site paths; heading ids never reuse `reserved_ids` (the ids the
    page already has), so `## Sources` in prose cannot collide with the Sources section.
    """
    md = make_markdown()
    env: dict[str, object] = {}
    tokens = md.parse(text, env)
    taken = set(reserved_ids)
    for token in tokens:
        if token.type == "heading_open" and token.attrGet("id"):
            anchor = base = str(token.attrGet("id"))
            number = 1
            while anchor in taken:
                number += 1
                anchor = f"{base}-{number}"
            taken.add(anchor)
            token.attrSet("id", anchor)
    for token in tokens:
        if token.children:
            token.children = _images_as_links(token.children)
    if resolve_link is not None:
        for token in tokens:
            for child in token.children or ():
                href = child.attrGet("href") if child.type == "link_open" else None
                if isinstance(href, str) and href.startswith("/"):
                    child.attrSet("href", resolve_link(href))
    headings = tuple(
        Heading(str(token.attrGet("id")), _plain_text(tokens[index + 1]))
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.tag == "h2"
    )
    return Rendered(md.renderer.render(tokens, md.options, env), headings)
