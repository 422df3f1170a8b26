"""The build finds the input files `Path.glob` would, in the same order, from the folders'
listings: hidden files, nested folders, names that sort differently as strings and as path
parts, links to files (listed) and to folders (not followed), a named file alone."""

from __future__ import annotations

import queue
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from site_builder.inputs.listing import Entry, KnownFiles, listed
from site_builder.preview.watching import bursts

PATTERNS = ["*.json", "**/*.md", "**/*", "*", "site.yaml", "missing.yaml", "*.yaml"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    for name in [
        "a.md", "a-b/x.md", "a/x.md", "a/b/c/deep.md", "A.md", ".hidden.md", ".hidden/y.md",
        "b.json", "a.json", "a-.json", "site.yaml", "vocabulary.yaml", "z/site.yaml",
        "images/photo.png", "notes.txt", "ünïcode.md",
    ]:  # fmt: skip
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name, "utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.md").write_text("far", "utf-8")
    (root / "linked-folder").symlink_to(outside, target_is_directory=True)
    (root / "linked.md").symlink_to(root / "a.md")
    (root / "dangling.md").symlink_to(root / "gone.md")
    return root


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_listing_finds_what_glob_finds_in_path_order(tree: Path, pattern: str) -> None:
    expected = [str(path) for path in sorted(tree.glob(pattern))]
    assert [entry.path for entry in listed(tree, pattern)] == expected
    assert expected or pattern == "missing.yaml"


def test_a_missing_folder_lists_nothing(tmp_path: Path) -> None:
    assert listed(tmp_path / "nowhere", "**/*.md") == []
    assert listed(tmp_path / "nowhere", "site.yaml") == []


def read_text(entry: Entry) -> tuple[str, str] | None:
    """What a load keeps of a listed file: its path and text (None for a folder)."""
    path = Path(entry.path)
    return None if path.is_dir() else (entry.path, path.read_text("utf-8"))


def step_burst(found: queue.Queue[set[str]]) -> set[str]:
    """Return the paths of the watcher's burst for one step, with any that follow within
    0.3 s: a machine busy with other tests (the suite runs in parallel) can stall a step
    between its changes for longer than the quiet time, and the watcher then rightly reports
    it as two bursts (the preview would rebuild twice)."""
    paths = set(found.get(timeout=10))
    while True:
        try:
            paths |= found.get(timeout=0.3)
        except queue.Empty:
            return paths


@pytest.mark.parametrize("pattern", ["**/*.md", "*.md", "**/*"])
def test_with_the_paths_the_watcher_reports_a_kept_listing_stays_a_fresh_one(
    tmp_path: Path, pattern: str
) -> None:
    """Files saved, added, replaced by a rename (an editor's safe save), folders made with
    files in them, renamed and removed: after each burst, the files read again are only the
    ones reported (or the folder's, when a folder changed), and the result is what listing
    and reading every file gives."""
    folder = tmp_path / "content"
    folder.mkdir()
    for name in ["a.md", "b.md", "sub/c.md", "notes.txt"]:
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(name, "utf-8")
    known, reads = KnownFiles(), []

    def counted(entry: Entry) -> tuple[str, str] | None:
        reads.append(entry.path)
        return read_text(entry)

    assert known.each("docs", folder, pattern, counted) == [
        read_text(entry) for entry in listed(folder, pattern)
    ]
    known.loaded()
    steps: list[Callable[[], None]] = [
        lambda: (folder / "a.md").write_text("a, saved again", "utf-8"),
        lambda: (folder / "new.md").write_text("new", "utf-8"),
        lambda: ((folder / ".a.md.tmp").write_text("a, saved safely", "utf-8"),
                 (folder / ".a.md.tmp").rename(folder / "a.md")),
        lambda: ((folder / "made/deep").mkdir(parents=True),
                 (folder / "made/deep/d.md").write_text("d", "utf-8")),
        lambda: (folder / "made").rename(folder / "moved"),
        lambda: (folder / "sub/c.md").unlink(),
        lambda: shutil.rmtree(folder / "moved"),
        lambda: (folder / "b.md").rename(folder / "sub" / "b.md"),
    ]  # fmt: skip
    stop, found = threading.Event(), queue.Queue[set[str]]()

    def watch() -> None:
        for burst in bursts([folder], stop):
            found.put(burst)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.3)  # the watcher is set up
    try:
        for number, step in enumerate(steps):
            step()
            known.saw(step_burst(found))
            reads.clear()
            kept = known.each("docs", folder, pattern, counted)
            assert kept == [read_text(entry) for entry in listed(folder, pattern)], number
            if number in (0, 1, 2):  # a file saved or added: it alone is read
                assert reads == [str(folder / ("new.md" if number == 1 else "a.md"))], number
            known.loaded()
    finally:
        stop.set()
        watcher.join(timeout=5)


def test_without_word_of_what_changed_every_file_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a", "utf-8")
    known = KnownFiles()
    assert known.each("docs", tmp_path, "*.md", read_text) == [(str(tmp_path / "a.md"), "a")]
    known.loaded()
    (tmp_path / "a.md").write_text("changed", "utf-8")
    known.saw(None)
    assert known.each("docs", tmp_path, "*.md", read_text) == [(str(tmp_path / "a.md"), "changed")]


def test_a_change_reported_through_a_linked_folder_is_not_read(tmp_path: Path) -> None:
    """Links to folders are not followed, whichever path a watcher names a change by."""
    folder, outside = tmp_path / "content", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (folder / "a.md").write_text("a", "utf-8")
    (outside / "far.md").write_text("far", "utf-8")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    known = KnownFiles()
    known.each("docs", folder, "**/*.md", read_text)
    known.loaded()
    (outside / "far.md").write_text("far, saved again", "utf-8")
    known.saw({str(folder / "linked" / "far.md")})
    assert known.each("docs", folder, "**/*.md", read_text) == [(str(folder / "a.md"), "a")]
