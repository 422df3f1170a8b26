"""A build with a cache on disk verifies each record the cache has no verification of in the
worker that renders its page: the record is read once, the verification is written to the
cache there and only its head comes back; what the build reports and writes is what a build
without a cache, in one process, reports and writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from site_builder.cache.store import VERSION
from site_builder.config import BuildConfig
from site_builder.inputs import kept_records
from site_builder.model.claims import Verification
from site_builder.model.models import BuildReport
from site_builder.output import unchanged
from site_builder.pipeline import build
from site_builder.render import pages
from site_builder.verify import kept_verifications, records
from tests.conftest import Project, tree_digest
from tests.test_incremental import grow
from tests.test_kept_records import reads_in_every_process

GUIDES = 24
"""The seed guides and 20 probes: enough for the build to render over two processes."""


def logged_calls(log: Path) -> list[tuple[int, str]]:
    """Return the `(pid, record)` of each logged call."""
    lines = log.read_text("utf-8").splitlines() if log.exists() else []
    return [(int(pid), source) for pid, source in (line.split(" ", 1) for line in lines)]


def watch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """Log every record verified, every guide page rendered and every check read back."""
    logs = {name: tmp_path / name for name in ("verified", "rendered", "checks")}
    reads_in_every_process(
        monkeypatch, records, "verify", logs["verified"], lambda evidence, _: evidence.source
    )
    reads_in_every_process(
        monkeypatch,
        pages,
        "render_guide",
        logs["rendered"],
        lambda _, page, *rest: page.view.guide.evidence.source,
    )
    reads_in_every_process(
        monkeypatch, kept_verifications, "_checks", logs["checks"], lambda _: "checks"
    )
    return logs


def shown(report: BuildReport) -> list[tuple[str, int, int, int, tuple[Any, ...]]]:
    """Return what the report shows of each verification, in its order."""
    return [
        (v.source, len(v.checks), v.count("verified"), v.inferred, v.unsettled)
        for v in report.verifications
    ]


def cold(project: Project) -> BuildReport:
    """Build the project as a build without a cache does, in one process, into `_cold`."""
    config = BuildConfig.for_root(project.root, project.root / "_cold", cache=False, jobs=1)
    report = build(config)
    assert report.written
    return report


def verify_entries(project: Project) -> set[str]:
    """Return the names of the verifications kept in the project's cache."""
    folder = project.root / ".cache" / f"v{VERSION}" / "verify"
    return {name for name in os.listdir(folder) if not name.startswith(".")}


@pytest.mark.parametrize("size", ["small", "big"])
def test_each_record_is_verified_once_where_its_page_is_rendered(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, size: str
) -> None:
    grow(project, GUIDES - 4)
    if size == "big":  # the records are let go as they are read: the workers read their own
        monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)
    logs = watch(monkeypatch, tmp_path)
    report = build(BuildConfig.for_root(project.root, jobs=2))
    assert report.written
    verified, rendered = logged_calls(logs["verified"]), logged_calls(logs["rendered"])
    sources = {source for _, source in verified}
    assert len(verified) == len(sources) == GUIDES  # each record once
    assert sorted(verified) == sorted(rendered)  # by the process that rendered its page
    assert os.getpid() not in {pid for pid, _ in verified}  # none by the builder
    assert logged_calls(logs["checks"]) == []  # no check read back from the cache
    assert len(verify_entries(project)) == GUIDES  # each kept for the next build
    expected = cold(project)
    assert shown(report) == shown(expected)
    assert report.findings == expected.findings
    assert tree_digest(project.out) == tree_digest(project.root / "_cold")


def test_the_next_build_reads_back_what_the_workers_kept(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    grow(project, GUIDES - 4)
    config = BuildConfig.for_root(project.root, jobs=2)
    first = build(config)
    assert first.written
    monkeypatch.setattr(unchanged, "RECENT_NS", 0)  # the up-to-date check reads no file again
    logs = watch(monkeypatch, tmp_path)
    record = next(project.root.glob("records/*probe-03.json"))
    record.write_text(record.read_text("utf-8").replace("pinned-", "pinned-again-", 1), "utf-8")
    second = build(config)
    assert second.written and not second.unchanged
    verified = logged_calls(logs["verified"])
    assert [source for _, source in verified] == [f"records/{record.name}"]  # that one alone
    assert logged_calls(logs["checks"]) != []  # its page is drawn again: its checks are read
    assert shown(second) == shown(cold(project))
    assert tree_digest(project.out) == tree_digest(project.root / "_cold")


def test_a_page_kept_without_its_verification_is_verified_again(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A page the cache has, whose record's verification it lost (a damaged or removed
    entry), is not rendered again; its record is verified after the pages."""
    grow(project, GUIDES - 4)
    config = BuildConfig.for_root(project.root, jobs=2)
    first = build(config)
    assert first.written
    kept = verify_entries(project)
    shutil.rmtree(project.root / ".cache" / f"v{VERSION}" / "verify")
    shutil.rmtree(project.out)  # so the build is not skipped as up to date
    logs = watch(monkeypatch, tmp_path)
    second = build(config)
    assert second.written
    assert logged_calls(logs["rendered"]) == []  # every page read back from the cache
    assert len(logged_calls(logs["verified"])) == GUIDES
    assert verify_entries(project) == kept
    assert shown(second) == shown(first) == shown(cold(project))
    assert all(isinstance(v, Verification) and v.stored_as for v in second.verifications)
    assert tree_digest(project.out) == tree_digest(project.root / "_cold")
