"""A build leaves the records that did not change since the last one on disk: it makes their
Evidence from the heads the cache kept, reads a body only for a verification or page it
must make again, and refuses a body whose file changed since the build began."""

from __future__ import annotations

import gc
import json
import os
import shutil
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.inputs import kept_records
from site_builder.inputs import normalize as normalize_module
from site_builder.inputs.kept_records import HEADS, KeptHeads
from site_builder.inputs.load import VOCABULARY_NAME, load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.raw import RawRecord
from site_builder.model.record_model import Evidence, LaterBody, RecordBody
from site_builder.model.schema import RuleFile
from site_builder.output import unchanged
from site_builder.output.unchanged import input_digests
from site_builder.pipeline import build
from site_builder.runtime import files
from site_builder.verify import kept_verifications
from site_builder.verify.records import verify
from tests.conftest import Project, assert_as_cold, build_with_a_fifo_at_render, tree_digest
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
    original = files.regular_bytes

    def counted(path: str | Path) -> bytes:
        if Path(path).parent.name == "records":
            read.append(Path(path).name)
        return original(path)

    monkeypatch.setattr(files, "regular_bytes", counted)
    return read


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


def test_verifying_a_record_read_for_it_lets_it_go_after(project: Project) -> None:
    assert build(BuildConfig.for_root(project.root)).written
    read = {
        item.source: item
        for item in normalize(load_inputs(BuildConfig.for_root(project.root)), None).evidence
    }
    rules = RuleFile()
    for source, later in kept_evidence(project).items():
        assert isinstance(later.body, LaterBody) and not later.body.held
        assert verify(later, rules) == verify(read[source], rules)
        assert not later.body.held  # a worker verifying thousands holds one at a time
        held = LaterBody(later.body.get)  # read, and held, before it is verified
        held.get()
        verify(replace(later, body=held), rules)
        assert held.held  # a record the builder holds stays held


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


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_big_sites_records_are_let_go_as_they_are_read(
    project: Project, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    grow(project, 20)  # enough guides for two worker processes
    monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)  # every site is big
    held: dict[str, int] = {}

    def counted(stage: str) -> None:
        held.setdefault(stage, record_bodies())

    config = BuildConfig.for_root(project.root, jobs=jobs)
    assert build(config, on_stage=counted).written
    before = held["unchanged"]  # the bodies other tests left
    if jobs == 1:  # one process verifies and renders every guide: it keeps what it read
        assert held["verify"] - before == held["render"] - before == 24
    else:  # the workers verifying and rendering pages read their own
        assert held["verify"] - before == held["render"] - before == 0
    assert_as_cold(project)


def reads_in_every_process(
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    name: str,
    log: Path,
    about: Callable[..., str] | None = None,
) -> None:
    """Log each call of `module.name` to `log`, from this process and any it forks: a line
    of its process id and, with `about`, what `about(*args)` says the call is about."""
    original = getattr(module, name)

    def logged(*args: Any) -> Any:
        with log.open("a", encoding="utf-8") as stream:
            stream.write(f"{os.getpid()} {about(*args)}\n" if about else f"{os.getpid()}\n")
        return original(*args)

    monkeypatch.setattr(module, name, logged)


@pytest.mark.parametrize("size", ["small", "big"])
def test_a_small_sites_workers_read_no_record_and_no_check_again(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, size: str
) -> None:
    """Within HELD_RECORD_BYTES a build holds what it read, and the workers it forks to
    render (and verify) share it; a bigger site's workers read each record once, to verify
    it and render its page, and no check back."""
    grow(project, 20)
    if size == "big":
        monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)
    bodies, checks = tmp_path / "bodies", tmp_path / "checks"
    reads_in_every_process(monkeypatch, kept_records, "_body", bodies)
    reads_in_every_process(monkeypatch, kept_verifications, "_checks", checks)
    held: dict[str, int] = {}
    config = BuildConfig.for_root(project.root, jobs=2)
    assert build(config, on_stage=lambda stage: held.setdefault(stage, record_bodies())).written
    read = {log.name: log.read_text().split() if log.exists() else [] for log in (bodies, checks)}
    if size == "small":
        assert read == {"bodies": [], "checks": []}
        assert held["render"] - held["unchanged"] == 24  # held here, shared with the workers
    else:  # each record read once, where it is verified and its page rendered
        assert len(read["bodies"]) == 24 and read["checks"] == []
        assert os.getpid() not in {int(pid) for pid in read["bodies"]}
    assert_as_cold(project)


def test_records_are_held_up_to_a_size() -> None:
    assert kept_records.holds_records([1 << 20] * 64)  # 64 MB: about 2,700 guides today
    assert not kept_records.holds_records([1 << 20] * 64 + [1])
    assert kept_records.holds_records([])


