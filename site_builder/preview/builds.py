"""Preview builds: rebuild in memory on every change, publish what built.

No request ever sees a half-built site: each rebuild's files are held in memory (`ServedSite`)
and the served site is switched only once they are all there. A rebuild that fails (input,
verification or template errors) keeps the last site and records the errors for the server to
show. After the first build the new site is served before the site checks run; an error they
find is shown in the banner over it.

A rebuild after the first reuses what the last one computed (the build cache, held in
memory), writes nothing to disk, and serves the last search index at once; Pagefind indexes
the new pages in the background (in the preview's temporary folder) and its bundle replaces
the old one without reloading tabs (unless another save came first): their streams get a
`search` event, on which an open search page starts its search over on the new index.
"""

from __future__ import annotations

import gc
import shutil
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import BuilderError, InputError, OutputError
from site_builder.inputs.listing import KnownFiles
from site_builder.model.models import BuildReport, Page
from site_builder.output.search import BUNDLE, SearchIndex
from site_builder.output.shard_cache import FILE_ENTRY, SHARD_ENTRY, HeldBundles
from site_builder.pipeline import build
from site_builder.preview.served import ServedSite
from site_builder.preview.state import PreviewState
from site_builder.preview.watching import bursts
from site_builder.render.stored_pages import SEARCH_PAGE
from site_builder.runtime.workdirs import preview_folder

LISTED_BURST = 1000
"""A burst naming more paths (a checkout, a copy) has every folder listed again: the kernel
may have dropped some of so many events."""
TABS_SECONDS = 1.0
"""The longest the checks and the search index wait for open tabs to show a new site: they
take the CPU (and the interpreter) the reloading tabs' requests need."""


