"""Render the editor's Markdown: CommonMark plus tables, raw HTML off, every link accounted for.

Every link and image target is classified here, with the line the editor wrote it on: a web
address or site path is published, a relative path is resolved against the page's URL, and
anything else (`htps:`, `mailto:`, `javascript:`) is refused with a reason and drawn as
plain text. Text that still reads `[text](target)` after parsing is reported, so raw link
Markdown never reaches a page. The only module that imports markdown_it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache
from urllib.parse import urljoin

from markdown_it import MarkdownIt
from markdown_it.common.normalize_url import normalizeLink
from markdown_it.token import Token
from mdit_py_plugins.anchors.index import slugify
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.footnote import footnote_plugin

from site_builder.model.images import ContentImage
from site_builder.model.links import ProseLink
from site_builder.present.ids import PageIds
from site_builder.render.code_blocks import install_code_blocks
from site_builder.render.prose_blocks import (
    claim_prose_ids,
    install_prose_blocks,
    prose_block_problems,
)

_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
_WEB_SCHEMES = ("http", "https")
_RAW_LINK = re.compile(r"!?\[[^[\]\n]*\]\([^)\n]*\)?")
"""Link Markdown left as text. Its text holds no `[`, so a run of them is scanned once."""
_ANCHORED_LEVELS = ("h2", "h3", "h4")
_NO_ALT = "cannot be shown: an image needs alt text saying what it shows, ![a chart of ...](file)"


@dataclass(frozen=True)
class Heading:
    """A second-level prose heading, for the page's table of contents."""

    anchor: str
    text: str


@dataclass(frozen=True)
class Rendered:
    """HTML of a Markdown text, its second-level headings and every link it wrote."""

    html: str
    headings: tuple[Heading, ...]
    links: tuple[ProseLink, ...] = ()


def _plain_text(inline: Token) -> str:
    """Return the visible text of an inline token (emphasis markers dropped)."""
    return "".join(
        child.content for child in inline.children or () if child.type in ("text", "code_inline")
    )


def classify_target(typed: str, page_path: str = "/") -> tuple[str, str]:
    """Return (target to publish, "") for a link an editor typed, or ("", why it is refused).

    Web addresses and site paths are kept, `#anchors` too; a relative path is resolved
    against `page_path`, the URL of the page the link sits on.
    """
    # A browser drops tabs and line breaks anywhere in a URL ("jav\tascript:" is "javascript:").
    target = re.sub(r"[\t\n\r]", "", typed).strip()
    if not target:
        return "", "the link has no target"
    if target.startswith("#"):
        return target, ""
    if target.startswith("//"):
        return "", "a target starting with // has no scheme; write https://..."
    scheme = _SCHEME.match(target)
    if scheme:
        name = scheme.group(1).lower()
        rest = target[scheme.end() :]
        if name not in _WEB_SCHEMES:
            guess = get_close_matches(name, _WEB_SCHEMES, n=1, cutoff=0.6)
            if guess:
                return "", f"unknown scheme '{name}:'; did you mean '{guess[0]}:'?"
            return "", (
                f"'{name}:' links are not published; link to a web address (https://...), "
                f"a site path (/guides/...) or an #anchor"
            )
        if not rest.startswith("//") or len(rest) <= 2 or re.search(r"\s", target):
            return "", f"not a full web address; write {name}://host/path"
        return f"{name}:{rest}", ""
    if target.startswith("/"):
        return target, ""
    if target.split("#", 1)[0].split("?", 1)[0].endswith(".md"):
        return "", "link to the guide's URL (/guides/<slug>/), not to its Markdown file"
    resolved = urljoin(page_path, target)
    if not resolved.startswith("/"):
        return "", "is neither a web address (https://...) nor a site path (/guides/...)"
    return resolved, ""


def is_safe_target(url: str) -> bool:
    """Return whether a link target is published as typed: http(s), site path or #anchor."""
    target, problem = classify_target(url)
    return not problem and target == url.strip()


