"""Crawler checks before publishing: duplicate titles and descriptions, lengths, orphan guides,
and each guide's closest pages in `--audit`."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from site_builder.checks.seo import words_of
from tests.conftest import Project, audit
from tests.new_guide import SLUG, TITLE, probe_record, write_probe_guide

PROBE = f"content/{SLUG}.md"
PROBE_URL = f"/guides/{SLUG}/"
MTP_URL = "https://glm52.ai/guides/glm-5-2-mtp-speculative-decoding/"
SEQUENCE_URL = "/guides/glm-5-2-vllm-sequence-parallel-moe/"


def of(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    """Return the findings of one check."""
    return [f for f in report["findings"] if f["check"] == check]


def second_probe(project: Project, **front: Any) -> str:
    """Write a second guide of other evidence and intent; return its prose path."""
    project.save_record(
        "901_second.json",
        probe_record(
            "20261102090000-second",
            status="router-retry-budget",
            latencyProbe={"retryBudget": 3, "boundary": "from the router's defaults"},
            schedulerNotes=["retries back off exponentially"],
            decision={"classification": "keep-three-router-retries"},
        ),
    )
    fields = {
        "title": "GLM-5.2 on SGLang: keep the router's retry budget at three",
        "description": "SGLang's router retries a failed GLM-5.2 request three times; keep the "
        "default until a fault-injection canary says otherwise.",
        "slug": "glm-5-2-sglang-router-retry-budget",
        "record": "20261102090000-second",
        "reader_job": "Decide how many times SGLang's router should retry a failed request.",
        "tags": ["sglang", "router"],
        "published": "2026-11-03",
        **front,
    }
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields.items())
    path = f"content/{fields['slug']}.md"
    project.write(path, f"---\n{lines}---\nThe router retries.\n")
    return path


def test_two_guides_with_one_title_fail_on_the_newer_guide(project: Project) -> None:
    write_probe_guide(project.root)
    second = second_probe(project, title=f"  {TITLE.upper()} ")
    code, report = audit(project)
    assert code == 1
    (error,) = of(report, "title")
    assert error["severity"] == "error"
    assert error["source"] == second and error["related"] == [PROBE_URL]
    assert "<h1>" in error["message"] and "title of its own" in error["message"]
    assert project.run().returncode == 1


def test_a_guide_titled_like_a_live_page_fails(project: Project) -> None:
    registry = project.root / "content" / "registry.json"
    data = json.loads(registry.read_text("utf-8"))
    (mtp,) = [page for page in data["pages"] if page["url"] == MTP_URL]
    mtp["title"] = "GLM-5.2 MTP speculative decoding on SGLang"
    registry.write_text(json.dumps(data), "utf-8")
    write_probe_guide(project.root, title="GLM-5.2 MTP speculative decoding on SGLang")
    code, report = audit(project)
    assert code == 1
    (error,) = of(report, "title")
    assert error["source"] == PROBE and error["page"] == PROBE_URL
    assert error["related"] == ["/guides/glm-5-2-mtp-speculative-decoding/"]
    assert MTP_URL in error["message"]


def test_a_shared_description_warns_on_the_newer_guide(project: Project) -> None:
    description = (
        "Hold SGLang at its defaults for GLM-5.2 until a canary on your own traffic passes."
    )
    write_probe_guide(project.root, description=description)
    second = second_probe(project, description=description)
    code, report = audit(project)
    assert code == 0
    (warning,) = of(report, "description")
    assert warning["severity"] == "warning"
    assert warning["source"] == second and warning["related"] == [PROBE_URL]


def test_titles_and_descriptions_outside_crawler_lengths_warn_with_what_to_change(
    project: Project,
) -> None:
    write_probe_guide(project.root, description="Hold chunked prefill at 4096.")
    code, report = audit(project)
    assert code == 0
    (title,) = [f for f in of(report, "title-length") if f["page"] == PROBE_URL]
    assert title["source"] == PROBE and title["severity"] == "warning"
    assert f"title is {len(TITLE)} characters" in title["message"]
    assert "shorten it to 60 or fewer" in title["message"]
    (description,) = of(report, "description-length")
    assert "description is 29 characters" in description["message"]
    assert "lengthen it to 70 or more" in description["message"]
    # Of the seed guides, only the sequence-parallel title (66 characters) is too long.
    lengths = [f for f in of(report, "title-length") if f["page"] != PROBE_URL]
    assert [f["page"] for f in lengths] == [SEQUENCE_URL]
    assert not [f for f in of(report, "description-length") if f["page"] != PROBE_URL]


def test_a_guide_no_other_guide_links_to_is_an_orphan_until_one_does(project: Project) -> None:
    write_probe_guide(project.root, tags=["tensorrt-llm", "chunked-prefill"])
    code, report = audit(project)
    assert code == 0
    (orphan,) = of(report, "orphan")
    assert orphan["severity"] == "warning" and orphan["source"] == PROBE
    assert "link to it from" in orphan["message"]
    guide = project.root / "content" / "glm-5-2-sglang-dsa-indexer-fusion.md"
    guide.write_text(guide.read_text("utf-8") + f"\nSee [the probe]({PROBE_URL}).\n", "utf-8")
    _, report = audit(project)
    assert not of(report, "orphan")


def test_seed_guides_are_no_orphans_and_share_no_title_or_reader_job(project: Project) -> None:
    code, report = audit(project)
    assert code == 0
    checks = {f["check"] for f in report["findings"]}
    assert not checks & {"orphan", "title", "description", "cannibalisation", "overlap"}


def test_audit_lists_the_three_closest_pages_of_each_guide_with_scores(project: Project) -> None:
    _, report = audit(project)
    closest = report["closest"]
    assert sorted(closest) == sorted(
        [
            "/guides/glm-5-2-sglang-dsa-indexer-fusion/",
            "/guides/glm-5-2-sglang-weight-cache-daemon/",
            "/guides/glm-5-2-vllm-decode-context-parallel/",
            SEQUENCE_URL,
        ]
    )
    for page, near in closest.items():
        assert len(near) == 3, page
        assert [n["score"] for n in near] == sorted((n["score"] for n in near), reverse=True)
        for entry in near:
            assert list(entry) == ["url", "score", "kind"]
            assert entry["url"] != page and 0 < entry["score"] < 0.4, "below the warning level"
            assert entry["kind"] in {"intent", "visible text", "evidence"}
    assert closest[SEQUENCE_URL][0]["url"] == "/guides/glm-5-2-vllm-decode-context-parallel/"
    assert not of(report, "closest"), "listed apart from the findings"
    text = project.run("--audit").stderr
    assert "Closest pages of each guide" in text
    line = next(line for line in text.splitlines() if line.startswith(f"  {SEQUENCE_URL}: "))
    assert "/guides/glm-5-2-vllm-decode-context-parallel/ 0." in line


def test_words_are_letters_and_digits_joined_by_single_dots_or_hyphens() -> None:
    assert words_of("Run v0.26.0 on re-run.-x, H200s: a--b") == (
        *("run", "v0.26.0", "on", "re-run", "x", "h200s", "a", "b"),
    )
    # The same words as the plain (backtracking) pattern, whatever the text.
    plain = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
    rng = random.Random(1)
    for _ in range(3000):
        text = "".join(rng.choice("aZ09.-- _/é\u0130\u212a\n") for _ in range(rng.randrange(40)))
        assert list(words_of(text)) == plain.findall(text.lower())
