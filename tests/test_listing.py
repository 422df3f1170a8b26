"""The build finds the input files `Path.glob` would, in the same order, from the folders'
listings: hidden files, nested folders, names that sort differently as strings and as path
parts, links to files (listed) and to folders (not followed), a named file alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.load import _listed

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
    assert [entry.path for entry in _listed(tree, pattern)] == expected
    assert expected or pattern == "missing.yaml"


def test_a_missing_folder_lists_nothing(tmp_path: Path) -> None:
    assert _listed(tmp_path / "nowhere", "**/*.md") == []
    assert _listed(tmp_path / "nowhere", "site.yaml") == []
