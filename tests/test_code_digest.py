"""The build cache is keyed by the builder's own code: an edit to any module of any package
makes every cached page and verification stale."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from site_builder.cache import reuse

PACKAGE = Path(reuse.__file__).resolve().parent.parent


@pytest.fixture
def package_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    copy = tmp_path / "site_builder"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(reuse, "PACKAGE", copy)
    reuse.code_digest.cache_clear()
    yield copy
    reuse.code_digest.cache_clear()


@pytest.mark.parametrize("module", ["pipeline.py", "render/scan.py", "present/cells.py"])
def test_an_edit_to_any_module_changes_the_code_digest(package_copy: Path, module: str) -> None:
    before = reuse.code_digest()
    path = package_copy / module
    path.write_text(path.read_text() + "\n# edited\n")
    reuse.code_digest.cache_clear()
    assert reuse.code_digest() != before


def test_moving_a_module_changes_the_code_digest(package_copy: Path) -> None:
    before = reuse.code_digest()
    (package_copy / "render" / "scan.py").rename(package_copy / "checks" / "scan.py")
    reuse.code_digest.cache_clear()
    assert reuse.code_digest() != before
