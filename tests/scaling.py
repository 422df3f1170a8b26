"""Whether a cost grows linearly with its input, measured so that a busy machine cannot fail it.

A check times one size and four times that size, interleaved, as the least CPU time of this
process with the garbage collector held off. Linear work takes about 4x as long and quadratic
work about 16x; the bound of 8 leaves a factor of two either way. A check that misses the bound
is measured again, up to three rounds, before it fails: noise does not repeat, quadratic work does.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

GROWTH = 4
"""How many times larger the second input is than the first."""
BOUND = 8.0
"""The largest time ratio allowed for GROWTH times the input: linear is 4, quadratic 16."""


def cpu_seconds(run: Callable[[], object]) -> float:
    """Return the CPU time this process spends in one `run()`, with the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        run()
        return time.process_time() - start
    finally:
        gc.enable()


def growth(at: Callable[[int], Callable[[], object]], size: int, repeat: int = 5) -> float:
    """Return how many times longer `at(GROWTH * size)()` takes than `at(size)()`.

    Each round takes the least time of `repeat` interleaved runs of each size; up to three rounds
    are run while the ratio stays at or above BOUND, and the least ratio is returned."""
    small, large = at(size), at(GROWTH * size)
    best = float("inf")
    for _ in range(3):
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(repeat):
            times[0].append(cpu_seconds(small))
            times[1].append(cpu_seconds(large))
        best = min(best, min(times[1]) / min(times[0]))
        if best < BOUND:
            break
    return best
