"""Two builds of the same inputs are byte-identical, whatever the environment."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Project, run_build, seed_root, tree_digest


def test_builds_are_byte_identical_across_hash_seed_timezone_and_cwd(
    project: Project, tmp_path: Path
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    a = project.run("--out", str(first), env={"PYTHONHASHSEED": "1", "TZ": "UTC", "LC_ALL": "C"})
    b = run_build(
        project.root,
        "--out",
        str(second),
        env={"PYTHONHASHSEED": "4242", "TZ": "Asia/Shanghai", "LC_ALL": "C.UTF-8"},
        cwd=tmp_path,
    )
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    assert tree_digest(first) == tree_digest(second)
    assert len(tree_digest(first)) >= 10


def test_output_holds_no_absolute_paths_or_build_time(site: Path) -> None:
    checkout = str(Path(__file__).resolve().parent.parent).encode()
    built_from = str(seed_root()).encode()
    for path in site.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert checkout not in content, path
            assert built_from not in content, path
            assert str(site).encode() not in content, path
