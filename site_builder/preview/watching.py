"""Watch the project's input folders; the only module that imports watchfiles."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

from watchfiles import watch

WATCH_STEP_MS = 10
"""How often the watcher looks at the changes it has gathered."""
WATCH_QUIET_MS = 40
"""A burst of saves ends after this long without another change; then the rebuild starts."""
WATCH_GATHER_MS = 1600
"""The longest a burst of saves (a checkout, a script) is gathered into one rebuild."""


def bursts(paths: list[Path], stop: threading.Event) -> Iterator[set[str]]:
    """Yield the paths changed in each burst of changes under `paths`, WATCH_QUIET_MS after
    its last change (or WATCH_GATHER_MS after its first), until `stop` is set. Changes made
    meanwhile (while the caller rebuilds) are gathered and make the next burst. A folder
    created, moved or removed is one path (not one per file in it).

    watchfiles hands over a set of changes once they stopped growing for a step; saving the
    same file again does not grow it, so the quiet time is counted here: a step with no
    change at all (its `rust_timeout`) ends the burst."""
    since: float | None = None
    gathered: set[str] = set()
    for changes in watch(
        *paths,
        debounce=WATCH_GATHER_MS,
        step=WATCH_STEP_MS,
        rust_timeout=WATCH_QUIET_MS,
        yield_on_timeout=True,
        stop_event=stop,
        raise_interrupt=False,
    ):
        if changes:
            gathered.update(path for _, path in changes)
            since = time.monotonic() if since is None else since
            if time.monotonic() - since < WATCH_GATHER_MS / 1000:
                continue
        if since is not None:
            since = None
            burst, gathered = gathered, set()
            yield burst
