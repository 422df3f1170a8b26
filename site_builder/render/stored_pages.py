"""Rendered pages in the build cache: what each page declares, apart from its HTML.

A page is stored as two entries under the same key: `scan` (its prose links, its scan, its
overlap shingles and its bytes' sha256: one JSON line, then the shingles' codes as they are)
and `html` (its bytes alone, a file the site can link). A build that writes reads both (and,
`on_disk`, lets go of the bytes: the site links the file); `--audit`, which writes nothing,
reads the scans alone, so at 10,000 guides neither holds a gigabyte of HTML. A page whose two
entries do not both read back (the HTML checked against its sha256) is rendered again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.model.declared import PageScan, Shingles
from site_builder.model.links import ProseLink, SiteLink
from site_builder.model.models import Page
from site_builder.runtime.workdirs import work_folder
from site_builder.runtime.workers import run_each

SCAN, HTML = "scan", "html"
"""The two kinds of entry a page is stored as."""
SEARCH_PAGE = "search-page"
"""A third, for a guide page: what Pagefind reads of it, under that cut's own sha256."""


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
    on_disk: Path | None = None,
    around: Callable[[int], AbstractContextManager[object]] = lambda _: nullcontext(),
    reusable: Callable[[Page], bool] = lambda _: True,
) -> list[Page]:
    """Return `[scan(i, render(i)) for i in range(count)]`: each from the cache when its
    entries for its key read back, the others rendered over `jobs` processes and stored.
    Without `html` the pages come back without their bytes (an audit needs only what they
    declare); with `on_disk` (a folder of this build's, see `links_folder`), each with its
    bytes left in the cache's file and linked into that folder (`Page.stored`), not held.
    With `later` (the preview, which shows a rebuild before checking it) a page rendered now
    is scanned and stored by `finished`. Each page is rendered and scanned inside
    `around(i)` (a guide's `lending.lent`: a worker holds one guide's record at a time). A
    page the cache has is rendered again unless `reusable` (its `lookups` still hold)."""

    def made(index: int) -> Page:
        with around(index):
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
            if reusable(held):  # type: ignore[arg-type]
                cache.keep(HTML, entry)
                found[index] = held  # type: ignore[assignment]
        elif (page := _read(cache, entry, html, on_disk, reusable)) is not None:
            if html:
                cache.hold(SCAN, entry, page)
            found[index] = page
    missing = [index for index in range(count) if index not in found]
    # A build that writes a site stores each page where it is rendered (a worker process):
    # only what the page declares comes back, none of its bytes travel or stay here.
    by_worker = on_disk is not None and not later and cache.memory is None

    def made_and_stored(position: int) -> Page:
        index = missing[position]
        page = made(index)
        return _stored_here(cache, keys[index], page) if by_worker else page

    def stored(position: int, page: Page) -> Page:
        index = missing[position]
        if later:
            return replace(page, finish=lambda made: stored_now(index, scan(index, made)))
        if page.sha256 and not page.content:  # stored by `made_and_stored`
            return _linked(cache, keys[index], page, on_disk) or stored_now(index, made(index))
        return stored_now(index, page)

    def stored_now(index: int, page: Page) -> Page:
        entry = keys[index]
        sha256, stored = _written(cache, entry, page)
        # The entry has its cut; the next build that takes it from here took it from the cache.
        cache.hold(SCAN, entry, replace(page, search=b"", cached=True))
        if not html:
            return replace(page, content=b"")
        # Only the entry just written: an older one under this key may be damaged.
        return _left_on_disk(page, cache, entry, sha256, on_disk if stored else None)

    rendered = run_each(made_and_stored, len(missing), jobs, stored)
    found.update(zip(missing, rendered, strict=True))
    return [found[index] for index in range(count)]


def _written(cache: BuildCache, key: str, page: Page) -> tuple[str, bool]:
    """Write a page's two entries under `key`; return its bytes' sha256 and whether its HTML
    entry is on disk now."""
    sha256 = hashlib.sha256(page.content).hexdigest()
    cache.write(SCAN, key, lambda: dump_scan(page, sha256))
    if page.search:
        cache.write(SEARCH_PAGE, search_page_key(page.search_sha256), page.search)
    return sha256, cache.write(HTML, key, page.content, file=True)


def search_page_key(search_sha256: str) -> str:
    """Return the key of what Pagefind reads of a page, by that cut's sha256 (and the code
    that cut it)."""
    return digest(SEARCH_PAGE, code_digest(), search_sha256)


def search_page(cache: BuildCache | None, page: Page) -> bytes:
    """Return what Pagefind reads of a page: what rendering it left (`Page.search`, or its
    cache entry), else its bytes (Pagefind indexes them alike)."""
    if page.search:
        return page.search
    if cache is not None and page.search_sha256:
        cut = cache.read(SEARCH_PAGE, search_page_key(page.search_sha256))
        if cut is not None:
            return cut
    return page.read()


