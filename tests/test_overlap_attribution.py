"""A new guide that overlaps an existing page: every finding names the new guide's files.

An editor adding one guide must never be told to change a page that was there before it: the
overlap, distinct-intent, cannibalisation, title and description findings all name the new
guide's prose (or its record, for what the record claims) and the new guide's URL; the
existing page appears only as the related page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import Project, audit
from tests.new_guide import probe_record, write_probe_guide

SEQUENCE_RECORD = "003_d837ec4df0827390.json"
SEQUENCE_GUIDE = "content/glm-5-2-vllm-sequence-parallel-moe.md"
SEQUENCE_URL = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
# Sorts before the existing guide's URL, so URL order alone would pick the wrong page.
COPY_SLUG = "glm-5-2-aaa-sequence-parallel-copy"
COPY_GUIDE = f"content/{COPY_SLUG}.md"
COPY_RECORD = "records/900_copy.json"
MTP_URL = "https://glm52.ai/guides/glm-5-2-mtp-speculative-decoding/"
MTP_JOB = "configure and validate MTP speculative decoding"
PAIR_CHECKS = {"overlap", "distinct-intent", "cannibalisation", "title", "description"}


def copy_sequence_guide(project: Project, published: str = "2026-09-01") -> None:
    """Add a new guide copying the sequence-parallel guide's record and prose under a new slug."""
    record = project.record(SEQUENCE_RECORD)
    record["operationId"] = "20260901000000-copy"
    project.save_record("900_copy.json", record)
    text = (project.root / SEQUENCE_GUIDE).read_text("utf-8")
    lines = [line for line in text.splitlines(True) if not line.startswith(("replaces:", "#"))]
    text = "".join(lines).replace("slug: glm-5-2-vllm-sequence-parallel-moe", f"slug: {COPY_SLUG}")
    text = text.replace("record: 20260823213641-315eecbf11", "record: 20260901000000-copy")
    text = text.replace("published: 2026-08-23", f"published: {published}")
    project.write(COPY_GUIDE, text)


def with_nearby(project: Project, overlap: dict[str, Any], **front: Any) -> Path:
    """Write the probe guide whose record carries this overlap audit."""
    path = write_probe_guide(project.root, **front)
    record = probe_record(overlapAudit=overlap)
    project.save_record("900_latency_probe.json", record)
    return path


