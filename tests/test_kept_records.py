"""A build leaves the records that did not change since the last one on disk: it makes their
Evidence from the heads the cache kept, reads a body only for a verification or page it
must make again, and refuses a body whose file changed since the build began."""

from __future__ import annotations

import gc
import json
import os
import shutil
from pathlib import Path

import pytest

from site_builder import unchanged
from site_builder.cache import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.kept_records import HEADS, KeptHeads
from site_builder.load import VOCABULARY_NAME, load_inputs
from site_builder.normalize import normalize
from site_builder.pipeline import build
from site_builder.record_model import Evidence, RecordBody
from site_builder.reuse import code_digest
from site_builder.unchanged import input_digests
from tests.conftest import Project, tree_digest
from tests.test_incremental import grow

RECORD = "records/000_f07234cca5c1d19d.json"


def kept_evidence(project: Project) -> dict[str, Evidence]:
    """Return the Evidence a build would make of the kept records, by source."""
    config = BuildConfig.for_root(project.root)
    digests = input_digests(config)
    vocabulary = f"content/{VOCABULARY_NAME}"
    heads = KeptHeads(BuildCache(config.cache_dir), code_digest(), digests, vocabulary)
    normalized = normalize(load_inputs(config), None)
    assert normalized.vocabulary is not None
    return {item.source: item for item in heads.evidence(project.root, normalized.vocabulary)}


def read_records(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the record files read from now on."""
    read: list[str] = []
    original = Path.read_bytes

    def counted(path: Path) -> bytes:
        if path.parent.name == "records":
            read.append(path.name)
        return original(path)

    monkeypatch.setattr(Path, "read_bytes", counted)
    return read


def assert_as_cold(project: Project) -> None:
    """The site written is what a build without a cache writes."""
    cold = project.root / "_cold"
    assert build(BuildConfig.for_root(project.root, cold, cache=False)).written
    assert tree_digest(project.out) == tree_digest(cold)


@pytest.mark.parametrize("change", ["record", "prose"])
def test_a_build_reads_only_the_record_of_the_guide_that_changed(
    project: Project, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    monkeypatch.setattr(unchanged, "RECENT_NS", 0)  # the up-to-date check reads no file again
    config = BuildConfig.for_root(project.root)
    assert build(config).written
    if change == "record":  # a new section on its own page: no other page shows it
        data = project.record(Path(RECORD).name)
        project.save_record(Path(RECORD).name, {**data, "editorNote": "checked again"})
    else:  # its page is made again: its record is read for it, no other
        prose = project.root / "content" / "glm-5-2-vllm-decode-context-parallel.md"
        prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    read = read_records(monkeypatch)
    report = build(config)
    assert report.written and not report.unchanged
    assert len(set(read)) == 1
    if change == "record":
        assert set(read) == {Path(RECORD).name}
    monkeypatch.undo()
    assert_as_cold(project)


def test_kept_evidence_is_what_reading_the_record_gives(project: Project) -> None:
    assert build(BuildConfig.for_root(project.root)).written
    kept = kept_evidence(project)
    read = normalize(load_inputs(BuildConfig.for_root(project.root)), None).evidence
    assert sorted(kept) == sorted(item.source for item in read) and len(kept) == 4
    for evidence in read:
        later = kept[evidence.source]
        assert not isinstance(later.body, RecordBody)
        assert later == evidence  # every field, the body read from the file
        assert later.checked_at.tzname() == evidence.checked_at.tzname()
        assert later.record == evidence.record and later.receipts == evidence.receipts


def test_a_kept_record_saved_since_the_build_began_is_an_input_error(project: Project) -> None:
    assert build(BuildConfig.for_root(project.root)).written
    kept = kept_evidence(project)[RECORD]
    path = project.root / RECORD
    path.write_bytes(path.read_bytes().replace(b"GLM", b"GLN", 1))
    with pytest.raises(InputError, match="changed while the build ran; build again"):
        _ = kept.record
    os.utime(path)  # and the next build reads it
    assert build(BuildConfig.for_root(project.root)).written


def test_damaged_heads_are_read_again(project: Project) -> None:
    config = BuildConfig.for_root(project.root)
    assert build(config).written
    (entry,) = (project.root / ".cache").glob("v*/record heads/*")
    checksum, _, payload = entry.read_bytes().partition(b"\n")
    entry.write_bytes(checksum + b"\n" + payload.replace(b"records/", b"records/x", 1))
    assert kept_evidence(project) == {}  # a damaged entry is not used
    prose = next((project.root / "content").glob("glm-*.md"))
    prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    assert build(config).written
    assert_as_cold(project)


def test_a_record_that_could_not_be_read_is_never_kept(project: Project) -> None:
    config = BuildConfig.for_root(project.root)
    cache = BuildCache(config.cache_dir)
    digests = {**input_digests(config), RECORD: "unreadable"}
    vocabulary = f"content/{VOCABULARY_NAME}"
    evidence = normalize(load_inputs(config), None).evidence
    heads = KeptHeads(cache, code_digest(), digests, vocabulary)
    heads.keep((e, "digest") for e in evidence)
    kept = json.loads(cache.read(HEADS, heads._key) or b"{}")
    assert len(kept) == 3 and RECORD not in kept  # load reads it, and says why it cannot
    kept[RECORD] = ["unreadable", *kept[next(iter(kept))][1:]]  # as if it had been
    cache.write(HEADS, heads._key, json.dumps(kept).encode())
    assert RECORD not in KeptHeads(cache, code_digest(), digests, vocabulary).kept


def record_bodies() -> int:
    """Count the record bodies alive in this process."""
    gc.collect()
    return sum(1 for item in gc.get_objects() if isinstance(item, RecordBody))


def test_records_are_let_go_once_verified(project: Project) -> None:
    grow(project, 20)  # enough guides for two worker processes
    held: dict[str, int] = {}

    def counted(stage: str) -> None:
        held.setdefault(stage, record_bodies())

    config = BuildConfig.for_root(project.root, jobs=2)
    assert build(config, on_stage=counted).written
    before = held["unchanged"]  # the bodies other tests left
    assert held["verify"] - before == 24  # every record was read, and held to be verified
    assert held["render"] - before == 0  # then the workers rendering pages read their own
    assert_as_cold(project)


def test_a_record_saved_while_pages_render_stops_the_build(project: Project) -> None:
    grow(project, 20)
    config = BuildConfig.for_root(project.root, jobs=2)
    assert build(config).written
    before = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")  # every record is read and every page rendered
    path = project.root / RECORD

    def save(stage: str) -> None:
        if stage == "render":
            path.write_bytes(path.read_bytes().replace(b"GLM", b"GLN", 1))

    with pytest.raises(InputError, match=f"{RECORD}: .*changed while the build ran"):
        build(config, on_stage=save)
    assert tree_digest(project.out) == before
    assert build(config).written
    assert_as_cold(project)