def _stored_here(cache: BuildCache, key: str, page: Page) -> Page:
    """Store a page just rendered under `key` and return it without its bytes (with their
    sha256), or as it is if its HTML entry could not be written."""
    sha256, stored = _written(cache, key, page)
    return replace(page, content=b"", search=b"", sha256=sha256) if stored else page


def _linked(cache: BuildCache, key: str, page: Page, folder: Path | None) -> Page | None:
    """Return a page `_stored_here` stored, linked into `folder`, or holding its bytes read
    back from its entry if it cannot be linked; None if that entry is gone."""
    cache.keep(SCAN, key)
    cache.keep(HTML, key)
    linked = _left_on_disk(page, cache, key, page.sha256, folder)
    if linked.stored is not None:
        return linked
    content = cache.read_file(HTML, key, page.sha256)
    return None if content is None else replace(page, content=content, sha256="")


def finished(pages: list[Page]) -> list[Page]:
    """Return the pages with what was left to do done (see `reused_pages`)."""
    return [page.finish(replace(page, finish=None)) if page.finish else page for page in pages]


def _read(
    cache: BuildCache,
    key: str,
    html: bool,
    on_disk: Path | None,
    reusable: Callable[[Page], bool],
) -> Page | None:
    """Return the page stored under `key` (without its bytes unless `html`; with them in
    the cache's file if `on_disk`), or None, also when it is not `reusable`."""
    data = cache.read(SCAN, key)
    if data is None:
        return None
    try:
        page, sha256 = load_scan(data)
    except (ValueError, KeyError, TypeError):  # a damaged entry: render it again
        cache.misses += 1
        return None
    if not reusable(page):
        return None
    if not html:  # an audit: the next build reads the HTML entry
        cache.keep(HTML, key)
        return page
    content = cache.read_file(HTML, key, sha256)
    if content is None:
        return None
    return _left_on_disk(replace(page, content=content), cache, key, sha256, on_disk)


def _left_on_disk(
    page: Page, cache: BuildCache, key: str, sha256: str, folder: Path | None
) -> Page:
    """Return the page without its bytes, which its cache entry holds, if that entry can be
    linked into `folder` (this build's: no other build's pruning can remove them there);
    else the page as it is."""
    if folder is None:
        return page
    held = folder / sha256
    try:
        os.link(cache.file(HTML, key), held)
    except FileExistsError:
        pass  # another page of the same bytes
    except OSError:  # another file system, or the entry was just removed
        return page
    return replace(page, content=b"", stored=held, sha256=sha256)


def dump_scan(page: Page, sha256: str) -> bytes:
    """Return what a rendered page declares: one JSON line (its path, links, scan, the byte
    lengths of its shingles and `sha256`, its bytes' digest), then the shingles' codes."""
    scan = asdict(page.scan) if page.scan else None
    if scan is not None:
        scan["ids"] = sorted(scan["ids"])
    shingles = page.shingles
    head = {
        "path": page.path,
        "links": [asdict(link) for link in page.links],
        "scan": scan,
        "shingles": [len(part) for part in shingles] if shingles else None,
        "sha256": sha256,
        "search": page.search_sha256,
        "lookups": page.lookups,
    }
    return b"\n".join([json.dumps(head, ensure_ascii=False).encode("utf-8"), *(shingles or ())])


def load_scan(data: bytes) -> tuple[Page, str]:
    """Return the page `dump_scan` wrote, without its bytes, and its bytes' sha256."""
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
    lookups = tuple((str(key), built is True) for key, built in head["lookups"])
    search = str(head["search"])
    page = Page(
        head["path"], b"", links, scan, shingles, lookups=lookups, search_sha256=search, cached=True
    )
    return page, head["sha256"]


@contextmanager
def links_folder(out_dir: Path, cache: BuildCache) -> Iterator[Path | None]:
    """Yield a folder of this build's for links to the cached pages it writes (`on_disk`), so
    it holds none of their bytes (a 10,000-guide site's pages are a gigabyte) and no other
    build's pruning can remove them; removed on exit. None (the pages are held in memory)
    with the preview's memory cache, or if the folder cannot be made."""
    if cache.memory is not None:
        yield None
        return
    try:
        folder = work_folder(out_dir.resolve(), "pages")
    except OSError:
        yield None
        return
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def settled(pages: Sequence[Page], out_dir: Path, written: bool) -> tuple[Page, ...]:
    """Return the pages with the bytes of those in a folder of links where they stay: in
    the site written to `out_dir`, or else back in memory."""
    root = out_dir.resolve()
    return tuple(_settled(page, root, written) for page in pages)


def _settled(page: Page, root: Path, written: bool) -> Page:
    if page.stored is None:
        return page
    if written:
        return replace(page, stored=root / page.path)
    return replace(page, content=page.read(), stored=None, sha256="")


def put(page: Page, target: Path) -> None:
    """Write a page's bytes to `target` (a new file): a link to its `stored` file if it has
    one (far cheaper than a new file), else (or if linking fails) its bytes."""
    if page.stored is not None:
        try:
            os.link(page.stored, target, follow_symlinks=False)
            return
        except OSError:
            pass
    target.write_bytes(page.read())
