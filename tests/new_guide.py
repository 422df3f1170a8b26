"""Write a guide of a shape no seed has (record + prose) into a test project.

Its intent and evidence share nothing with the seeds, so the overlap audit stays quiet and a
test sees only what it changes: front matter, drafts, dates, the registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

SLUG = "glm-5-2-sglang-prefill-latency-probe"
OPERATION_ID = "20261101090000-latencyprobe"
TITLE = "GLM-5.2 on SGLang: chunked prefill latency probe before raising chunk size"
READER_JOB = "Decide whether to raise SGLang's chunked-prefill size for long GLM-5.2 prompts."


def probe_record(operation_id: str = OPERATION_ID, **overrides: Any) -> dict[str, Any]:
    """Return a valid record with sections of new shapes (list of lists, nested objects)."""
    record: dict[str, Any] = {
        "schemaVersion": 1,
        "operationId": operation_id,
        "checkedAt": "2026-11-01T09:00:00Z",
        "status": "pinned-source-chunked-prefill-latency-probe",
        "revisions": {"sglangTag": "v0.6.2", "sglangCommit": "a" * 40},
        "sourceReceipts": [
            {
                "label": "chunked prefill scheduler",
                "url": "https://github.com/sgl-project/sglang/blob/v0.6.2/python/sglang/srt/managers/scheduler.py",
                "bytes": 120431,
                "sha256": "b" * 64,
            }
        ],
        "model": {"name": "GLM-5.2", "precision": "FP8"},
        "latencyProbe": {
            "chunkSizes": [[2048, 0.41], [4096, 0.63], [8192, 1.12]],
            "byPromptLength": {
                "short": {"p50Ms": 180, "p99Ms": 420},
                "long": {"p50Ms": 910, "p99Ms": 2210},
            },
            "claimBoundary": "scheduler arithmetic from source; no latency was measured here",
        },
        "schedulerNotes": ["prefill chunks interleave with decode batches", "chunk size is global"],
        "invariants": {"oneSourceReceipt": True},
        "decision": {
            "classification": "hold-chunk-size-at-4096-until-long-prompt-canary",
            "promoteWhen": ["a long-prompt canary keeps p99 under 2.5 s at 8192"],
        },
    }
    record.update(overrides)
    return record


def write_probe_guide(
    root: Path, *, record_name: str = "900_latency_probe.json", **front: Any
) -> Path:
    """Write the probe record and its prose into the project at `root`; return the prose path."""
    (root / "records" / record_name).write_text(json.dumps(probe_record(), indent=2), "utf-8")
    fields: dict[str, Any] = {
        "title": TITLE,
        "description": "Hold SGLang chunked prefill at 4096 tokens for GLM-5.2 until a long-prompt canary passes.",
        "slug": SLUG,
        "record": OPERATION_ID,
        "reader_job": READER_JOB,
        "tags": ["sglang", "chunked-prefill"],
        "published": "2026-11-02",
        **front,
    }
    body = (
        "## What this guide answers\n\nWhether a larger prefill chunk helps long prompts.\n\n"
        "## How to read the evidence\n\nThe chunk table comes from the scheduler source.\n"
    )
    path = root / "content" / f"{SLUG}.md"
    path.write_text(f"---\n{yaml.safe_dump(fields, sort_keys=False)}---\n{body}", "utf-8")
    return path
