"""Preview builds: rebuild into a fresh temporary folder on every change, publish what built.

No request ever sees a half-built site: each rebuild goes into a new folder and the served
folder is switched only after it was written. A rebuild that fails (input, verification or
template errors) keeps the last site and records the errors for the server to show. After
the first build the new site is served before the site checks run; an error they find is
shown in the banner over it. The only module that imports watchfiles.

A rebuild after the first reuses what the last one computed (the build cache, held in
memory), hard-links the files that did not change, and serves the last search index at once;
Pagefind indexes the new pages in the background and its bundle replaces the old one quietly
(no reload), unless another save came first.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles import watch

from site_builder.cache import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import BuilderError, InputError, OutputError
from site_builder.models import BuildReport
from site_builder.pipeline import build
from site_builder.search import BUNDLE, SearchIndex
from site_builder.workdirs import preview_folder
from site_builder.write import link_copy, write_tree

KEEP_SITES = 2
"""Keep the previous site beside the current one, so requests in flight can finish."""
ASSET_GRACE_SECONDS = 60.0
"""Keep a replaced site this long, so pages of it still loading can fetch its assets."""


@dataclass
class PreviewState:
    """What the server shows: the current site folder, its version, and the last build error."""

    site: Path | None = None
    version: int = 0
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """Unacknowledged warnings of the site being served."""
    retired: tuple[tuple[Path, float], ...] = ()
    """Site folders served before the current one, newest first, each with the time
    (`time.monotonic`) it was replaced; only those replaced within ASSET_GRACE_SECONDS."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def publish(
        self,
        site: Path | None,
        errors: tuple[str, ...],
        warnings: tuple[str, ...] = (),
        *,
        reload: bool = True,
    ) -> None:
        """Switch to a new site (or keep the old one with errors) and wake every waiting tab;
        without `reload`, switch to a site whose pages are the same (a new search index)."""
        with self.changed:
            if site is not None and self.site is not None and site != self.site:
                now = time.monotonic()
                kept = [(path, at) for path, at in self.retired if now - at < ASSET_GRACE_SECONDS]
                self.retired = ((self.site, now), *kept)
            if site is not None:
                self.site = site
                self.warnings = warnings
            if not reload:
                return
            if site is None and errors == self.errors:
                return
            self.errors = errors
            self.version += 1
            self.changed.notify_all()

    def wait(self, version: int, timeout: float) -> int:
        """Block until the version differs from `version` or the timeout passes; return it."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version, timeout=timeout)
            return self.version

    def recent(self) -> tuple[Path, ...]:
        """Return the folders replaced within the last ASSET_GRACE_SECONDS, newest first."""
        now = time.monotonic()
        return tuple(path for path, at in self.retired if now - at < ASSET_GRACE_SECONDS)


class Previewer:
    """Builds the project into numbered folders under one temporary directory."""

    def __init__(self, config: BuildConfig, log: Callable[[str], None]) -> None:
        self.config = config
        self.log = log
        self.state = PreviewState()
        self.workdir = preview_folder()
        self.cache = BuildCache(config.cache_dir, memory=True) if config.cache_dir else None
        self._count = 0
        self._lock = threading.Lock()
        self._indexing: SearchIndex | None = None
        self._indexer: threading.Thread | None = None

    def rebuild(self) -> bool:
        """Build once into a fresh folder and publish it; then publish the checks' findings.

        After the first build the new site is served as soon as it is written (the last
        search index with it, Pagefind starting in the background) and the checks follow:
        their errors and warnings reach the banner with one more reload, only if they changed.
        """
        self._stop_indexing()
        with self._lock:
            self._count += 1
            out = self.workdir / f"site-{self._count}"
            last = self.state.site
            started = time.perf_counter()
            shown: list[float] = []

            def show(report: BuildReport) -> None:
                assert last is not None
                link_copy(last / BUNDLE, out / BUNDLE)  # the last index, until the new one
                self.state.publish(out, (), self.state.warnings)
                shown.append(time.perf_counter() - started)
                self._index_later(out, report)

            outcome = _build_outcome(self.config, out, self.cache, last, show if last else None)
            errors, warnings, report = outcome
            seconds = time.perf_counter() - started
            if errors or report is None:
                self.log(f"Rebuild failed: {errors[0]}" + _more(errors))
                if not shown:
                    shutil.rmtree(out, ignore_errors=True)
                self.state.publish(None, errors)
                return False
            changed = warnings != self.state.warnings
            self.state.publish(out, (), warnings, reload=changed or not shown)
            took = f"Shown in {shown[0]:.2f} s, checked in" if shown else "Took"
            self.log(
                f"Rebuilt ({self.state.version}): 0 errors, {len(warnings)} warning(s). "
                f"{took} {seconds:.2f} s."
            )
            self._prune()
            return True

    def _index_later(self, site: Path, report: BuildReport) -> None:
        """Index the site's pages in the background; serve them with the new bundle after."""
        try:
            self._indexing = SearchIndex(report.pages, report.language, site)
        except OutputError as error:
            self.log(f"Search index not updated: {error}")
            return
        self._indexer = threading.Thread(
            target=self._finish_indexing, args=(self._indexing, site), daemon=True
        )
        self._indexer.start()

    def _finish_indexing(self, index: SearchIndex, site: Path) -> None:
        """Wait for Pagefind; if `site` is still served, serve it with the new bundle."""
        try:
            bundle = index.pages()
        except OutputError:
            return  # stopped by a newer rebuild, or failed: the last bundle stays
        finally:
            index.close()
        with self._lock:
            if self.state.site != site:
                return
            self._count += 1
            out = self.workdir / f"site-{self._count}"
            try:
                link_copy(site, out, leave_out=BUNDLE)
                write_tree(bundle, out)
            except OSError as error:
                shutil.rmtree(out, ignore_errors=True)
                self.log(f"Search index not updated: {error}")
                return
            self.state.publish(out, self.state.errors, self.state.warnings, reload=False)
            self._prune()

    def _stop_indexing(self) -> None:
        """Stop a background index of a site about to be replaced."""
        if self._indexing is not None:
            self._indexing.stop()
        if self._indexer is not None:
            self._indexer.join()
        self._indexing = self._indexer = None

    def watch_forever(self, stop: threading.Event) -> None:
        """Rebuild after each burst of changes to the inputs, until `stop` is set."""
        paths = [path for path in self.config.input_dirs if path.exists()]
        for _changes in watch(
            *paths, debounce=1600, step=100, stop_event=stop, raise_interrupt=False
        ):
            self.rebuild()

    def close(self) -> None:
        """Stop indexing and remove every folder this preview wrote."""
        self._stop_indexing()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _prune(self) -> None:
        """Delete all but the newest KEEP_SITES site folders and those served within
        ASSET_GRACE_SECONDS."""
        folders = sorted(
            (path for path in self.workdir.iterdir() if path.name.startswith("site-")),
            key=lambda path: int(path.name.split("-")[1]),
        )
        keep = {self.state.site, *self.state.recent()}
        for old in folders[:-KEEP_SITES]:
            if old not in keep:
                shutil.rmtree(old, ignore_errors=True)