@cache
def make_markdown() -> MarkdownIt:
    """Return the one configured parser: raw HTML off, tables on, links classified by us."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    # Every target reaches the token stream as typed; `_links` publishes or refuses each one.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    md.normalizeLink = lambda url: url  # type: ignore[method-assign]
    install_code_blocks(md)
    install_prose_blocks(md, container_plugin, footnote_plugin)
    return md


def render_markdown(
    text: str,
    resolve_link: Callable[[str], str] | None = None,
    ids: PageIds | None = None,
    *,
    page_path: str = "/",
    first_line: int = 1,
    resolve_image: Callable[[str], ContentImage | str] | None = None,
) -> Rendered:
    """Return the HTML of `text`, its `##` headings and its links.

    `resolve_link` rewrites site paths; heading ids are claimed from `ids` (the page's ids,
    so `## Sources` in prose cannot take the Sources section's id). `page_path` is the
    page's URL, for relative links; `first_line` is the file line of the text's first line.
    `resolve_image` finds the file an image names by a path (the guide's images); without it
    every image is a link.
    """
    md = make_markdown()
    env: dict[str, object] = {}
    tokens = md.parse(text, env)
    ids = ids if ids is not None else PageIds()
    links: list[ProseLink] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in _ANCHORED_LEVELS:
            token.attrSet("id", ids.claim(slugify(_plain_text(tokens[index + 1]))))
        if token.type == "inline" and token.children:
            line = first_line + (token.map[0] if token.map else 0)
            token.children = _links(
                token.children, line, page_path, resolve_link, links, resolve_image
            )
    claim_prose_ids(tokens, ids)
    links += prose_block_problems(text, tokens, env, first_line)
    headings = tuple(
        Heading(str(token.attrGet("id")), _plain_text(tokens[index + 1]))
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.tag == "h2"
    )
    return Rendered(md.renderer.render(tokens, md.options, env), headings, tuple(links))


def _links(
    children: list[Token],
    line: int,
    page_path: str,
    resolve_link: Callable[[str], str] | None,
    links: list[ProseLink],
    resolve_image: Callable[[str], ContentImage | str] | None = None,
) -> list[Token]:
    """Publish or refuse each link and image of one inline run; note raw link Markdown."""
    result: list[Token] = []
    refused = 0
    for child in children:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        if child.type == "text":
            for match in _RAW_LINK.finditer(child.content):
                problem = (
                    "is not a link: a target with spaces needs <angle brackets>, and brackets "
                    "and parentheses must pair up; to show it as text, put it in `backticks`"
                )
                links.append(ProseLink(line, match.group(), "", problem))
        if child.type == "link_close" and refused:
            refused -= 1
            continue
        if child.type not in ("link_open", "image"):
            result.append(child)
            continue
        typed = str(child.attrGet("src" if child.type == "image" else "href") or "")
        if child.type == "image" and resolve_image is not None and _names_a_file(typed):
            shown, src, problem = _local_image(child, typed, resolve_image)
            links.append(ProseLink(line, typed, src, problem))
            result.extend(shown)
            continue
        href, problem = classify_target(typed, page_path)
        if href.startswith("/") and resolve_link is not None:
            href = resolve_link(href)
        href = normalizeLink(href) if href else ""
        links.append(ProseLink(line, typed, href, problem))
        if child.type == "image":
            result.extend(_image_as_link(child, href))
        elif problem:
            refused += 1
        else:
            child.attrSet("href", href)
            result.append(child)
    return result


def _names_a_file(typed: str) -> bool:
    """Whether an image target is a path (to a file in content/), not a web address or #anchor."""
    target = re.sub(r"[\t\n\r]", "", typed).strip()
    return bool(target) and not target.startswith(("#", "//")) and not _SCHEME.match(target)


def _local_image(
    image: Token, typed: str, resolve_image: Callable[[str], ContentImage | str]
) -> tuple[list[Token], str, str]:
    """Draw an image file of content/ at its size, lazily: return its tokens, its published
    URL and "", or its alt text as plain text, "" and why it cannot be shown."""
    found = resolve_image(typed) if _plain_text(image).strip() else _NO_ALT
    if isinstance(found, str):
        return _image_as_link(image, ""), "", found
    src = normalizeLink(found.url)
    title = {"title": image.attrs["title"]} if "title" in image.attrs else {}
    size = {"width": str(found.width), "height": str(found.height)}
    image.attrs = {"src": src, "alt": "", **title, **size, "loading": "lazy", "decoding": "async"}
    return [image], src, ""


def _image_as_link(image: Token, href: str) -> list[Token]:
    """Turn a web image into a link to it, named by its alt text (plain text if refused).

    The site's Content-Security-Policy loads no image from another site, so an <img> would
    show broken; a link keeps the reference readable and reachable.
    """
    alt = "".join(
        part.content for part in image.children or () if part.type in ("text", "code_inline")
    )
    label = Token("text", "", 0, content=f"Image: {alt or href or 'refused'}")
    if not href:
        return [label]
    return [
        Token("link_open", "a", 1, attrs={"href": href, "class": "image-link"}),
        label,
        Token("link_close", "a", -1),
    ]
