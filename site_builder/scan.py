"""Read back what the rendered pages say: canonical, og:url, links, element ids, visible text.

One pass of the standard library's HTML parser per page; the checks work on these scans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser

from site_builder.models import Page

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
_INVISIBLE = {"script", "style", "template", "head", "title"}


@dataclass(frozen=True)
class PageScan:
    """What one built HTML page declares and links to."""

    path: str
    key: str
    canonical: str
    og_url: str
    noindex: bool
    links: tuple[str, ...]
    ids: frozenset[str]
    duplicate_ids: tuple[str, ...]
    text: str


class _Scanner(HTMLParser):
    """Collect the facts of one page while it is parsed."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.canonical = ""
        self.og_url = ""
        self.noindex = False
        self.links: list[str] = []
        self.ids: list[str] = []
        self.text: list[str] = []
        self._main_depth = 0
        self._hidden_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values:
            self.ids.append(values["id"])
        attribute = _LINK_ATTRIBUTES.get(tag)
        if attribute and attribute in values:
            if tag == "link" and values.get("rel") == "canonical":
                self.canonical = values["href"]
            else:
                self.links.append(values[attribute])
        if tag == "meta":
            if values.get("property") == "og:url":
                self.og_url = values.get("content", "")
            if values.get("name") == "robots" and "noindex" in values.get("content", ""):
                self.noindex = True
        if tag == "main":
            self._main_depth += 1
        if tag in _INVISIBLE:
            self._hidden_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "main":
            self._main_depth = max(0, self._main_depth - 1)
        if tag in _INVISIBLE:
            self._hidden_depth = max(0, self._hidden_depth - 1)

    def handle_data(self, data: str) -> None:
        if self._main_depth and not self._hidden_depth:
            self.text.append(data)


def page_key_of_path(path: str) -> str:
    """Return the URL key of an output file: `guides/x/index.html` -> `/guides/x/`."""
    if path == "index.html":
        return "/"
    if path.endswith("/index.html"):
        return "/" + path[: -len("index.html")]
    return "/" + path


def scan_pages(pages: Iterable[Page]) -> list[PageScan]:
    """Scan every HTML page, in path order."""
    scans = []
    for page in sorted(pages, key=lambda page: page.path):
        if not page.path.endswith(".html"):
            continue
        scanner = _Scanner()
        scanner.feed(page.content.decode("utf-8"))
        scanner.close()
        counts = Counter(scanner.ids)
        scans.append(
            PageScan(
                path=page.path,
                key=page_key_of_path(page.path),
                canonical=scanner.canonical,
                og_url=scanner.og_url,
                noindex=scanner.noindex,
                links=tuple(scanner.links),
                ids=frozenset(counts),
                duplicate_ids=tuple(sorted(i for i, n in counts.items() if n > 1)),
                text=" ".join(" ".join(scanner.text).split()),
            )
        )
    return scans
