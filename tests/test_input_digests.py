"""Every input file's sha256, which decides whether a build has anything to do: a site of
many files is read and hashed over a thread a core, with the same digests, in the same order,
as one thread gives."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.output import unchanged
from site_builder.output.unchanged import input_digests
from site_builder.runtime import files
from tests.conftest import Project, refuse_reading
from tests.test_incremental import grow


@pytest.fixture
def many(project: Project) -> Project:
    """The seed project with 150 more guides: over 300 input files."""
    grow(project, 150)
    return project


def test_many_files_are_hashed_over_threads_as_one_thread_hashes_them(
    many: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(many.root)
    readers: set[int] = set()
    regular_bytes = files.regular_bytes

    def read(path: str | Path) -> bytes:
        if threading.get_ident() not in readers:  # so no one thread can take both slices
            readers.add(threading.get_ident())  # while the builder is slow to hand out the
            time.sleep(0.2)  # second (a loaded machine: it failed so once in CI)
        return regular_bytes(path)

    monkeypatch.setattr(files, "regular_bytes", read)
    monkeypatch.setattr(unchanged, "cores", lambda: 2)
    spread = input_digests(config)
    assert len(readers) == 2
    monkeypatch.setattr(unchanged, "cores", lambda: 1)
    serial = input_digests(config)
    assert list(spread.items()) == list(serial.items())  # the order makes the build's key
    assert len(spread) > 300
    for name, sha256 in spread.items():
        assert sha256 == hashlib.sha256((many.root / name).read_bytes()).hexdigest()


def test_a_file_that_cannot_be_read_is_unreadable_and_read_again_next_time(
    many: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(many.root)
    cache = BuildCache(config.cache_dir)
    broken = sorted((many.root / "records").glob("*.json"))[7]
    read_bytes, regular_bytes = Path.read_bytes, files.regular_bytes
    refuse_reading(monkeypatch, broken)
    monkeypatch.setattr(unchanged, "RECENT_NS", 0)  # every file's status may be remembered
    name = broken.relative_to(many.root).as_posix()
    first = input_digests(config, cache)
    assert first[name] == "unreadable"
    assert sum(sha256 == "unreadable" for sha256 in first.values()) == 1

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(files, "regular_bytes", regular_bytes)
    second = input_digests(config, cache)
    assert second[name] == hashlib.sha256(broken.read_bytes()).hexdigest()
    assert {n: s for n, s in second.items() if n != name} == {
        n: s for n, s in first.items() if n != name
    }
