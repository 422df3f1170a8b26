"""How long each stage of a build takes (`--timings`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Stopwatch:
    """Wall seconds each stage of one build took (a stage run twice adds up), in run order;
    `on_stage` hears each stage's name as it starts, and an enclosing stage's again when a
    stage inside it ends (a progress display). A stage inside another is timed apart: the
    enclosing one is paused while it runs, so the stages add up to the build's time."""

    def __init__(self, on_stage: Callable[[str], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.on_stage = on_stage
        self._running: list[tuple[str, float]] = []
        """The stages running, innermost last, each with when it was last started or resumed."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time one stage."""
        if self.on_stage is not None:
            self.on_stage(name)
        self._pause()
        self._running.append((name, time.perf_counter()))
        try:
            yield
        finally:
            self._pause()
            self._running.pop()
            if self._running:
                self._running[-1] = (self._running[-1][0], time.perf_counter())
                if self.on_stage is not None:
                    self.on_stage(self._running[-1][0])

    def _pause(self) -> None:
        """Add the innermost running stage's time so far to its seconds."""
        if self._running:
            name, start = self._running[-1]
            now = time.perf_counter()
            self.seconds[name] = self.seconds.get(name, 0.0) + now - start
            self._running[-1] = (name, now)
