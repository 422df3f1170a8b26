"""Show a long build's progress on a terminal: the stage running and the time so far.

The only module that imports rich (only when it draws). It draws on stderr, and only when
stderr is a terminal, so piped output, CI logs and `--format json` stay plain.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STAGES = {
    "unchanged": "checking whether anything changed",
    "load": "reading records and prose",
    "validate": "validating",
    "verify": "verifying records",
    "render": "rendering pages",
    "check": "checking the site",
    "search index": "indexing for search",
    "write": "writing the site",
}


@contextmanager
def stage_display(enabled: bool) -> Iterator[Callable[[str], None]]:
    """Yield a function to call as each stage starts; it updates a status line on stderr."""
    if not enabled or not sys.stderr.isatty():
        yield lambda name: None
        return
    from rich.console import Console  # only for a terminal: a build piped or quiet skips it

    console = Console(stderr=True)
    started = time.perf_counter()
    with console.status("Building…") as status:

        def show(name: str) -> None:
            elapsed = time.perf_counter() - started
            status.update(f"Building: {STAGES.get(name, name)} ({elapsed:.1f} s)")

        yield show
