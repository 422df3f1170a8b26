"""How long each stage of a build takes (`--timings`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Stopwatch:
    """Wall seconds each stage of one build took (a stage run twice adds up), in run order;
    `on_stage` hears each stage's name as it starts (a progress display)."""

    def __init__(self, on_stage: Callable[[str], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.on_stage = on_stage

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time one stage."""
        if self.on_stage is not None:
            self.on_stage(name)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
