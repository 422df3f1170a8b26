"""Which shard of the search index each page goes to (`search` runs Pagefind over each).

Pagefind cannot add a page to an index: it indexes every page it is given again, about 8 ms
a data-heavy guide page. So a site of more than `shard_pages` pages (the site's
`search_shard_pages`, SHARD_PAGES by default) is indexed in shards, and a build after an edit
indexes only the shards whose pages changed. A page's shard is picked by a hash of its path,
so it stays there from one build to the next while the number of shards stays the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from site_builder.model.models import Page
from site_builder.runtime.workers import available_memory, cores

SHARD_PAGES = 100
"""Pages a shard of the index holds, by default (the site's `search_shard_pages`): Pagefind
indexes 100 guide pages in about 0.75 s, so a one-change build at 1,000 guides takes under 2 s."""
MAX_SHARDS = 10
"""Shards a site is split into at most: a search fetches every shard's index (the search page
merges them all at once), and on a reader's slow network each shard costs time: at 1,000
guides, 100 ms a round trip and 10 Mbit/s, the first result came in 1.74 s with four shards,
2.22 s with ten and 2.73 s with twenty (docs/site.md)..."""
MOST_PAGES = 1000
"""...unless a shard would then hold more pages than this (Pagefind's memory: about 1 GB)."""
PAGE_MEMORY = 1 << 20
"""What Pagefind holds of a guide page until it writes its bundle: about 1 MB (docs/site.md)."""


def sharded(pages: Sequence[Page], shard_pages: int) -> dict[int, list[Page]]:
    """Return the pages Pagefind reads by shard, in path order, shards in order (the first is
    the primary bundle; only shards with pages, or shard 0 alone and empty): the pages with a
    `data-pagefind-body`, or every HTML page when none has one (Pagefind then indexes whole
    pages)."""
    html = [page for page in pages if page.path.endswith(".html")]
    indexed = [page for page in html if marked(page)] or html
    count = shard_count(len(indexed), shard_pages)
    shards: dict[int, list[Page]] = {}
    for page in sorted(indexed, key=lambda page: page.path):
        shards.setdefault(_shard(page.path, count), []).append(page)
    return dict(sorted(shards.items())) or {0: []}  # nothing to index: Pagefind says so


def marked(page: Page) -> bool:
    """Whether a page marks what Pagefind indexes of it (a `data-pagefind-body`): once one
    page of a site does, only such pages are indexed (`sharded`)."""
    return page.path.endswith(".html") and b"data-pagefind-body" in page.read()


def shard_count(pages: int, shard_pages: int) -> int:
    """Return how many shards `pages` indexed pages go to: one per `shard_pages`, at most
    MAX_SHARDS, but never more than MOST_PAGES in one."""
    wanted = min(MAX_SHARDS, -(-pages // max(1, shard_pages)))
    return max(1, wanted, -(-pages // MOST_PAGES))


def runs_at_once(sizes: Sequence[int]) -> int:
    """Return how many Pagefind runs index shards of these sizes at once: one a core, while
    what they hold together (PAGE_MEMORY a page) fits in half the memory the machine has
    available; where it does not say, while they hold MOST_PAGES pages together."""
    largest = max(1, max(sizes, default=1))
    available = available_memory()
    room = MOST_PAGES * PAGE_MEMORY if available is None else available // 2
    return max(1, min(len(sizes), cores(), room // (largest * PAGE_MEMORY)))


def _shard(path: str, count: int) -> int:
    """Return the shard a page's path belongs to (the same in every build of `count` shards)."""
    if count == 1:
        return 0
    return (
        int.from_bytes(hashlib.blake2b(path.encode("utf-8"), digest_size=8).digest(), "big") % count
    )
