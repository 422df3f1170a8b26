"""Index the rendered guides for full-text search with Pagefind, at build time.

The only module that runs Pagefind (PyPI `pagefind[extended]`, whose binary ships in the
wheel). The rendered HTML pages are written to a private temporary folder, Pagefind's command
line indexes them, and its bundle (index shards, WebAssembly, the search UI) comes back as
pages under /pagefind/, written atomically with the rest of the site. Pagefind reads only
what templates mark `data-pagefind-body` (the guide article), skips `data-pagefind-ignore`
(hashes, the contents list, charts) and takes the verdict from `data-pagefind-meta`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from site_builder.errors import OutputError
from site_builder.models import Page

BUNDLE = "pagefind"
UNUSED = ("pagefind-component-ui.", "pagefind-modular-ui.", "pagefind-highlight.js")
"""Parts of the bundle no page loads; leaving them out keeps the site smaller."""
TIMEOUT_SECONDS = 600


def search_pages(pages: Sequence[Page], language: str) -> list[Page]:
    """Return the Pagefind bundle for the HTML pages, as pages under /pagefind/."""
    try:
        return _index(pages, language)
    except OSError as error:
        raise OutputError(BUNDLE, f"search index failed: {error.strerror or error}") from None


def _index(pages: Sequence[Page], language: str) -> list[Page]:
    """Write the HTML pages to a temporary folder, index them, read the bundle back."""
    with tempfile.TemporaryDirectory(prefix="glm52-search-") as folder:
        site, bundle = Path(folder) / "site", Path(folder) / BUNDLE
        for page in pages:
            if page.path.endswith(".html"):
                target = site / page.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(page.content)
        _run_pagefind(site, bundle, language)
        return [
            Page(f"{BUNDLE}/{path.relative_to(bundle).as_posix()}", path.read_bytes())
            for path in sorted(bundle.rglob("*"))
            if path.is_file() and not path.name.startswith(UNUSED)
        ]


def _run_pagefind(site: Path, bundle: Path, language: str) -> None:
    """Run Pagefind's command line over `site`, writing its bundle to `bundle`."""
    command = [sys.executable, "-m", "pagefind", "--site", str(site), "--output-path", str(bundle)]
    command += ["--force-language", language, "--silent"]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise OutputError(BUNDLE, f"search index failed: {error}") from None
    if done.returncode != 0 or not (bundle / "pagefind.js").is_file():
        lines = (done.stderr or done.stdout or "no output").strip().splitlines()
        message = lines[-1] if lines else f"exit code {done.returncode}"
        raise OutputError(BUNDLE, f"search index failed: {message}")
