"""The audit report: grouped by page in text, a stable schema in JSON."""

from __future__ import annotations

import json
from dataclasses import replace

from site_builder.checks.report import format_json, format_text
from site_builder.model.models import Finding

FINDINGS = [
    Finding(
        "overlap",
        "warning",
        "content/b.md",
        "strong overlap",
        "/guides/b/",
        ("/guides/a/",),
        0.55,
        True,
    ),
    Finding(
        "link", "error", "content/a.md", "link /x/ resolves to no page", "/guides/a/", ("/x/",)
    ),
    Finding("canonical", "info", "content/a.md", "updates the registered page", "/guides/a/"),
    Finding("sitemap", "error", "sitemap.xml", "/y/ is listed twice"),
]


def test_text_report_groups_by_page_with_one_line_per_finding_and_a_summary() -> None:
    lines = format_text(FINDINGS, pages=7, include_info=True).splitlines()
    assert lines[0] == "(site)"
    assert lines[1].split()[:3] == ["error", "sitemap", "sitemap.xml:"]
    assert lines[2] == "/guides/a/"
    assert [line.split()[0] for line in lines[3:5]] == ["error", "info"]
    assert lines[5] == "/guides/b/"
    assert lines[6].endswith("strong overlap (reviewed)")
    assert lines[-1] == "2 error(s), 1 warning(s), 1 note(s) across 7 page(s)."


def test_text_report_hides_notes_unless_asked() -> None:
    assert "updates the registered page" not in format_text(FINDINGS, 7, include_info=False)


def test_json_report_has_the_documented_schema() -> None:
    report = json.loads(format_json(FINDINGS, pages=7))
    assert list(report) == ["schema", "summary", "findings", "records", "closest"]
    assert report["schema"] == "glm52-audit/1"
    assert report["summary"] == {
        "ok": False,
        "errors": 2,
        "warnings": 1,
        "info": 1,
        "acknowledged": 0,
        "pages": 7,
    }
    first = report["findings"][0]
    assert list(first) == [
        "check",
        "severity",
        "page",
        "source",
        "message",
        "related",
        "score",
        "reviewed",
        "acknowledged",
    ]
    assert [f["page"] for f in report["findings"]] == ["", "/guides/a/", "/guides/a/", "/guides/b/"]
    assert report["findings"][-1]["score"] == 0.55
    assert report["findings"][-1]["reviewed"] is True


def test_acknowledged_warnings_are_hidden_from_builds_but_listed_by_audits() -> None:
    accepted = replace(FINDINGS[0], acknowledged="reviewed by the editor")
    findings = [accepted, *FINDINGS[1:]]
    build = format_text(findings, pages=7, include_info=False)
    assert "strong overlap" not in build
    assert build.splitlines()[-1] == (
        "2 error(s), 1 warning(s) (1 acknowledged), 1 note(s) across 7 page(s); --audit lists them."
    )
    audit = format_text(findings, pages=7, include_info=True)
    assert "strong overlap (reviewed) (acknowledged: reviewed by the editor)" in audit
    report = json.loads(format_json(findings, pages=7))
    assert report["summary"]["acknowledged"] == 1
    assert report["findings"][-1]["acknowledged"] == "reviewed by the editor"


CLOSEST = [
    Finding(
        "closest",
        "info",
        "content/b.md",
        "intent: 0.12 with /guides/a/",
        "/guides/b/",
        ("/guides/a/",),
        0.12,
    ),
    Finding(
        "closest",
        "info",
        "content/b.md",
        "visible text: 0.31 with /guides/c/",
        "/guides/b/",
        ("/guides/c/",),
        0.31,
    ),
]


def test_closest_pages_are_listed_apart_from_the_findings_closest_first() -> None:
    report = json.loads(format_json([*FINDINGS, *CLOSEST], pages=7))
    assert report["closest"] == {
        "/guides/b/": [
            {"url": "/guides/c/", "score": 0.31, "kind": "visible text"},
            {"url": "/guides/a/", "score": 0.12, "kind": "intent"},
        ]
    }
    assert len(report["findings"]) == len(FINDINGS) and report["summary"]["info"] == 1
    audit = format_text([*FINDINGS, *CLOSEST], pages=7, include_info=True).splitlines()
    assert "  /guides/b/: /guides/c/ 0.31 visible text; /guides/a/ 0.12 intent" in audit
    assert audit[-1] == "2 error(s), 1 warning(s), 1 note(s) across 7 page(s)."
    assert "closest" not in format_text([*FINDINGS, *CLOSEST], pages=7, include_info=False)
