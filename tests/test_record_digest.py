"""A record's digest (what its page, verification and overlap sketches are cached by) is made
of its file's bytes and the editorial keys left out of it, not of the record serialised again:
a build never turns a record back into JSON to digest it, and the digest still changes with
anything that changes the record."""

from __future__ import annotations

import shutil

import pytest
import yaml

from site_builder.cache import reuse
from site_builder.config import BuildConfig
from site_builder.inputs.load import VOCABULARY_NAME, load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.pipeline import build
from tests.conftest import Project, tree_digest

NOTE = "Checked again by the desk on 6 December"


def digests(project: Project) -> dict[str, str]:
    """Return each valid record's digest by source, as a build reads them."""
    normalized = normalize(load_inputs(BuildConfig.for_root(project.root)))
    return {e.source: reuse.evidence_digest(e, None) for e in normalized.evidence}


def first_record(project: Project) -> str:
    return sorted(path.name for path in (project.root / "records").glob("*.json"))[0]


def test_a_build_never_serialises_a_record_to_digest_it(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(record: object) -> str:
        raise AssertionError("a record was serialised to be digested")

    monkeypatch.setattr(reuse, "_record_json", refused)
    for jobs in (1, 2):
        shutil.rmtree(project.root / ".cache", ignore_errors=True)
        report = build(BuildConfig.for_root(project.root, jobs=jobs))
        assert report.written and report.guides == 4


def test_the_digest_follows_the_files_bytes(project: Project) -> None:
    name = first_record(project)
    before = digests(project)
    record = project.record(name)
    project.save_record(name, {**record, "editorNote": NOTE})
    after = digests(project)
    changed = [source for source in before if before[source] != after[source]]
    assert changed == [f"records/{name}"]


def test_the_digest_follows_the_editorial_keys_left_out(project: Project) -> None:
    """The same bytes make another record when the vocabulary leaves another key out, so the
    record's digest differs, and a cached build drops the section as a cold build does."""
    name = first_record(project)
    project.save_record(name, {**project.record(name), "editorNote": NOTE})
    build(BuildConfig.for_root(project.root))
    assert NOTE in "".join(p.read_text("utf-8") for p in project.out.rglob("index.html"))
    before = digests(project)

    path = project.root / "content" / VOCABULARY_NAME
    vocabulary = yaml.safe_load(path.read_text("utf-8"))
    vocabulary["editorial_keys"] = [*vocabulary["editorial_keys"], "editorNote"]
    path.write_text(yaml.safe_dump(vocabulary, sort_keys=False), "utf-8")
    after = digests(project)
    assert all(before[source] != after[source] for source in before)

    build(BuildConfig.for_root(project.root))  # with the cache of the build before
    cold = project.root / "cold"
    build(BuildConfig.for_root(project.root, cold, cache=False))
    assert NOTE not in "".join(p.read_text("utf-8") for p in project.out.rglob("index.html"))
    assert tree_digest(project.out) == tree_digest(cold)
