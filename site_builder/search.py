"""Index the rendered guides for full-text search with Pagefind, in memory, at build time.

The only module that imports pagefind. Pagefind reads only the parts of a page marked
`data-pagefind-body` (the guide article), takes the verdict from `data-pagefind-meta`, and
returns its bundle (index shards, WebAssembly, the search UI) as files, which become pages
under /pagefind/ and are written atomically with the rest of the site.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from pagefind.index import IndexConfig
from pagefind.service import PagefindService

from site_builder.errors import OutputError
from site_builder.models import Page

BUNDLE = "pagefind"
UNUSED = ("pagefind-component-ui.", "pagefind-modular-ui.", "pagefind-highlight.js")
"""Parts of the bundle no page loads; leaving them out keeps the site smaller."""
EXCLUDED = ("code.hash", ".toc", ".verified-note", "figure.chart svg")
"""Inside a guide, what search should not match: hashes, the contents list, chart drawings."""


def search_pages(pages: Sequence[Page], language: str) -> list[Page]:
    """Return the Pagefind bundle for the HTML pages, as pages under /pagefind/."""
    html = [page for page in pages if page.path.endswith(".html")]
    try:
        # A thread of its own, so a build also works where an event loop is already running.
        with ThreadPoolExecutor(max_workers=1) as pool:
            files = pool.submit(asyncio.run, _index(html, language)).result()
    except Exception as error:
        raise OutputError(BUNDLE, f"search index failed: {error}") from None
    return sorted(
        (
            Page(f"{BUNDLE}/{path}", content)
            for path, content in files
            if not path.startswith(UNUSED)
        ),
        key=lambda page: page.path,
    )


async def _index(pages: Sequence[Page], language: str) -> list[tuple[str, bytes]]:
    """Run Pagefind's indexing service over the pages and return its files.

    The service is used directly: `PagefindIndex` as a context manager would also write
    the bundle into the working directory on exit.
    """
    config = IndexConfig(force_language=language, exclude_selectors=list(EXCLUDED))
    async with PagefindService() as service:
        index = await service.create_index(config)
        for page in pages:
            await index.add_html_file(content=page.content.decode("utf-8"), source_path=page.path)
        files = await index.get_files()
    return [(file["path"], file["content"]) for file in files]