def _build_outcome(
    config: BuildConfig,
    out: Path,
    cache: BuildCache | None,
    last: Path | None,
    shown: Callable[[BuildReport], None] | None,
) -> tuple[tuple[str, ...], tuple[str, ...], BuildReport | None]:
    """Build into `out`, drafts included; return (errors, unacknowledged warnings) as lines,
    and the report. Indexed for search only when there is no `last` site to serve the last
    index from; with `shown`, written (and `shown` called) before the checks run."""
    preview = BuildConfig(
        config.root, out, config.today, include_drafts=True, cache_dir=config.cache_dir
    )
    try:
        report = build(preview, cache=cache, search=last is None, link_from=last, shown=shown)
    except InputError as error:
        return tuple(str(problem) for problem in error.problems), (), None
    except (OutputError, BuilderError) as error:
        return (str(error),), (), None
    except Exception as error:  # the preview must survive any failure of one rebuild
        return (f"{type(error).__name__}: {error}",), (), None
    errors = tuple(str(f) for f in report.findings if f.severity == "error")
    warnings = tuple(
        str(f) for f in report.findings if f.severity == "warning" and not f.acknowledged
    )
    return errors, warnings, report


def _more(errors: tuple[str, ...]) -> str:
    """Return ' (+N more)' for a one-line terminal summary."""
    return f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
