"""Per-guide work spread over forked processes: in order, really parallel, errors intact."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest

from site_builder.errors import BuilderError, InputError, Problem
from site_builder.model.vocabulary import in_use, using
from site_builder.runtime.workers import (
    CHUNKS_IN_FLIGHT,
    MIN_PER_WORKER,
    MOST_PER_CHUNK,
    chunked,
    run_each,
)
from tests.conftest import SEED_VOCABULARY


def test_results_come_back_in_order_from_other_processes() -> None:
    def task(index: int) -> tuple[int, int]:
        time.sleep(0.005)  # instant tasks could all be done by one worker before the other starts
        return index * index, os.getpid()

    results = run_each(task, 64, jobs=2)
    assert [square for square, _ in results] == [index * index for index in range(64)]
    workers = {pid for _, pid in results}
    assert len(workers) == 2 and os.getpid() not in workers


def test_then_runs_here_in_order_as_results_arrive() -> None:
    def task(index: int) -> float:
        time.sleep(0.01)
        return time.monotonic()  # when the task ended (one clock for every process)

    seen: list[tuple[int, int, float]] = []

    def then(index: int, ended: float) -> float:
        seen.append((index, os.getpid(), time.monotonic()))
        return -ended

    results = run_each(task, 64, jobs=2, then=then)
    assert [index for index, _, _ in seen] == list(range(64))
    assert {pid for _, pid, _ in seen} == {os.getpid()}
    assert seen[0][2] < -min(results), "the first result was kept before the last task ended"


def test_a_few_items_are_not_worth_a_fork() -> None:
    assert {pid for pid in run_each(lambda index: os.getpid(), 5, jobs=2)} == {os.getpid()}


def test_tasks_run_with_the_callers_vocabulary() -> None:
    with using(SEED_VOCABULARY):
        subjects = run_each(lambda index: in_use().subject, 32, jobs=2)  # type: ignore[union-attr]
    assert set(subjects) == {SEED_VOCABULARY.subject}


def test_an_input_error_in_a_worker_arrives_with_its_problems() -> None:
    problem = Problem("records/x.json", "decision", "is missing")

    def task(index: int) -> int:
        if index == 20:
            raise InputError([problem])
        return index

    with pytest.raises(InputError) as raised:
        run_each(task, 32, jobs=2)
    assert raised.value.problems == (problem,)


def test_a_worker_that_dies_is_a_builder_bug_not_a_hang() -> None:
    def task(index: int) -> int:
        if index == 20:
            os._exit(3)
        return index

    with pytest.raises(BuilderError, match="builder bug: a worker process failed"):
        run_each(task, 32, jobs=2)


def test_the_workers_do_not_collect_the_callers_objects_and_nothing_stays_frozen() -> None:
    """The caller's objects are out of the workers' garbage collector while they run (no
    copy of shared pages), and collectable again after: a long preview leaks nothing."""
    frozen = run_each(lambda index: gc.get_freeze_count(), 32, jobs=2)
    assert min(frozen) > 1000
    assert gc.get_freeze_count() == 0
    with pytest.raises(BuilderError):
        run_each(lambda index: os._exit(1) if index == 3 else index, 32, jobs=2)
    assert gc.get_freeze_count() == 0


def test_workers_stay_a_few_chunks_ahead_of_a_slow_caller(tmp_path: Path) -> None:
    started = tmp_path / "started"

    def task(index: int) -> int:
        with started.open("a") as stream:  # one short line an append: whole lines
            stream.write(f"{index}\n")
        return index

    ahead: list[int] = []

    def then(index: int, result: int) -> int:
        time.sleep(0.002)  # storing a page here takes longer than making it there
        ahead.append(len(started.read_text().splitlines()) - index)
        return result

    assert run_each(task, 2000, jobs=2, then=then) == list(range(2000))
    # Results held here at once: the chunks handed out ahead, and the one being taken.
    assert max(ahead) <= (2 * CHUNKS_IN_FLIGHT + 1) * MOST_PER_CHUNK


def test_chunks_shrink_as_the_end_nears_so_the_workers_finish_together() -> None:
    """Guided scheduling: every item in one chunk, in order; no chunk over MOST_PER_CHUNK; the
    last chunks hold at most MIN_PER_WORKER items, so no worker is left ending a big chunk
    while the others have nothing to do."""
    for count, jobs in ((1000, 2), (90, 2), (10_000, 4), (17, 2)):
        chunks = chunked(count, jobs)
        assert [index for start, end in chunks for index in range(start, end)] == list(range(count))
        sizes = [end - start for start, end in chunks]
        assert max(sizes) <= MOST_PER_CHUNK
        assert all(size <= MIN_PER_WORKER for size in sizes[-2 * jobs :])
        assert sizes == sorted(sizes, reverse=True)
    assert chunked(1000, 2)[0] == (0, MOST_PER_CHUNK)  # few round trips while much is left
