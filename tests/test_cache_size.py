"""The build cache stays a bounded size however it is used: builds and audits alike drop
the entries they did not use once those outnumber the used ones twice (so edits back and
forth still hit), and an audit keeps what the next build reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.render import pages as render
from tests.conftest import Project, tree_digest
from tests.test_incremental import count_calls

KINDS = ("scan", "html", "verify")


def entries(project: Project) -> dict[str, int]:
    """Return how many entries the project's cache holds of each of KINDS."""
    (version,) = (project.root / ".cache").glob("v*")
    return {kind: sum(1 for _ in (version / kind).iterdir()) for kind in KINDS}


def cache_files(project: Project) -> list[Path]:
    """Return every file of the project's cache."""
    return sorted(path for path in (project.root / ".cache").rglob("*") if path.is_file())


def edit_template(project: Project, step: int) -> None:
    """Change the guide template (every guide page is rendered again)."""
    template = project.root / "templates" / "guide.html"
    template.write_text(template.read_text("utf-8") + f"{{# edit {step} #}}\n", "utf-8")


def edit_records(project: Project, step: int) -> None:
    """Change every record (every guide is verified and rendered again)."""
    for path in (project.root / "records").glob("*.json"):
        project.save_record(path.name, {**project.record(path.name), "cacheSizeProbe": step})


@pytest.mark.parametrize("edit", [edit_template, edit_records])
def test_audits_after_edits_keep_the_cache_bounded(
    project: Project, edit: Callable[[Project, int], None]
) -> None:
    assert project.run("--quiet").returncode == 0
    site = entries(project)
    for step in range(5):
        edit(project, step)
        assert project.run("--audit", "--quiet").returncode == 0
    after = entries(project)
    for kind in KINDS:
        assert after[kind] <= 3 * site[kind], (kind, site, after)


def test_a_build_after_an_audit_renders_nothing_again(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(project.root)  # one process: every render is counted
    build(config)
    prose = project.root / "content" / "glm-5-2-sglang-weight-cache-daemon.md"
    prose.write_text(prose.read_text("utf-8") + "\nOne more line.\n", "utf-8")
    # The editor's path: edit, audit, build. The audit renders the edited guide (its cache
    # grows, so it prunes) and reads the other pages back without their HTML, which it must
    # keep for the build.
    rendered = count_calls(monkeypatch, render, "render_guide")
    build(config, write=False, html=False)
    assert len(rendered) == 1
    report = build(config)
    assert report.written and len(rendered) == 1
    cold = project.root / "cold"
    build(BuildConfig.for_root(project.root, cold, cache=False))
    assert tree_digest(project.out) == tree_digest(cold)


def test_an_audit_that_reads_its_report_back_removes_nothing(project: Project) -> None:
    assert project.run("--quiet").returncode == 0
    for step in range(3):
        edit_template(project, step)
        assert project.run("--audit", "--quiet").returncode == 0
    before = cache_files(project)
    again = project.run("--audit", "--quiet", "--timings")
    assert again.returncode == 0 and "unchanged" in again.stderr
    assert cache_files(project) == before
