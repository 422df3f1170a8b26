"""Index the rendered guides for full-text search with Pagefind, at build time.

The only module that runs Pagefind (PyPI `pagefind[extended]`, whose binary ships in the
wheel). The rendered HTML pages are written to a private temporary folder, Pagefind's command
line indexes them (the folder is in memory, `/dev/shm`, where there is room, else beside the
output; named for this process, so a run that was killed leaves nothing the next run does not
remove: `workdirs.search_folder`), and its bundle (index chunks,
WebAssembly, the search UI) comes back as pages under /pagefind/, written atomically with the
rest of the site (each shard's as soon as its run ends, while the others are indexed). Pagefind reads only what templates mark `data-pagefind-body` (the guide
article), skips `data-pagefind-ignore` (hashes, the contents list, charts) and takes the
verdict from `data-pagefind-meta`.

A site of many pages is indexed in shards (`shards` picks each page's), one Pagefind run each,
as many at once as `shards.runs_at_once` allows: the first shard's bundle is /pagefind/ and
the others' are /pagefind/shards/N/ (their index alone: the reader's browser searches them
with the first one's WebAssembly), listed in /pagefind/shards.json for the search page to
merge (Pagefind's `mergeIndex`). With a build cache, a shard whose pages did not change is
not indexed again: its bundle is read back from the cache (one entry listing its files, one
entry a file, by content) into memory, never written to the indexer's folder.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path

from pagefind_bin_extended import get_executable

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.output.shard_cache import HeldBundles, cached_bundle, indexer_version, store
from site_builder.output.shards import SHARD_PAGES, runs_at_once, sharded
from site_builder.render.stored_pages import SEARCH_PAGE, search_page, search_page_key
from site_builder.runtime.workdirs import search_folder

BUNDLE = "pagefind"
UNUSED = ("pagefind-component-ui.", "pagefind-modular-ui.", "pagefind-highlight.js")
"""Parts of the bundle no page loads; leaving them out keeps the site smaller."""
PAGE_SCRATCH = 256 << 10
"""Room the indexer's work takes a page, at most: its cut (about 26 KB a guide page) and its
part of the bundle (about 15 KB), with a margin."""
TIMEOUT_SECONDS = 600
IDLE_WAIT_SECONDS = 60.0
"""The longest a stopped index waits for `idle` before removing its folder anyway."""
PROMISED = ("pagefind-entry.json", "pagefind-ui.css", "pagefind-ui.js", "pagefind.js")
"""Bundle files with fixed names: pages may link them before the indexer has finished."""
SHARDS = "shards"
"""Where the other shards' bundles go, under /pagefind/."""
SHARD_LIST = "shards.json"
"""The other shards' bundle paths, for the search page to merge (`[]` for one shard)."""
_SHARD_PARTS = ("pagefind-entry.json", "index/", "fragment/", "filter/")
"""What a merged shard's bundle needs (and its `.pf_meta`): no UI, no WebAssembly."""
_LAUNCH = """
import ctypes, ctypes.util, os, shutil, signal, subprocess, sys, time
linux = sys.platform == "linux"
if linux:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
def die_with_parent():
    if linux:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
die_with_parent()
if linux and os.getppid() != int(sys.argv[1]):
    sys.exit("the builder is gone")
indexer, language, at_once, folders = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
waiting, running = list(zip(folders[::2], folders[1::2])), []
while waiting or running:
    while waiting and len(running) < at_once:
        site, bundle = waiting.pop(0)
        command = [indexer, "--site", site, "--output-path", bundle]
        command += ["--force-language", language, "--silent"]
        pipe = subprocess.PIPE
        running.append((subprocess.Popen(command, preexec_fn=die_with_parent, text=True,
                                         stdout=pipe, stderr=pipe), site, bundle))  # --silent
    if len(running) == 1:
        running[0][0].wait()
    else:
        time.sleep(0.02)
    for run, site, bundle in [done for done in running if done[0].poll() is not None]:
        running.remove((run, site, bundle))
        out, error = run.communicate()
        if run.returncode != 0:
            sys.stderr.write(error or out)
            sys.exit(run.returncode)
        print(bundle, flush=True)  # the builder takes this shard's bundle now
        shutil.rmtree(site, ignore_errors=True)
"""
"""Runs Pagefind over each shard, `at_once` runs at a time (the first failure ends them all),
printing each bundle's folder as its run ends (and removing the pages it read). In the
child: asks Linux to kill it when the thread that started it ends
(`prctl(PR_SET_PDEATHSIG, SIGKILL)`), and each Pagefind run when it ends, so a builder killed
with SIGKILL leaves no indexer running. Set in the child itself, never in the builder's
`preexec_fn`: Python code between fork and exec can deadlock on a lock another thread held
(the preview starts indexers while its checks run); the child has no other threads."""


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
        shard_pages: int = SHARD_PAGES,
        cache: BuildCache | None = None,
        held: HeldBundles | None = None,
        idle: threading.Event | None = None,
    ) -> None:
        """Write the pages Pagefind reads, in shards of at most about `shard_pages`, and start
        indexing those neither `held` (the last bundles, in memory) nor `cache` has a bundle
        for; `stopped` set (by another thread) while the pages are written ends the writing
        with an OutputError. Once `stopped`, the index removes its folder only when `idle` is
        set (the preview's: no rebuild is rendering), so the removal of thousands of files
        does not slow the rebuild that stopped it."""
        self._process: subprocess.Popen[str] | None = None
        try:
            self._folder = search_folder(out_dir, len(pages) * PAGE_SCRATCH)
        except OSError as error:
            message = f"search index failed: {error.strerror or error}"
            raise OutputError(BUNDLE, f"{message} (making its folder beside {out_dir})") from None
        self._cache, self._held = cache, held
        self._stopped, self._idle = stopped, idle
        self._contents = [page.content for page in pages]
        try:
            indexer = indexer_version()
            self._bundles: dict[Path, str] = {}  # each shard's bundle folder, and its key
            self._in_memory: dict[Path, dict[str, bytes]] = {}
            self._entries: dict[Path, dict[str, Path]] = {}  # the cache's file of each file
            self._new: list[tuple[str, Path, Path]] = []  # (cache key, site, bundle) to index
            stop = stopped or threading.Event()
            sizes: list[int] = []  # the pages of each shard to index
            for shard, listed in sharded(pages, shard_pages).items():
                bundle = self._folder / f"{BUNDLE}-{shard}"
                identities = (f"{page.path} {self._identity(page)}" for page in listed)
                key = digest(indexer, language, code_digest(), *identities)
                self._bundles[bundle] = key
                if stop.is_set():
                    raise OSError(errno.ECANCELED, "stopped before the pages were written")
                files = held.bundles.get(key) if held is not None else None
                if files is None and (cached := cached_bundle(cache, key)) is not None:
                    files, self._entries[bundle] = cached
                if cache is not None:  # each page's cut stays for the next build's shard
                    for page in listed:
                        if page.search_sha256:
                            cache.keep(SEARCH_PAGE, search_page_key(page.search_sha256))
                if files is None:
                    site = self._folder / f"site-{shard}"
                    read = map(partial(search_page, cache), listed)
                    _write_site(listed, read, site, stop)
                    self._new.append((key, site, bundle))
                    sizes.append(len(listed))
                    continue
                self._in_memory[bundle] = _usable(files)
                if held is not None:  # at once: a newer rebuild may stop this index
                    held.bundles[key] = self._in_memory[bundle]
            if self._new:
                sites, bundles = [site for _, site, _ in self._new], [b for *_, b in self._new]
                self._process = subprocess.Popen(
                    _command(sites, bundles, language, runs_at_once(sizes)),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
        except OSError as error:
            self.close()
            raise OutputError(BUNDLE, f"search index failed: {error.strerror or error}") from None
        except BaseException:  # Ctrl-C or SIGTERM: nothing owns the folder yet
            self.close()
            raise

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pages(self, take: Callable[[list[Page]], None] | None = None) -> list[Page]:
        """Wait for the indexer; return its bundle as pages under /pagefind/. With `take`,
        hand it each shard's pages as soon as that shard is indexed (the shard list last), so
        the builder writes them while the other shards are indexed."""
        order = list(self._bundles)
        keys = {bundle: key for key, _, bundle in self._new}
        bundles: dict[Path, dict[str, bytes]] = {}
        files: list[Page] = []

        def add(bundle: Path, found: dict[str, bytes]) -> None:
            number = order.index(bundle)
            missing = [name for name in PROMISED if name not in found] if number == 0 else []
            if missing:
                raise OutputError(BUNDLE, f"search index failed: the bundle has no {missing[0]}")
            bundles[bundle] = found
            shard = _shard_pages(number, found, self._entries.get(bundle, {}))
            files.extend(shard)
            if take is not None:
                take(shard)

        for bundle in order:
            if bundle in self._in_memory:
                add(bundle, self._in_memory[bundle])
        for bundle in self._finished():
            try:
                found = _bundle_files(bundle)
            except OSError as error:
                message = f"search index failed: {error.strerror or error}"
                raise OutputError(BUNDLE, message) from None
            self._entries[bundle] = store(self._cache, keys[bundle], found)
            add(bundle, found)
            shutil.rmtree(bundle, ignore_errors=True)  # now while the other shards are indexed
        if self._held is not None:
            held = {self._bundles[bundle]: bundles[bundle] for bundle in order}
            self._held.keep(held, self._contents)
        merged = [f"/{BUNDLE}/{SHARDS}/{number}/" for number in range(1, len(order))]
        listing = [Page(f"{BUNDLE}/{SHARD_LIST}", json.dumps(merged).encode("utf-8"))]
        if take is not None:
            take(listing)
        return sorted([*files, *listing], key=lambda p: p.path)

    def _identity(self, page: Page) -> str:
        """Return, with its path, a page's part of its shard's cache key: the sha256 of what
        Pagefind reads of it (a change elsewhere on the page, such as a new related guide,
        indexes nothing again), else of its bytes (remembered by `held` for the same bytes
        object)."""
        if page.search_sha256:
            return f"cut {page.search_sha256}"
        if page.stored is not None:
            return f"page {page.sha256}"
        if self._held is None:
            return f"page {_sha256(page.content)}"
        return f"page {self._held.identity(page.content, _sha256)}"

    def _finished(self) -> Iterator[Path]:
        """Yield the bundle folder of each shard indexed now, as its run ends; fail with what
        the indexer said if it fails, was stopped, or runs over TIMEOUT_SECONDS."""
        if not self._new:
            return
        process = self._process
        if process is None or process.stdout is None:
            raise OutputError(BUNDLE, "search index failed: the indexer was stopped")
        deadline = time.monotonic() + TIMEOUT_SECONDS
        pending = {bundle for *_, bundle in self._new}
        for line in _lines(process.stdout.fileno(), deadline):
            bundle = Path(line)
            if bundle in pending:  # each once, and only a folder of this index
                pending.discard(bundle)
                yield bundle
        try:
            _, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.close()
            raise OutputError(BUNDLE, f"search index failed: over {TIMEOUT_SECONDS} s") from None
        if process.returncode != 0 or pending:
            lines = (stderr or "no output").strip().splitlines()
            message = lines[-1] if lines else f"exit code {process.returncode}"
            raise OutputError(BUNDLE, f"search index failed: {message}")

    def stop(self) -> None:
        """Kill the indexer (from another thread); `pages` then fails and `close` cleans up."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def close(self) -> None:
        """Stop the indexer if it still runs and remove its temporary folder."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.communicate()
        if self._stopped is not None and self._stopped.is_set() and self._idle is not None:
            self._idle.wait(IDLE_WAIT_SECONDS)
        shutil.rmtree(self._folder, ignore_errors=True)


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _lines(stream: int, deadline: float) -> Iterator[str]:
    """Yield each line read from a pipe until it ends, or until `deadline` (`time.monotonic`)."""
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                return  # over time: the caller's wait says so
            chunk = os.read(stream, 65536)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            yield from (line.decode("utf-8", "replace") for line in lines)


def _shard_pages(number: int, files: dict[str, bytes], entries: dict[str, Path]) -> list[Page]:
    """Return one shard's bundle files as pages (each linkable to its cache entry, if it has
    one): the first shard's under /pagefind/, each other's index alone under
    /pagefind/shards/N/."""
    prefix = BUNDLE if number == 0 else f"{BUNDLE}/{SHARDS}/{number}"
    return [
        Page(f"{prefix}/{name}", data, linkable=entries.get(name))
        for name, data in files.items()
        if number == 0 or _merged_part(name)
    ]


def _write_site(
    pages: Sequence[Page], read: Iterable[bytes], site: Path, stopped: threading.Event
) -> None:
    """Write what Pagefind reads of one shard's pages under `site`, at the pages' paths;
    `stopped` ends the writing."""
    site.mkdir()
    for page, content in zip(pages, read, strict=True):
        if stopped.is_set():
            raise OSError(errno.ECANCELED, "stopped before the pages were written")
        target = site / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def _merged_part(name: str) -> bool:
    """Whether a file of a merged shard's bundle is needed (by its path in the bundle)."""
    return name.startswith(_SHARD_PARTS) or name.endswith(".pf_meta")


def _bundle_files(bundle: Path) -> dict[str, bytes]:
    """Return the files of one Pagefind bundle that pages may load, by name, in order."""
    found = {}
    for path in sorted(bundle.rglob("*")):
        if path.is_file():
            found[path.relative_to(bundle).as_posix()] = path.read_bytes()
    return _usable(found)


def _usable(files: dict[str, bytes]) -> dict[str, bytes]:
    """Return the files of a bundle that pages may load (not the UI no page uses)."""
    return {name: data for name, data in files.items() if not name.startswith(UNUSED)}


def _command(
    sites: Sequence[Path], bundles: Sequence[Path], language: str, at_once: int
) -> list[str]:
    """Return the command that runs Pagefind over each site folder, writing the bundle beside,
    `at_once` runs at a time."""
    folders = [str(folder) for pair in zip(sites, bundles, strict=True) for folder in pair]
    launch = [sys.executable, "-c", _LAUNCH, str(os.getpid()), _indexer()]
    return [*launch, language, str(at_once), *folders]


def _indexer() -> str:
    """Return Pagefind's executable, found as its own `python -m pagefind` finds it (the
    PAGEFIND_BINARY_PATH variable, else the binary the `pagefind[extended]` wheel ships), so
    no run starts Python a second time to find it (0.1 s a run)."""
    return os.environ.get("PAGEFIND_BINARY_PATH") or str(get_executable().absolute())
