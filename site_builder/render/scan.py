"""Read back what the rendered pages say: canonical, og:url, links, element ids, visible text.

One pass of lexbor's HTML5 parser (selectolax, about ten times faster than the standard
library's `html.parser` on these pages, with identical scans) per page; the checks work on
these scans. A guide page's visible text is turned into the shingles the overlap audit
compares where the page is rendered, and not kept. The same pass cuts the page Pagefind
reads from it (`Page.search`). The only module that imports selectolax.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from html import escape

from selectolax.lexbor import LexborHTMLParser, LexborNode

from site_builder.model.declared import PageScan, Shingles
from site_builder.model.links import judged_links
from site_builder.model.models import Guide, Page
from site_builder.render.search_cut import INLINE, KEPT, flattened
from site_builder.render.words import evidence_text, gram_codes

_LINK_ATTRIBUTES = {
    "a": "href",
    "link": "href",
    "area": "href",
    "img": "src",
    "script": "src",
    "iframe": "src",
    "source": "src",
    "form": "action",
}
_LINKING = ", ".join(f"{tag}[{attribute}]" for tag, attribute in _LINK_ATTRIBUTES.items())
_INVISIBLE = {"script", "style", "template", "head", "title"}
_SEARCHED, _UNSEARCHED = "[data-pagefind-body]", "[data-pagefind-ignore]"
_INLINE = "a, abbr, b, code, em, i, small, span, strong, time"
_INERT = frozenset({"class", "title", "aria-hidden", "datetime", "href", "rel"})
"""Attributes Pagefind does not read: an inline element holding no others is only its text
to it (an `id` is an anchor, a `data-pagefind-*` attribute is read)."""


def _scan(
    html: bytes,
) -> tuple[str, str, bool, list[str], list[str], str, LexborHTMLParser]:
    """Return (canonical, og:url, noindex, links, ids, visible text of <main>, the tree) of
    one page; the tree has lost its <main>'s scripts and styles.

    Lexbor's selectors find the elements (in document order), not a walk over every node."""
    tree = LexborHTMLParser(html)
    canonical = og_url = ""
    noindex = False
    ids = [node.attributes["id"] or "" for node in tree.css("[id]")]
    links: list[str] = []
    for node in tree.css(_LINKING):
        attributes = node.attributes
        value = attributes[_LINK_ATTRIBUTES[node.tag]] or ""
        if node.tag == "link" and attributes.get("rel") == "canonical":
            canonical = value
        else:
            links.append(value)
    for node in tree.css("meta"):
        attributes = node.attributes
        if attributes.get("property") == "og:url":
            og_url = attributes.get("content") or ""
        if attributes.get("name") == "robots" and "noindex" in (attributes.get("content") or ""):
            noindex = True
    main = tree.css_first("main")
    text = ""
    if main is not None:
        for hidden in main.css(", ".join(sorted(_INVISIBLE))):
            hidden.decompose()
        text = main.text(separator=" ")
    return canonical, og_url, noindex, links, ids, text, tree


def _search_page(tree: LexborHTMLParser) -> bytes:
    """Return the page Pagefind reads of a guide's page: its `data-pagefind-body` element
    without what Pagefind ignores in it (the contents list, charts, hashes: half the page's
    bytes) and without the tags of inline elements it reads nothing of (table cells' spans),
    under the page's language and title; b"" if the page has no such element.

    Pagefind reads nothing else of a page that has one, so its index of this page is the
    index of the whole page (tested), made with about 17% fewer instructions; `search_cut`
    then flattens the tables and text-only blocks, which Pagefind reads the same (about a
    fifth less time)."""
    body = tree.css_first(_SEARCHED)
    if body is None:
        return b""
    for ignored in reversed(body.css(_UNSEARCHED)):  # the innermost first
        ignored.decompose()
    for inline in body.css(_INLINE):
        if _INERT.issuperset(inline.attributes):
            inline.unwrap()  # its text stays: 5% fewer instructions for Pagefind
    for anchor in body.css("[id]"):
        _keep_children(anchor)
    root = tree.root
    language = escape((root.attributes.get("lang") or "") if root is not None else "")
    title = tree.css_first("title")
    heading = escape(title.text() if title is not None else "")
    head = f'<!DOCTYPE html><html lang="{language}"><head><meta charset="utf-8">'
    searched = flattened(body.html or "")
    page = f"{head}<title>{heading}</title></head><body>{searched}</body></html>\n"
    return page.encode("utf-8")


def _keep_children(anchor: LexborNode) -> None:
    """Mark KEPT each element whose text Pagefind adds to the anchor's (see `search_cut`):
    its children but inline ones, whose own children are looked at instead."""
    child = anchor.child
    while child is not None:
        if child.tag in INLINE:
            _keep_children(child)
        elif child.is_element_node:
            child.attrs[KEPT] = ""
        child = child.next


def page_key_of_path(path: str) -> str:
    """Return the URL key of an output file: `guides/x/index.html` -> `/guides/x/`."""
    if path == "index.html":
        return "/"
    if path.endswith("/index.html"):
        return "/" + path[: -len("index.html")]
    return "/" + path


def scan_pages(pages: Iterable[Page], base_url: str) -> list[PageScan]:
    """Scan every HTML page, in path order (reusing the scan made while rendering it)."""
    return [
        page.scan or scan_page(page, base_url)
        for page in sorted(pages, key=lambda page: page.path)
        if page.path.endswith(".html")
    ]


def scan_page(page: Page, base_url: str) -> PageScan:
    """Scan one HTML page of the site at `base_url`."""
    return scan_with_text(page, base_url)[0]


def scanned_page(page: Page, base_url: str) -> Page:
    """Return the page with its scan (kept with it, in the preview's memory and the cache)."""
    return replace(page, scan=scan_page(page, base_url))


def scanned_guide_page(page: Page, guide: Guide, base_url: str) -> Page:
    """Return a guide's page with its scan and the shingles the overlap audit compares: of
    the page's visible text and of the record's published values."""
    scan, text, tree = _scanned(page, base_url)
    shingles = Shingles(gram_codes(text), gram_codes(evidence_text(guide.evidence)))
    search = _search_page(tree)
    digest = hashlib.sha256(search).hexdigest() if search else ""
    return replace(page, scan=scan, shingles=shingles, search=search, search_sha256=digest)


def scan_with_text(page: Page, base_url: str) -> tuple[PageScan, str]:
    """Scan one HTML page; also return the visible text of its `<main>`, spaces collapsed."""
    scan, text, _ = _scanned(page, base_url)
    return scan, " ".join(text.split())


def _scanned(page: Page, base_url: str) -> tuple[PageScan, str, LexborHTMLParser]:
    """Return the page's scan, the visible text of its `<main>` (spaces as they are: the
    3-gram codes split at any run of them) and its tree."""
    canonical, og_url, noindex, links, ids, text, tree = _scan(page.content)
    counts = Counter(ids)
    key = page_key_of_path(page.path)
    problems, site_links = judged_links(links, key, frozenset(counts), base_url)
    scan = PageScan(
        path=page.path,
        key=key,
        canonical=canonical,
        og_url=og_url,
        noindex=noindex,
        ids=frozenset(counts),
        duplicate_ids=tuple(sorted(i for i, n in counts.items() if n > 1)),
        link_problems=problems,
        site_links=site_links,
    )
    return scan, text, tree