class Previewer:
    """Builds the project in memory; Pagefind works in one temporary folder."""

    def __init__(self, config: BuildConfig, log: Callable[[str], None]) -> None:
        self.config, self.log = config, log
        self.state, self.workdir = PreviewState(), preview_folder()
        self.cache = BuildCache(config.cache_dir, memory=True) if config.cache_dir else None
        self._lock = threading.Lock()
        self._indexing: SearchIndex | None = None
        self._stopped: threading.Event | None = None
        self._guard = threading.Lock()
        """Held while the indexer being run (`_indexing`, `_stopped`) is set or stopped."""
        self._indexers: list[threading.Thread] = []
        self.known = KnownFiles()  # what the last load read, for rebuilds told what changed
        self.held = HeldBundles()  # the last search index, so an unchanged shard stays as is
        self.idle = threading.Event()
        """Set while no rebuild renders: a stopped indexer removes its folder only then."""
        self.idle.set()

    def rebuild(self, changed: Collection[str] | None = None) -> bool:
        """Build once and publish the site; then publish the checks' findings. `changed`: the
        paths the watcher saw change (only those files are read again), or None if unknown.

        After the first build the new site is served as soon as it is rendered (the last
        search index with it, Pagefind starting in the background) and the checks follow:
        their errors and warnings reach the banner with one more reload, only if they changed.
        Python's cycle collector waits until the tabs show the new site (a full collection of
        a 1,000-guide site's objects takes about 0.3 s).
        """
        self.idle.clear()
        self._stop_indexing(wait=False)  # a stopped indexer cleans up on its own thread
        with self._lock:
            self.known.saw(changed)
            collecting = gc.isenabled()
            gc.disable()
            last = self.state.site
            started = time.perf_counter()
            shown: list[float] = []
            served: list[ServedSite] = []

            def serve(files: list[Page], report: BuildReport) -> None:
                if last is None:
                    served.append(ServedSite(files))
                    return
                site = ServedSite(files, {BUNDLE: last.under(BUNDLE)})
                served.append(site)
                self.state.publish(site, (), self.state.warnings)
                shown.append(time.perf_counter() - started)
                self.state.wait_for_tabs(TABS_SECONDS)  # the tabs load before the checks run
                self.idle.set()
                if collecting:
                    gc.enable()
                self._index_later(site, report)

            try:
                outcome = _build_outcome(
                    self.config, self.workdir, self.cache, self.known, last is None, serve
                )
            finally:
                self.idle.set()
                if collecting:
                    gc.enable()
                if self.cache is not None:
                    self.cache.flush()  # the entries it made, written once the site is shown
            errors, warnings, report = outcome
            seconds = time.perf_counter() - started
            if errors or report is None:
                more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
                self.log(f"Rebuild failed: {errors[0]}{more}")
                self.state.publish(None, errors)
                return False
            changed = warnings != self.state.warnings
            self.state.publish(served[0], (), warnings, reload=changed or not shown)
            took = f"Shown in {shown[0]:.2f} s, checked in" if shown else "Took"
            self.log(
                f"Rebuilt ({self.state.version}): 0 errors, {len(warnings)} warning(s). "
                f"{took} {seconds:.2f} s."
            )
            return True

    def _index_later(self, site: ServedSite, report: BuildReport) -> None:
        """Index the site's pages in the background; serve them with the new bundle after."""
        stopped = threading.Event()
        self._stopped = stopped
        indexer = threading.Thread(target=self._index, args=(site, report, stopped), daemon=True)
        self._indexers = [thread for thread in self._indexers if thread.is_alive()]
        self._indexers.append(indexer)
        indexer.start()

    def _index(self, site: ServedSite, report: BuildReport, stopped: threading.Event) -> None:
        """Write the pages for Pagefind and wait for it (unless `stopped` by a newer rebuild);
        if `site` is still served, serve it with the new bundle. A shard none of whose pages
        changed comes from the build cache (read and kept by an instance of its own: the
        rebuilds leave those entries alone), so after one edit only its shard is indexed."""
        cache = BuildCache(self.config.cache_dir) if self.config.cache_dir else None
        try:
            index = SearchIndex(
                report.pages,
                report.language,
                self.workdir / "site",
                stopped,
                report.search_shard_pages,
                cache,
                self.held,
                self.idle,
            )
        except OutputError as error:
            if not stopped.is_set():  # stopped: a newer rebuild indexes its own pages
                self.log(f"Search index not updated: {error}")
            return
        with index:
            with self._guard:
                if stopped.is_set():
                    return
                self._indexing = index
            try:
                bundle = index.pages()
            except OutputError:
                return  # stopped by a newer rebuild, or failed: the last bundle stays
        if cache is not None and not stopped.is_set():
            for kind in (SHARD_ENTRY, FILE_ENTRY, SEARCH_PAGE):
                cache.prune(kind)
        with self._lock:
            if self.state.site is not site:
                return
            indexed = site.with_files(bundle, BUNDLE)
            self.state.publish_search(indexed)

    def _stop_indexing(self, *, wait: bool = True) -> None:
        """Stop a background index of a site about to be replaced; with `wait`, also wait
        until every indexer thread has removed its folder."""
        with self._guard:
            if self._stopped is not None:
                self._stopped.set()
            if self._indexing is not None:
                self._indexing.stop()
            self._indexing = self._stopped = None
        if wait:
            for thread in self._indexers:
                thread.join()
            self._indexers = []

    def watch_forever(self, stop: threading.Event) -> None:
        """Rebuild after each burst of changes to the inputs, until `stop` is set."""
        for changed in bursts([path for path in self.config.input_dirs if path.exists()], stop):
            self.rebuild(changed if len(changed) <= LISTED_BURST else None)

    def close(self) -> None:
        """Stop indexing and remove the preview's temporary folder."""
        self.idle.set()
        self._stop_indexing()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _build_outcome(
    config: BuildConfig,
    workdir: Path,
    cache: BuildCache | None,
    known: KnownFiles,
    first: bool,
    serve: Callable[[list[Page], BuildReport], None],
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], BuildReport | None]:
    """Build, drafts included, handing the files to `serve`; return (errors, unacknowledged
    warnings) as lines (each warning with the page it is about), and the report. Only the
    `first` build is indexed for search (the later ones serve the last index until theirs is
    done), and only later builds hand their files over before the checks run."""
    preview = BuildConfig(
        config.root, workdir / "site", config.today, include_drafts=True, cache_dir=config.cache_dir
    )
    try:
        report = build(preview, cache=cache, search=first, serve=serve, known=known)
    except InputError as error:
        return tuple(str(problem) for problem in error.problems), (), None
    except (OutputError, BuilderError) as error:
        return (str(error),), (), None
    except Exception as error:  # the preview must survive any failure of one rebuild
        return (f"{type(error).__name__}: {error}",), (), None
    errors = tuple(str(f) for f in report.findings if f.severity == "error")
    warnings = tuple(
        (f.page, str(f)) for f in report.findings if f.severity == "warning" and not f.acknowledged
    )
    return errors, warnings, report
