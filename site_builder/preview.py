"""Preview builds: rebuild into a fresh temporary folder on every change, publish only successes.

No request ever sees a half-built site: each rebuild goes into a new folder and the served
folder is switched only after the build succeeded. A failed rebuild keeps the last good site
and records the error for the server to show. The only module that imports watchfiles.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles import watch

from site_builder.config import BuildConfig
from site_builder.errors import BuilderError, InputError, OutputError
from site_builder.pipeline import build

KEEP_SITES = 2
"""Keep the previous site beside the current one, so requests in flight can finish."""


@dataclass
class PreviewState:
    """What the server shows: the current site folder, its version, and the last build error."""

    site: Path | None = None
    version: int = 0
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """Unacknowledged warnings of the site being served."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def publish(
        self, site: Path | None, errors: tuple[str, ...], warnings: tuple[str, ...] = ()
    ) -> None:
        """Switch to a new site (or keep the old one with errors) and wake every waiting tab."""
        with self.changed:
            if site is not None:
                self.site = site
                self.warnings = warnings
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


class Previewer:
    """Builds the project into numbered folders under one temporary directory."""

    def __init__(self, config: BuildConfig, log: Callable[[str], None]) -> None:
        self.config = config
        self.log = log
        self.state = PreviewState()
        self.workdir = Path(tempfile.mkdtemp(prefix="glm52-preview-"))
        self._count = 0
        self._lock = threading.Lock()

    def rebuild(self) -> bool:
        """Build once into a fresh folder; publish it on success, or publish the errors."""
        with self._lock:
            self._count += 1
            out = self.workdir / f"site-{self._count}"
            errors, warnings = _build_outcome(self.config, out)
            if errors:
                self.log(f"Rebuild failed: {errors[0]}" + _more(errors))
                shutil.rmtree(out, ignore_errors=True)
                self.state.publish(None, errors)
                return False
            self.state.publish(out, (), warnings)
            self.log(f"Rebuilt ({self.state.version}): 0 errors, {len(warnings)} warning(s).")
            self._prune()
            return True

    def watch_forever(self, stop: threading.Event) -> None:
        """Rebuild after each burst of changes to the inputs, until `stop` is set."""
        paths = [path for path in self.config.input_dirs if path.exists()]
        for _changes in watch(
            *paths, debounce=1600, step=100, stop_event=stop, raise_interrupt=False
        ):
            self.rebuild()

    def close(self) -> None:
        """Remove every folder this preview wrote."""
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _prune(self) -> None:
        """Delete all but the newest KEEP_SITES site folders."""
        folders = sorted(
            (path for path in self.workdir.iterdir() if path.name.startswith("site-")),
            key=lambda path: int(path.name.split("-")[1]),
        )
        for old in folders[:-KEEP_SITES]:
            shutil.rmtree(old, ignore_errors=True)


def _build_outcome(config: BuildConfig, out: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Build into `out`, drafts included; return (errors, unacknowledged warnings) as lines.

    No errors means the site was written.
    """
    preview = BuildConfig(
        config.root, out, config.today, include_drafts=True, cache_dir=config.cache_dir
    )
    try:
        report = build(preview)
    except InputError as error:
        return tuple(str(problem) for problem in error.problems), ()
    except (OutputError, BuilderError) as error:
        return (str(error),), ()
    except Exception as error:  # the preview must survive any failure of one rebuild
        return (f"{type(error).__name__}: {error}",), ()
    errors = tuple(str(f) for f in report.findings if f.severity == "error")
    warnings = tuple(
        str(f) for f in report.findings if f.severity == "warning" and not f.acknowledged
    )
    return errors, warnings


def _more(errors: tuple[str, ...]) -> str:
    """Return ' (+N more)' for a one-line terminal summary."""
    return f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
