"""The same inputs build byte-identical sites whatever the environment and file-system order.

A baseline build runs in project A (files copied in sorted order, default `_site/`, run from
the project folder, PYTHONHASHSEED=0, TZ=UTC, LC_ALL=C). Each variant builds project B, a
copy of the same inputs whose files were created in reverse order and whose record and prose
files were renamed so they sort the other way round, from another working directory, into
another output folder, with another hash seed, time zone and locale. The trees must match
byte for byte, and neither holds an absolute path of either project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Project, copy_project, run_build, tree_digest

BASELINE_ENV = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C", "LANG": "C"}


def available_locales() -> set[str]:
    """Return the installed locales, normalised (`en_US.utf8` -> `en_us.utf-8`)."""
    try:
        listed = subprocess.run(
            ["locale", "-a"], capture_output=True, text=True, check=False, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"c", "posix"}
    return {name.lower().replace("utf8", "utf-8") for name in listed.split()}


def has_locale(name: str) -> bool:
    """Return whether a locale such as `en_US.UTF-8` is installed."""
    return name.lower().replace("utf8", "utf-8") in available_locales()


def reversed_copy(source: Path, target: Path) -> dict[str, str]:
    """Copy a project creating files in reverse order, renaming records and prose to re-sort.

    Return {new name: old name} of the renamed files.
    """
    files = sorted(
        path
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and "_site" not in path.parts
    )
    renamed: dict[str, str] = {}
    for folder, suffix in (("records", ".json"), ("content", ".md")):
        names = sorted(p.name for p in (source / folder).glob(f"*{suffix}"))
        for rank, name in enumerate(names):
            new = f"{len(names) - rank:02d}-renamed-{name}"
            renamed[f"{folder}/{new}"] = f"{folder}/{name}"
    original = {old: new for new, old in renamed.items()}
    for path in reversed(files):
        relative = path.relative_to(source).as_posix()
        destination = target / original.get(relative, relative)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(path.read_bytes())
    return renamed


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, str]]:
    """Project A built into its default `_site/` from its own folder."""
    project = copy_project(tmp_path_factory.mktemp("a") / "project-a")
    result = run_build(project.root, env=BASELINE_ENV, cwd=project.root)
    assert result.returncode == 0, result.stderr
    digest = tree_digest(project.out)
    assert len(digest) >= 10
    return project, digest


@pytest.fixture(scope="module")
def project_b(
    baseline: tuple[Project, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Project:
    """Project B: the same inputs, created in reverse order under other file names."""
    project_a, _ = baseline
    root = tmp_path_factory.mktemp("b") / "project-b"
    renamed = reversed_copy(project_a.root, root)
    for folder in ("records", "content"):
        order_a = [
            p.read_bytes() for p in sorted((project_a.root / folder).glob("*")) if p.is_file()
        ]
        order_b = [p.read_bytes() for p in sorted((root / folder).glob("*")) if p.is_file()]
        assert sorted(order_a) == sorted(order_b), "same contents"
        if folder == "records":
            assert order_a == order_b[::-1], "records sort the other way round"
    assert len(renamed) == 8
    return Project(root)


VARIANTS = [
    pytest.param(
        {"PYTHONHASHSEED": "4242", "TZ": "Asia/Kolkata", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
        id="C.UTF-8",
    ),
    pytest.param(
        {
            "PYTHONHASHSEED": "31337",
            "TZ": "America/St_Johns",
            "LC_ALL": "en_US.UTF-8",
            "LANG": "en_US.UTF-8",
        },
        id="en_US.UTF-8",
        marks=pytest.mark.skipif(not has_locale("en_US.UTF-8"), reason="en_US.UTF-8 missing"),
    ),
    pytest.param(
        {"PYTHONHASHSEED": "random", "TZ": "Pacific/Chatham", "LC_ALL": "POSIX", "LANG": "C"},
        id="POSIX",
    ),
    pytest.param(
        {"PYTHONHASHSEED": "7", "TZ": "EST+5EDT,M3.2.0/2,M11.1.0/2", "LANG": "C.UTF-8"},
        id="LANG-only-posix-tz",
    ),
]


@pytest.mark.parametrize("env", VARIANTS)
def test_same_inputs_build_identical_bytes_in_another_environment(
    baseline: tuple[Project, dict[str, str]],
    project_b: Project,
    tmp_path: Path,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project_a, digest_a = baseline
    if "LC_ALL" not in env:
        monkeypatch.delenv("LC_ALL", raising=False)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    out = tmp_path / "out" / "public"
    result = run_build(project_b.root, "--out", str(out), env=env, cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert tree_digest(out) == digest_a
    assert_no_absolute_paths(out, project_a, project_b, tmp_path)
    assert_no_absolute_paths(project_a.out, project_a, project_b, tmp_path)


def test_relative_out_and_root_from_another_folder_build_identical_bytes(
    baseline: tuple[Project, dict[str, str]], project_b: Project, tmp_path: Path
) -> None:
    """--root and --out given relative to an unrelated working directory."""
    project_a, digest_a = baseline
    cwd = tmp_path / "deep" / "cwd"
    cwd.mkdir(parents=True)
    root = os.path.relpath(project_b.root, cwd)
    result = subprocess.run(
        [sys.executable, str(project_b.root / "build.py"), "--root", root, "--out", "rel-out"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "99", "TZ": "Australia/Eucla"},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert tree_digest(cwd / "rel-out") == digest_a
    assert_no_absolute_paths(cwd / "rel-out", project_a, project_b, tmp_path)


def test_rebuilding_in_place_changes_nothing(
    baseline: tuple[Project, dict[str, str]], tmp_path: Path
) -> None:
    """A second build over an existing `_site/` (the swap path) writes the same bytes."""
    project_a, digest_a = baseline
    project = Project(tmp_path / "again")
    shutil.copytree(project_a.root, project.root)
    result = project.run(env={"PYTHONHASHSEED": "5", "TZ": "Asia/Tokyo"})
    assert result.returncode == 0, result.stderr
    assert tree_digest(project.out) == digest_a
    assert sorted(p.name for p in project.root.iterdir()) == sorted(
        p.name for p in project_a.root.iterdir()
    ), "no staging or old folders left"


def assert_no_absolute_paths(out: Path, *where: Project | Path) -> None:
    """No file under `out` mentions the projects, the output, the temp folder or the checkout."""
    roots = {str(item.root if isinstance(item, Project) else item) for item in where}
    roots |= {str(out), str(out.resolve()), str(ROOT), sys.prefix}
    files = [path for path in out.rglob("*") if path.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for root in roots:
            assert root.encode() not in data, f"{path.relative_to(out)} contains {root}"
            escaped = root.replace("/", "\\/").encode()
            assert escaped not in data, f"{path.relative_to(out)} contains {root} (escaped)"
