"""Files that must be regular are read without ever waiting on a named pipe in their place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from site_builder.runtime.files import NotRegular, holds, regular_bytes
from tests.conftest import without_waiting


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A regular file, a symlink to it, a FIFO, a folder and a symlink to /dev/zero."""
    regular = tmp_path / "regular"
    regular.write_bytes(b"bytes")
    (tmp_path / "linked").symlink_to(regular)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "endless").symlink_to("/dev/zero")
    return {path.name: path for path in tmp_path.iterdir()}


def test_regular_bytes_follows_symlinks_to_regular_files_and_refuses_the_rest(
    places: dict[str, Path],
) -> None:
    assert without_waiting(lambda: regular_bytes(places["regular"])) == b"bytes"
    assert without_waiting(lambda: regular_bytes(places["linked"])) == b"bytes"
    for name in ("fifo", "folder", "endless"):
        outcome = without_waiting(lambda name=name: regular_bytes(places[name]))  # type: ignore[misc]
        assert isinstance(outcome, OSError), name
    assert isinstance(without_waiting(lambda: regular_bytes(places["fifo"])), NotRegular)


def test_holds_is_true_only_of_a_regular_file_not_a_symlink_with_those_bytes(
    places: dict[str, Path],
) -> None:
    assert without_waiting(lambda: holds(places["regular"], b"bytes")) is True
    assert without_waiting(lambda: holds(places["regular"], b"other")) is False
    for name in ("linked", "fifo", "folder", "endless"):
        assert without_waiting(lambda name=name: holds(places[name], b"bytes")) is False, name  # type: ignore[misc]
