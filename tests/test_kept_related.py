"""A build keeps every guide's related guides in the build cache, by the site's layout (each
guide's slug, tags and nearest pages): the next build of the same layout, in a new process,
does not relate 10,000 guides again, and one of another layout, or a damaged entry, does."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.present import navigation
from site_builder.present.navigation import RELATED
from tests.conftest import Project, assert_as_cold
from tests.test_incremental import grow

RECORD = "records/000_f07234cca5c1d19d.json"
PROSE = "content/glm-5-2-sglang-dsa-indexer-fusion.md"


def related_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the guides related from now on (each build as if in a new process)."""
    counted: list[int] = []
    relate = navigation.SiteNavigation._related

    def related(self: navigation.SiteNavigation, guide: object, index: int) -> tuple[int, ...]:
        counted.append(index)
        return relate(self, guide, index)  # type: ignore[arg-type]

    monkeypatch.setattr(navigation.SiteNavigation, "_related", related)
    return counted


def built(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build as a new process would: no navigation left in memory by the last build."""
    monkeypatch.setattr(navigation, "_LAST", [])
    assert build(BuildConfig.for_root(project.root)).written


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_edit_that_moves_no_guide_relates_none_again(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    grow(project, 12)
    counted = related_counted(monkeypatch)
    built(project, monkeypatch)
    assert len(counted) == 16  # the first build relates every guide
    edit(project.root / RECORD, "GLM", "GLN")
    edit(project.root / PROSE, "## Who it is for", "## Who this is for")
    counted.clear()
    built(project, monkeypatch)
    assert counted == []
    assert_as_cold(project)


def test_a_changed_tag_relates_every_guide_again(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    grow(project, 12)
    counted = related_counted(monkeypatch)
    built(project, monkeypatch)
    edit(project.root / PROSE, "tags: [sglang, kernel-fusion", "tags: [sglang, kernel-tuning")
    counted.clear()
    built(project, monkeypatch)
    assert len(counted) == 16
    assert_as_cold(project)


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b"{}",
        b"[[1, 2]]",
        b"[" + b",".join([b"[99]"] * 16) + b"]",
        b"[" + b",".join([b"1"] * 16) + b"]",
    ],
    ids=["not JSON", "not a list", "too few guides", "no such guide", "not lists"],
)
def test_a_damaged_entry_is_related_again(
    project: Project, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    grow(project, 12)
    built(project, monkeypatch)
    (entry,) = [
        path
        for path in (project.root / ".cache").rglob("*")
        if path.is_file() and RELATED in path.parts
    ]
    # An entry whose checksum holds (so the cache hands it out) but whose guides do not.
    entry.write_bytes(hashlib.sha256(damage).hexdigest().encode() + b"\n" + damage)
    counted = related_counted(monkeypatch)
    edit(project.root / RECORD, "GLM", "GLN")
    built(project, monkeypatch)
    assert len(counted) == 16
    assert_as_cold(project)