def test_every_finding_about_a_copied_guide_names_the_new_guides_files(project: Project) -> None:
    _, before = audit(project)
    copy_sequence_guide(project)
    code, report = audit(project)
    assert code == 1
    pair = [f for f in report["findings"] if f["check"] in PAIR_CHECKS]
    assert {f["check"] for f in pair} == PAIR_CHECKS, "each kind of pair finding is raised"
    for finding in pair:
        assert finding["source"] in {COPY_GUIDE, COPY_RECORD}, finding
        assert finding["page"] == f"/guides/{COPY_SLUG}/", finding
        assert SEQUENCE_URL in finding["related"], finding
    (claim,) = [f for f in pair if f["check"] == "distinct-intent"]
    assert claim["source"] == COPY_RECORD, "a record's claim is fixed in the record"
    # Nothing new is filed against the existing guide's prose or record.
    existing = {SEQUENCE_GUIDE, f"records/{SEQUENCE_RECORD}"}

    def filed(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
        # sitemap-count's message counts the site's pages, one more now; it was there before.
        return sorted((f["check"], f["severity"]) for f in findings if f["source"] in existing)

    assert filed(report["findings"]) == filed(before["findings"])


def test_between_two_new_guides_the_later_published_one_is_filed(project: Project) -> None:
    copy_sequence_guide(project, published="2026-09-01")
    # Remove the existing guide from the registry: neither guide is live, so the later
    # `published` decides, although the original sorts after the copy by URL.
    registry = project.root / "content" / "registry.json"
    data = json.loads(registry.read_text("utf-8"))
    data["pages"] = [p for p in data["pages"] if not p["url"].endswith(SEQUENCE_URL)]
    registry.write_text(json.dumps(data), "utf-8")
    guide = project.root / SEQUENCE_GUIDE
    guide.write_text(
        "".join(
            line for line in guide.read_text("utf-8").splitlines(True) if "replaces:" not in line
        )
    )
    _, report = audit(project)
    pair = [f for f in report["findings"] if f["check"] in PAIR_CHECKS]
    assert pair and {f["page"] for f in pair} == {f"/guides/{COPY_SLUG}/"}
    # Published earlier than the original, the copy is the older page: the original is filed.
    copy = project.root / COPY_GUIDE
    copy.write_text(
        copy.read_text("utf-8").replace("published: 2026-09-01", "published: 2026-08-01")
    )
    _, report = audit(project)
    pair = [f for f in report["findings"] if f["check"] in PAIR_CHECKS]
    assert pair and {f["page"] for f in pair} == {SEQUENCE_URL}
    assert {f["source"] for f in pair} <= {SEQUENCE_GUIDE, f"records/{SEQUENCE_RECORD}"}


def test_a_reader_job_identical_to_a_live_page_is_refused_when_named_without_a_difference(
    project: Project,
) -> None:
    with_nearby(
        project,
        {"nearestPages": [{"url": MTP_URL, "readerJob": MTP_JOB, "difference": ""}]},
        reader_job="Configure and validate MTP speculative decoding.",
    )
    result = project.run()
    assert result.returncode == 1
    assert "cannibalisation" in result.stderr and MTP_URL in result.stderr
    code, report = audit(project)
    assert code == 1
    (error,) = [f for f in report["findings"] if f["check"] == "cannibalisation"]
    assert error["severity"] == "error" and error["score"] == 1.0
    assert error["reviewed"] is False
    assert error["source"] == "content/glm-5-2-sglang-prefill-latency-probe.md"
    assert "give this guide a reader_job of its own" in error["message"]


def test_an_identical_reader_job_stays_an_error_when_the_record_states_a_difference(
    project: Project,
) -> None:
    with_nearby(
        project,
        {"nearestPages": [{"url": MTP_URL, "difference": "this one is about chunked prefill"}]},
        reader_job=MTP_JOB.upper() + "!",  # identical once case and punctuation are dropped
    )
    code, report = audit(project)
    assert code == 1
    (error,) = [f for f in report["findings"] if f["check"] == "cannibalisation"]
    assert error["severity"] == "error" and error["reviewed"] is True
    assert error["score"] == 1.0


def test_a_near_identical_reader_job_is_reviewed_only_with_a_stated_difference(
    project: Project,
) -> None:
    job = "Configure and validate MTP speculative decoding on H200"  # scores 0.82
    with_nearby(project, {"nearestPages": [{"url": MTP_URL}]}, reader_job=job)
    code, report = audit(project)
    assert code == 1
    (error,) = [f for f in report["findings"] if f["check"] == "cannibalisation"]
    assert 0.8 <= error["score"] < 0.9 and error["reviewed"] is False
    # A record-wide note counts only when the record names that page alone.
    other = "https://glm52.ai/guides/glm-5-2-nvfp4-sglang/"
    overlap = {"closestPages": [MTP_URL, other], "distinction": "H200 only, not in general"}
    with_nearby(project, overlap, reader_job=job)
    code, report = audit(project)
    assert code == 1
    overlap = {"closestPages": [MTP_URL], "distinction": "H200 only, not in general"}
    with_nearby(project, overlap, reader_job=job)
    code, report = audit(project)
    assert code == 0
    (warning,) = [f for f in report["findings"] if f["check"] == "cannibalisation"]
    assert warning["severity"] == "warning" and warning["reviewed"] is True
    # So does a difference stated for that page.
    overlap = {"nearestPages": [{"url": MTP_URL, "difference": "H200 only"}, {"url": other}]}
    with_nearby(project, overlap, reader_job=job)
    code, _ = audit(project)
    assert code == 0


def test_a_reworded_duplicate_intent_is_an_error_until_the_record_states_the_difference(
    project: Project,
) -> None:
    write_probe_guide(project.root)
    # Its record holds other evidence: only the intents (title, job, description) are alike.
    record = probe_record(
        "20261101100000-reworded",
        status="decode-batch-ceiling-audit",
        revisions={"vllmTag": "v0.27.1"},
        sourceReceipts=[],
        model={"name": "GLM-5.2", "precision": "NVFP4"},
        latencyProbe={"decodeBatchCeiling": 512, "boundary": "read from the release notes"},
        schedulerNotes=["decode batches cap at 512 sequences on B200"],
        invariants={},
        decision={"classification": "raise-the-decode-ceiling-after-one-canary"},
    )
    project.save_record("901_reworded.json", record)
    front = yaml.safe_load(
        (project.root / "content/glm-5-2-sglang-prefill-latency-probe.md")
        .read_text("utf-8")
        .split("---")[1]
    )
    front.update(
        slug="glm-5-2-sglang-prefill-latency-probe-again",
        record="20261101100000-reworded",
        title=front["title"].replace("raising chunk size", "raising the chunk size"),
        reader_job=front["reader_job"].replace("raise", "increase"),
        published="2026-11-03",
    )
    body = "Reworded.\n\nSee [the first probe](/guides/glm-5-2-sglang-prefill-latency-probe/).\n"
    prose = project.write(
        "content/glm-5-2-sglang-prefill-latency-probe-again.md",
        f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}",
    )
    code, report = audit(project)
    assert code == 1
    intent = [f for f in report["findings"] if f["check"] == "overlap" and "intent" in f["message"]]
    (error,) = intent
    assert error["severity"] == "error" and 0.8 <= error["score"] < 0.9
    assert "reworded duplicate" in error["message"]
    assert error["source"] == prose.relative_to(project.root).as_posix()
    assert not [f for f in report["findings"] if f["check"] == "cannibalisation"], "jobs ~0.7"
    record["overlapAudit"] = {
        "nearestPages": [
            {
                "url": "/guides/glm-5-2-sglang-prefill-latency-probe/",
                "difference": "repeats the probe at a second chunk size",
            }
        ]
    }
    project.save_record("901_reworded.json", record)
    code, report = audit(project)
    (warning,) = [
        f for f in report["findings"] if f["check"] == "overlap" and "intent" in f["message"]
    ]
    assert warning["severity"] == "warning" and warning["reviewed"] is True
