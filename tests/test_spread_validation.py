"""A big site's build validates its records over its worker processes (their bodies stay
there); what it finds is what one process finds, problems in the same order, and the site it
writes is byte for byte the same."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from site_builder.cache.reuse import code_digest, evidence_digest
from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.inputs import kept_records
from site_builder.inputs import normalize as normalize_module
from site_builder.inputs.kept_records import KeptHeads
from site_builder.inputs.load import VOCABULARY_NAME, load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.output.unchanged import input_digests
from site_builder.pipeline import build
from tests.conftest import Project, tree_digest
from tests.test_incremental import grow


def spread_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the records validated over worker processes, from now on."""
    calls: list[int] = []
    run_each = normalize_module.run_each

    def counted(task: Callable[[int], Any], count: int, jobs: int) -> list[Any]:
        calls.append(count)
        return run_each(task, count, jobs)

    monkeypatch.setattr(normalize_module, "run_each", counted)
    return calls


def problems_of(project: Project, jobs: int) -> tuple[object, ...]:
    """Return the problems a cold build over `jobs` processes stops with."""
    shutil.rmtree(project.root / ".cache", ignore_errors=True)
    with pytest.raises(InputError) as caught:
        build(BuildConfig.for_root(project.root, jobs=jobs))
    return caught.value.problems


@pytest.fixture
def big(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The seed project grown to 24 guides, its records too many to hold (HELD_RECORD_BYTES)."""
    grow(project, 20)
    monkeypatch.setattr(kept_records, "HELD_RECORD_BYTES", 0)
    return project


def test_workers_find_the_problems_one_process_finds(
    big: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = sorted((big.root / "records").glob("*.json"))
    records[3].write_text("{ not json", "utf-8")  # unreadable: its problem goes first
    broken = json.loads(records[9].read_text("utf-8"))
    broken["sourceReceipts"] = "none"  # a field of the wrong type
    records[9].write_text(json.dumps(broken), "utf-8")
    broken = json.loads(records[17].read_text("utf-8"))
    del broken["checkedAt"]  # a missing field
    records[17].write_text(json.dumps(broken), "utf-8")
    calls = spread_calls(monkeypatch)
    alone = problems_of(big, 1)
    assert not calls
    spread = problems_of(big, 2)
    assert calls == [24]
    assert spread == alone
    sources = [problem.source for problem in spread]
    assert sources[0] == f"records/{records[3].name}"
    assert {f"records/{records[n].name}" for n in (9, 17)} <= set(sources)


def test_a_site_validated_by_workers_is_the_one_a_process_writes(
    big: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = spread_calls(monkeypatch)
    assert build(BuildConfig.for_root(big.root, jobs=2)).written and calls == [24]
    cold = big.root / "_cold"
    assert build(BuildConfig.for_root(big.root, cold, cache=False, jobs=1)).written
    assert tree_digest(big.out) == tree_digest(cold)
    assert build(BuildConfig.for_root(big.root, jobs=2)).unchanged  # nothing changed since


def test_workers_send_back_each_record_without_its_body(big: Project) -> None:
    """What comes back is each record's digest and what the site needs; its body is read
    again from its file where it is needed, and is what one process reads."""
    config = BuildConfig.for_root(big.root, jobs=2)
    vocabulary = f"content/{VOCABULARY_NAME}"
    heads = KeptHeads(
        BuildCache(config.cache_dir), code_digest(), input_digests(config), vocabulary
    )
    digest_of = partial(evidence_digest, cache=None)
    hold = partial(heads.hold, big.root, digest_of, True)
    spread = partial(heads.sent, digest_of)
    sent = normalize(load_inputs(config), None, None, hold, spread, config.jobs).evidence
    alone = normalize(load_inputs(config)).evidence
    assert len(sent) == len(alone) == 24
    assert not any(evidence.body.held for evidence in sent)  # left in the workers
    assert [evidence.digest for evidence in sent] == [digest_of(item) for item in alone]
    assert [evidence.record for evidence in sent] == [evidence.record for evidence in alone]
