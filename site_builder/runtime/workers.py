"""Spread per-guide work over the machine's cores with forked worker processes.

The workers are forked once the state a task reads (the assembled site, the verifications,
the compiled templates) is in memory, so only index ranges travel to them. Each task runs in
a copy of the caller's context (the vocabulary in use), and results come back pickled in
input order: a parallel build writes exactly the bytes a serial one does.

Forking is only safe from a process whose other threads hold no locks the task needs, so the
command-line build uses it and the preview server (threads) asks for one job.
"""

from __future__ import annotations

import contextvars
import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any, TypeVar

from site_builder.errors import BuilderError

T = TypeVar("T")
MIN_PER_WORKER = 8
"""Below this many items per worker, forking costs more than it saves: run them here."""
CHUNKS_PER_WORKER = 4
"""Smaller chunks even out uneven guides; more cost a round trip each."""
MOST_PER_CHUNK = 50
"""Results come back a chunk at a time: this bounds what one holds here at once."""
CHUNKS_IN_FLIGHT = 2
"""Chunks handed to each worker ahead of the results read here, so none waits for work and
results never pile up here faster than `then` takes them."""

GC_THRESHOLDS = (200_000, 30, 30)
"""The garbage collector's thresholds for a run (mypy's): a build makes millions of objects
that live until it ends, and at Python's default (700, 10, 10) the collector walks all of
them again and again (at 10,000 guides, half of reading the cached verifications back)."""

_task: Callable[[int], Any] | None = None
_context: contextvars.Context | None = None


def cores() -> int:
    """Return how many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def available_memory() -> int | None:
    """Return the bytes of memory the machine can give new work without swapping (Linux's
    MemAvailable), or None where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def collect_less() -> None:
    """Set this process's garbage collector to GC_THRESHOLDS (the command line does, once)."""
    gc.set_threshold(*GC_THRESHOLDS)


def run_each(
    task: Callable[[int], T],
    count: int,
    jobs: int,
    then: Callable[[int, T], T] | None = None,
) -> list[T]:
    """Return `[task(i) for i in range(count)]`, spread over `jobs` forked processes; with
    `then`, `[then(i, task(i)) ...]`, each `then` run here as its result arrives (so results
    can be stored and slimmed before the rest are in).

    An exception a task raises is raised here, as a serial run would raise it.
    """
    keep = then or (lambda _, result: result)
    forking = "fork" in multiprocessing.get_all_start_methods()
    if jobs <= 1 or count < 2 * MIN_PER_WORKER or not forking:
        return [keep(index, task(index)) for index in range(count)]
    global _task, _context
    _task, _context = task, contextvars.copy_context()
    chunks = iter(chunked(count, jobs))
    # What the workers read is frozen out of the garbage collector's reach while they run
    # (Python's advice for forked workers): their collections do not walk it, and so do not
    # touch (and copy) the pages they share with this process.
    gc.freeze()
    results: list[T] = []
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            ahead = deque(
                pool.submit(_run_chunk, c) for c in islice(chunks, jobs * CHUNKS_IN_FLIGHT)
            )
            while ahead:
                part = ahead.popleft().result()
                ahead.extend(pool.submit(_run_chunk, c) for c in islice(chunks, 1))
                start = len(results)
                results += [keep(start + at, result) for at, result in enumerate(part)]
    except BrokenProcessPool as error:
        raise BuilderError("(site)", error, "a worker process") from None
    finally:
        gc.unfreeze()
        _task = _context = None
    return results


def chunked(count: int, jobs: int) -> list[tuple[int, int]]:
    """Return the (start, end) chunks `run_each` hands out, in order: each a share of the items
    left (guided scheduling), between MIN_PER_WORKER and MOST_PER_CHUNK, so chunks shrink as
    the end nears and the workers finish together, not one idle while the other ends a big
    chunk (at 1,000 guides, chunks of 50 left a core idle for up to half a second)."""
    chunks: list[tuple[int, int]] = []
    start = 0
    while start < count:
        share = -(-(count - start) // (jobs * CHUNKS_PER_WORKER))
        end = min(start + max(MIN_PER_WORKER, min(MOST_PER_CHUNK, share)), count)
        chunks.append((start, end))
        start = end
    return chunks


def _run_chunk(bounds: tuple[int, int]) -> list[Any]:
    """Run the task over one range of indices, in a worker (in the caller's context)."""
    task, context = _task, _context
    if task is None or context is None:  # a worker not forked by run_each
        raise RuntimeError("run_each's task is not set in this worker")
    return context.run(lambda: [task(index) for index in range(*bounds)])
