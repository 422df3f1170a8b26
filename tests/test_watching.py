"""The preview's watcher: one burst per run of saves, soon after the last one.

A real watchfiles watcher on a temporary folder; saves come from another thread. Timings
allow for a busy machine: they bound what a user waits for, not how fast this machine is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from site_builder.preview import watching
from site_builder.preview.watching import WATCH_QUIET_MS, bursts
from tests.preview_helpers import quiet_between


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, list[float]]]:
    """A folder under watch, and the time (time.monotonic) of each burst seen so far."""
    seen: list[float] = []
    stop = threading.Event()

    def observe() -> None:
        for _ in bursts([tmp_path], stop):
            seen.append(time.monotonic())

    thread = threading.Thread(target=observe, daemon=True)
    thread.start()
    time.sleep(0.3)  # the watcher is set up
    yield tmp_path, seen
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive(), "setting the stop event ends the watcher"


ATTEMPTS = 5
"""How many times a run of saves is tried until the machine keeps its saves as close as asked."""


def save_every(path: Path, seconds: float, count: int) -> list[float]:
    """Save `path` `count` times, `seconds` apart; return the time of each save."""
    times = []
    for index in range(count):
        path.write_text(f"save {index}\n", "utf-8")
        times.append(time.monotonic())
        if index < count - 1:
            time.sleep(seconds)
    return times


def wait_until(condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_saves_of_one_file_closer_than_the_quiet_time_are_one_burst(
    watched: tuple[Path, list[float]],
) -> None:
    folder, seen = watched
    # Ten saves 20 ms apart last longer than the quiet time: watchfiles alone (its set of
    # changes does not grow when the same file is saved again) would split them.
    for _ in range(ATTEMPTS):
        seen.clear()
        saves = save_every(folder / "record.json", WATCH_QUIET_MS / 2000, 10)
        wait_until(lambda: len(seen) >= 1)
        time.sleep(0.5)
        if not quiet_between(saves):
            break
    assert not quiet_between(saves), "the machine never saved ten times without a stall"
    assert len(seen) == 1
    assert WATCH_QUIET_MS / 1000 <= seen[0] - saves[-1] < 0.5


def test_saves_further_apart_than_the_quiet_time_are_two_bursts(
    watched: tuple[Path, list[float]],
) -> None:
    folder, seen = watched
    save_every(folder / "a.md", 0, 1)
    wait_until(lambda: len(seen) == 1)
    save_every(folder / "b.md", 0, 1)
    wait_until(lambda: len(seen) == 2)


def test_endless_saves_are_cut_into_bursts_of_at_most_the_gathering_time(
    watched: tuple[Path, list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watching, "WATCH_GATHER_MS", 400)  # read at each change
    folder, seen = watched
    for _ in range(ATTEMPTS):
        time.sleep(0.3)  # a burst of the attempt before has come
        seen.clear()
        saves = save_every(folder / "log.txt", 0.02, 60)  # 1.2 s of saves, never quiet
        if not quiet_between(saves):
            break
    assert not quiet_between(saves), "the machine never saved for 1.2 s without a stall"
    assert seen, "a burst came before the saves stopped"
    assert 0.4 <= seen[0] - saves[0] < 1.0
