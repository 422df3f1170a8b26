"""Rendered pages in the build cache: what each page declares, apart from its HTML.

A page is stored as two entries under the same key: `scan` (its prose links, its scan and its
overlap shingles: one JSON line, then the shingles' codes as they are) and `html` (its bytes).
A build that writes reads both; `--audit`, which writes nothing, reads the scans alone, so at
10,000 guides it neither reads nor holds a gigabyte of HTML. A page whose two entries do not
both read back is rendered again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial

from site_builder.cache import BuildCache
from site_builder.links import ProseLink, SiteLink
from site_builder.models import Page, PageScan, Shingles
from site_builder.workers import run_each

SCAN, HTML = "scan", "html"
"""The two kinds of entry a page is stored as."""


def reused_pages(
    cache: BuildCache | None,
    count: int,
    key: Callable[[int], str],
    render: Callable[[int], Page],
    scan: Callable[[int, Page], Page],
    jobs: int,
    *,
    html: bool = True,
    later: bool = False,
) -> list[Page]:
    """Return `[scan(i, render(i)) for i in range(count)]`: each from the cache when its
    entries for its key read back, the others rendered over `jobs` processes and stored.
    Without `html` the pages come back without their bytes (an audit needs only what they
    declare). With `later` (the preview, which shows a rebuild before checking it) a page
    rendered now is scanned and stored by `finished`."""

    def made(index: int) -> Page:
        page = render(index)
        return page if later else scan(index, page)

    if cache is None:
        pages = run_each(made, count, jobs)
        if later:
            return [replace(page, finish=partial(scan, index)) for index, page in enumerate(pages)]
        return pages if html else [replace(page, content=b"") for page in pages]
    keys = [key(index) for index in range(count)]
    found: dict[int, Page] = {}
    for index, entry in enumerate(keys):
        held = cache.recall(SCAN, entry)
        if held is not None:
            cache.keep(HTML, entry)
            found[index] = held  # type: ignore[assignment]
        elif (page := _read(cache, entry, html)) is not None:
            if html:
                cache.hold(SCAN, entry, page)
            found[index] = page
    missing = [index for index in range(count) if index not in found]

    def stored(position: int, page: Page) -> Page:
        index = missing[position]
        if later:
            return replace(page, finish=lambda made: stored_now(index, scan(index, made)))
        return stored_now(index, page)

    def stored_now(index: int, page: Page) -> Page:
        entry = keys[index]
        cache.write(SCAN, entry, lambda: dump_scan(page))
        cache.write(HTML, entry, page.content)
        cache.hold(SCAN, entry, page)
        return page if html else replace(page, content=b"")

    rendered = run_each(lambda position: made(missing[position]), len(missing), jobs, stored)
    found.update(zip(missing, rendered, strict=True))
    return [found[index] for index in range(count)]


def finished(pages: list[Page]) -> list[Page]:
    """Return the pages with what was left to do done (see `reused_pages`)."""
    return [page.finish(replace(page, finish=None)) if page.finish else page for page in pages]


def _read(cache: BuildCache, key: str, html: bool) -> Page | None:
    """Return the page stored under `key` (without its bytes unless `html`), or None."""
    data = cache.read(SCAN, key)
    if data is None:
        return None
    try:
        page = load_scan(data)
    except (ValueError, KeyError, TypeError):  # a damaged entry: render it again
        cache.misses += 1
        return None
    if not html:
        return page
    content = cache.read(HTML, key)
    return None if content is None else replace(page, content=content)


def dump_scan(page: Page) -> bytes:
    """Return what a rendered page declares: one JSON line (its path, links, scan and the byte
    lengths of its shingles), then the shingles' codes."""
    scan = asdict(page.scan) if page.scan else None
    if scan is not None:
        scan["ids"] = sorted(scan["ids"])
    shingles = page.shingles
    head = {
        "path": page.path,
        "links": [asdict(link) for link in page.links],
        "scan": scan,
        "shingles": [len(part) for part in shingles] if shingles else None,
    }
    return b"\n".join([json.dumps(head, ensure_ascii=False).encode("utf-8"), *(shingles or ())])


def load_scan(data: bytes) -> Page:
    """Return the page `dump_scan` wrote, without its bytes."""
    head_line, _, codes = data.partition(b"\n")
    head = json.loads(head_line)
    links = tuple(ProseLink(**link) for link in head["links"])
    raw = head["scan"]
    scan = None
    if raw is not None:
        raw.update(
            ids=frozenset(raw["ids"]),
            duplicate_ids=tuple(raw["duplicate_ids"]),
            link_problems=tuple(map(tuple, raw["link_problems"])),
            site_links=tuple(SiteLink._make(link) for link in raw["site_links"]),
        )
        scan = PageScan(**raw)
    shingles = None
    if head["shingles"] is not None:
        text_size, evidence_size = head["shingles"]
        if len(codes) != text_size + 1 + evidence_size:
            raise ValueError("the shingles are not their stated size")
        shingles = Shingles(codes[:text_size], codes[text_size + 1 :])
    return Page(head["path"], b"", links, scan, shingles)
