"""Index the rendered guides for full-text search with Pagefind, at build time.

The only module that runs Pagefind (PyPI `pagefind[extended]`, whose binary ships in the
wheel). The rendered HTML pages are written to a private temporary folder, Pagefind's command
line indexes them (the folder lies beside the output, named for this process, so a run that
was killed leaves nothing the next run does not remove), and its bundle (index shards, WebAssembly, the search UI) comes back as
pages under /pagefind/, written atomically with the rest of the site. Pagefind reads only
what templates mark `data-pagefind-body` (the guide article), skips `data-pagefind-ignore`
(hashes, the contents list, charts) and takes the verdict from `data-pagefind-meta`.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from site_builder.errors import OutputError
from site_builder.models import Page
from site_builder.workdirs import work_folder

BUNDLE = "pagefind"
UNUSED = ("pagefind-component-ui.", "pagefind-modular-ui.", "pagefind-highlight.js")
"""Parts of the bundle no page loads; leaving them out keeps the site smaller."""
TIMEOUT_SECONDS = 600
PROMISED = ("pagefind-entry.json", "pagefind-ui.css", "pagefind-ui.js", "pagefind.js")
"""Bundle files with fixed names: pages may link them before the indexer has finished."""
_LAUNCH = """
import ctypes, ctypes.util, os, runpy, signal, sys
if sys.platform == "linux":
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when the starting thread ends
    if os.getppid() != int(sys.argv[1]):
        sys.exit("the builder is gone")
sys.argv[:2] = ["pagefind"]
runpy.run_module("pagefind", run_name="__main__", alter_sys=True)
"""
"""Runs Pagefind in the child: asks Linux to kill it when the thread that started it ends
(`prctl(PR_SET_PDEATHSIG, SIGKILL)`, kept across Pagefind's exec), so a builder killed with
SIGKILL leaves no indexer running. Set in the child itself, never in a `preexec_fn`: Python
code between fork and exec can deadlock on a lock another thread held (the preview starts
indexers while its checks run)."""


def promised_pages() -> list[Page]:
    """Return empty stand-ins for the bundle's fixed files, so links to them can be checked
    while Pagefind still runs (or when nothing is written); `SearchIndex.pages` makes sure
    the real bundle has each."""
    return [Page(f"{BUNDLE}/{name}", b"") for name in PROMISED]


class SearchIndex:
    """Pagefind indexing one site's pages in a child process while the builder goes on.

    Use it as a context manager: leaving the block kills an unfinished indexer and removes
    its temporary folder, whatever happened in between.
    """

    def __init__(
        self,
        pages: Sequence[Page],
        language: str,
        out_dir: Path,
        stopped: threading.Event | None = None,
    ) -> None:
        """Write the pages Pagefind reads and start it; `stopped` set (by another thread)
        while the pages are written ends the writing with an OutputError."""
        try:
            self._folder = work_folder(out_dir, "search")
        except OSError as error:
            raise OutputError(BUNDLE, f"search index failed: {error.strerror or error}") from None
        self._site = self._folder / "site"
        self._bundle = self._folder / BUNDLE
        self._process: subprocess.Popen[str] | None = None
        try:
            _write_indexed(pages, self._site, stopped or threading.Event())
            self._process = subprocess.Popen(
                _command(self._site, self._bundle, language),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as error:
            self.close()
            raise OutputError(BUNDLE, f"search index failed: {error.strerror or error}") from None

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pages(self) -> list[Page]:
        """Wait for the indexer; return its bundle as pages under /pagefind/."""
        if self._process is None:
            raise OutputError(BUNDLE, "search index failed: the indexer was stopped")
        try:
            stdout, stderr = self._process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.close()
            raise OutputError(BUNDLE, f"search index failed: over {TIMEOUT_SECONDS} s") from None
        if self._process.returncode != 0:
            lines = (stderr or stdout or "no output").strip().splitlines()
            message = lines[-1] if lines else f"exit code {self._process.returncode}"
            raise OutputError(BUNDLE, f"search index failed: {message}")
        missing = [name for name in PROMISED if not (self._bundle / name).is_file()]
        if missing:
            raise OutputError(BUNDLE, f"search index failed: the bundle has no {missing[0]}")
        try:
            return [
                Page(f"{BUNDLE}/{path.relative_to(self._bundle).as_posix()}", path.read_bytes())
                for path in sorted(self._bundle.rglob("*"))
                if path.is_file() and not path.name.startswith(UNUSED)
            ]
        except OSError as error:
            raise OutputError(BUNDLE, f"search index failed: {error.strerror or error}") from None

    def stop(self) -> None:
        """Kill the indexer (from another thread); `pages` then fails and `close` cleans up."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def close(self) -> None:
        """Stop the indexer if it still runs and remove its temporary folder."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.communicate()
        shutil.rmtree(self._folder, ignore_errors=True)


def _write_indexed(pages: Sequence[Page], site: Path, stopped: threading.Event) -> None:
    """Write the pages Pagefind reads under `site`: those with a `data-pagefind-body`, or
    every HTML page when none has one (Pagefind then indexes whole pages)."""
    html = [page for page in pages if page.path.endswith(".html")]
    marked = [page for page in html if b"data-pagefind-body" in page.content]
    for page in marked or html:
        if stopped.is_set():
            raise OSError(errno.ECANCELED, "stopped before the pages were written")
        target = site / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(page.content)


def _command(site: Path, bundle: Path, language: str) -> list[str]:
    """Return Pagefind's command line over `site`, writing its bundle to `bundle`."""
    launch = [sys.executable, "-c", _LAUNCH, str(os.getpid())]
    command = [*launch, "--site", str(site), "--output-path", str(bundle)]
    return [*command, "--force-language", language, "--silent"]