class Checks(list[Any]):
    """A verification's checks as read back, in a list that can be watched (`weakref`)."""


def test_rendering_a_kept_record_lets_it_go_after(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(project.root, jobs=1)
    assert build(config).written
    template = project.root / "templates" / "guide.html"
    template.write_text(template.read_text() + "{# every page renders again #}\n")
    read: dict[str, list[weakref.ref[Any]]] = {"bodies": [], "checks": []}
    body, checks = kept_records._body, kept_verifications._checks

    def watched(kind: str, load: Callable[..., Any]) -> Callable[..., Any]:
        def loaded(*args: Any) -> Any:
            made = load(*args)
            made = Checks(made) if kind == "checks" else made
            read[kind].append(weakref.ref(made))
            return made

        return loaded

    monkeypatch.setattr(kept_records, "_body", watched("bodies", body))
    monkeypatch.setattr(kept_verifications, "_checks", watched("checks", checks))
    alive: dict[str, int] = {}

    def at(stage: str) -> None:
        gc.collect()
        alive.setdefault(stage, sum(1 for refs in read.values() for ref in refs if ref()))

    assert build(config, on_stage=at).written
    # Each record and its every check were read once, to render and scan its page, and let
    # go of after: a worker rendering thousands of pages holds one guide's at a time.
    assert len(read["bodies"]) == len(read["checks"]) == 4 and alive["check"] == 0
    assert_as_cold(project)


@pytest.mark.parametrize(("jobs", "size"), [(1, "small"), (2, "small"), (2, "big")])
def test_a_build_holds_one_raw_record_at_a_time(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, jobs: int, size: str
) -> None:
    """Each process validating records reads, validates and lets go of one raw record at a
    time: the builder, or on a big site with workers (whose bodies stay there), the workers."""
    grow(project, 20)
    if size == "big":
        monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)
    log = tmp_path / "alive"
    validate = normalize_module.record_evidence

    def counted(raw: RawRecord, *args: object) -> object:
        gc.collect()
        records = (item for item in gc.get_objects() if isinstance(item, RawRecord))
        alive = sum(1 for item in records if item.source.startswith("records/"))
        with log.open("a", encoding="utf-8") as stream:
            stream.write(f"{os.getpid()} {alive}\n")
        return validate(raw, *args)

    monkeypatch.setattr(normalize_module, "record_evidence", counted)
    assert build(BuildConfig.for_root(project.root, jobs=jobs)).written
    seen = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    assert len(seen) == 24 and max(alive for _, alive in seen) == 1
    where = {pid for pid, _ in seen}
    assert where == {os.getpid()} if size == "small" else os.getpid() not in where
    assert_as_cold(project)


def test_a_record_swapped_for_a_fifo_while_pages_render_stops_the_build_without_waiting(
    project: Project,
) -> None:
    """A worker reading a big site's record again never waits on a named pipe put in its
    place since the build listed it: the build stops with one located error."""
    grow(project, 20)
    assert project.run().returncode == 0
    before = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")
    held_none = "from site_builder.inputs import kept_records\nkept_records.HELD_RECORD_BYTES = 0"
    code, stderr = build_with_a_fifo_at_render(project.root, RECORD, prelude=held_none)
    assert code == 1
    message = f"{RECORD}: file: cannot be read: no longer a regular file; build again"
    assert stderr.strip().splitlines() == [message]
    assert tree_digest(project.out) == before
    assert project.run().returncode == 0
    assert_as_cold(project)


def test_a_record_saved_while_pages_render_stops_the_build(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big site's workers read its records again: one saved since it was first read is
    an input error, not a page made of other bytes than its verification."""
    grow(project, 20)
    monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)
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


def test_a_record_saved_while_a_small_site_renders_is_built_next_time(project: Project) -> None:
    """A small site's build holds the bytes it read: the site it writes is of those, and
    the next build (which the save does not let skip) is of the saved ones."""
    grow(project, 20)
    config = BuildConfig.for_root(project.root, jobs=2)
    path = project.root / RECORD
    first = path.read_bytes()

    def save(stage: str) -> None:
        if stage == "render":
            path.write_bytes(first.replace(b"GLM", b"GLN", 1))

    assert build(config, on_stage=save).written
    saved = path.read_bytes()
    path.write_bytes(first)
    assert_as_cold(project)  # the bytes it read
    path.write_bytes(saved)
    os.utime(path, ns=(time.time_ns(), time.time_ns()))
    again = build(config)
    assert again.written and not again.unchanged
    assert_as_cold(project)
