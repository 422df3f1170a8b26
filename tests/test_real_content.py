"""The publisher's real records/ and content/ still build, and take a guide of a new shape.

Every other test reads the seed project (tests/fixtures/seed-site/), so the real inputs can grow
without breaking them. This test is the one that looks at the real inputs: it copies the whole
project (records, content, templates, build.py, site_builder) into a temporary folder, adds a
guide whose record has sections no seed has (a list of lists, an object of objects of lists, a
`latencyProbe` with p50/p99, a table nested in a table), and runs `python build.py --audit`
and `python build.py` there. Both must succeed, the new guide must be built with its title,
and every real guide must still be built. Nothing here names or counts the real guides: they
are read from the copy's content/*.md.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, run_build, soup

SLUG = "glm-5-2-sglang-router-tail-latency-probe-ladder"
# At most 60 characters: a longer title is a title-length warning, and this guide has none.
TITLE = "GLM-5.2 router tail latency: p50 and p99 per prompt bucket"
OPERATION_ID = "20261030091500-probe7ladder"
RECORD_FILE = "zz_test_real_content_probe.json"

RECORD: dict[str, Any] = {
    "schemaVersion": 1,
    "operationId": OPERATION_ID,
    "checkedAt": "2026-10-30T09:15:00+08:00",
    "status": "synthetic-router-latency-probe-for-the-test-suite",
    "revisions": {
        "sglangRelease": "v0.5.19",
        "sglangSourceCommit": "0123456789abcdef0123456789abcdef01234567",
        "routerConfigRevision": 7,
    },
    "sourceReceipts": [
        {
            "label": "Router latency histogram export",
            "url": "https://example.org/glm52/router-latency-histogram.json",
            "bytes": 18432,
            "sha256": "a" * 64,
        },
        {
            "label": "Probe ladder schedule",
            "url": "https://example.org/glm52/probe-ladder.yaml",
            "bytes": 2210,
            "sha256": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
        },
    ],
    "model": {
        "repository": "zai-org/GLM-5.2-FP8",
        "architecture": "GlmMoeDsaForCausalLM",
        "hiddenLayers": 78,
    },
    "latencyProbe": {
        "unit": "ms",
        "samples": 4000,
        "p50": 182.4,
        "p99": 911.7,
        "boundary": "Synthetic probe numbers for the test suite; they describe no real cluster.",
    },
    "rungMatrix": [
        ["rung", "concurrency", "promptTokens"],
        ["r1", 8, 512],
        ["r2", 32, 2048],
        ["r3", 128, 8192],
    ],
    "routerProfiles": {
        "cacheAware": {"prefillRanks": [0, 1, 2, 3], "decodeRanks": [4, 5, 6, 7]},
        "roundRobin": {"prefillRanks": [0, 2, 4, 6], "decodeRanks": [1, 3, 5, 7]},
    },
    "promptBuckets": [
        {
            "bucket": "short-prompt-bucket",
            "maxTokens": 512,
            "rungs": [
                {"concurrency": 8, "p99Ms": 410.2, "claimBoundary": "one synthetic run"},
                {"concurrency": 32, "p99Ms": 655.9, "claimBoundary": "one synthetic run"},
            ],
        },
        {
            "bucket": "long-prompt-bucket",
            "maxTokens": 8192,
            "rungs": [
                {"concurrency": 8, "p99Ms": 1204.5, "claimBoundary": "one synthetic run"},
                {"concurrency": 32, "p99Ms": 2977.1, "claimBoundary": "one synthetic run"},
            ],
        },
    ],
    "invariants": {"probeLadderHasThreeRungs": True, "p99IsNeverBelowP50": True},
    "decision": {
        "classification": "probe-ladder-before-router-policy-change",
        "rationale": "Tail latency grows with prompt length faster than with concurrency.",
    },
}

PROSE = f"""---
title: "{TITLE}"
description: "A synthetic probe ladder that reads router tail latency per prompt bucket before a routing policy change."
slug: {SLUG}
record: {OPERATION_ID}
reader_job: "Choose the probe ladder to run against the request router before switching its routing policy."
tags: [sglang, router, tail-latency]
published: 2026-11-01
---
## What this guide answers

Which probe ladder shows the router's tail latency per prompt bucket before a policy change.

## How the ladder runs

Three rungs raise concurrency and prompt length together; each rung records p50 and p99.

## What to do with the numbers

Change the routing policy only when the long-prompt bucket's p99 stays inside its budget.
"""


def copy_real_project(target: Path) -> Path:
    """Copy the real project's inputs, templates and code (as `python build.py` needs them)."""
    skip = shutil.ignore_patterns("__pycache__")
    for name in ("records", "content", "templates", "site_builder"):
        shutil.copytree(ROOT / name, target / name, ignore=skip)
    shutil.copy2(ROOT / "build.py", target / "build.py")
    return target


def front_matter(path: Path) -> dict[str, Any]:
    """Return the YAML front matter of a Markdown guide."""
    match = re.match(r"---\n(.*?)\n---\n", path.read_text("utf-8"), re.S)
    assert match, f"{path.name}: no front matter"
    return yaml.safe_load(match.group(1))


def test_real_project_builds_with_a_guide_of_a_shape_no_seed_has(tmp_path: Path) -> None:
    root = copy_real_project(tmp_path / "real")
    fronts = [front_matter(path) for path in sorted((root / "content").glob("*.md"))]
    real_slugs = sorted(front["slug"] for front in fronts if not front.get("draft"))
    assert SLUG not in real_slugs and OPERATION_ID not in {f["record"] for f in fronts}
    assert not (root / "records" / RECORD_FILE).exists()
    (root / "records" / RECORD_FILE).write_text(json.dumps(RECORD, indent=2), "utf-8")
    (root / "content" / f"{SLUG}.md").write_text(PROSE, "utf-8")

    audit = run_build(root, "--audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "Traceback" not in audit.stderr
    assert not (root / "_site").exists(), "--audit writes nothing"
    about_new = [
        line
        for line in (audit.stdout + audit.stderr).splitlines()
        if RECORD_FILE in line or f"{SLUG}.md" in line
    ]
    assert not [line for line in about_new if re.match(r"\s*(error|warning)\b", line)], about_new

    result = run_build(root)
    assert result.returncode == 0, result.stdout + result.stderr
    out = root / "_site"
    page = soup(out / "guides" / SLUG / "index.html")
    assert page.h1.get_text(" ", strip=True) == TITLE
    assert TITLE in page.title.get_text()
    text = page.get_text(" ").replace(",", "")
    for value in ("911.7", "182.4", "2977.1", "long-prompt-bucket", "8192", "r3"):
        assert value in text, f"{value} is not on the new guide's page"
    for slug in real_slugs:
        assert (out / "guides" / slug / "index.html").is_file(), slug
