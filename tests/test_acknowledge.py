"""Warnings an editor can act on: fixed, or acknowledged with a reason; and sitemap-count bounds."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Project
from tests.new_guide import SLUG, probe_record, write_probe_guide

RECORD = "records/900_latency_probe.json"


def set_count(project: Project, count: int) -> None:
    """Give the probe record a prepublication sitemap count."""
    record = probe_record(overlapAudit={"prepublicationSitemapCanonicals": count})
    (project.root / RECORD).write_text(json.dumps(record), "utf-8")


def add_to_registry(project: Project, pages: list[dict[str, Any]]) -> tuple[int, int]:
    """Add `pages` (url, published, lastmod) to the registry.

    Return (pages the registry had, how many of them carry a date): all dated before
    2026-11-01, so they count for both bounds; the undated ones only for the upper bound.
    """
    path = project.root / "content/registry.json"
    existing = json.loads(path.read_text("utf-8"))["pages"]
    dates = [page["published"] or page["lastmod"] for page in existing]
    assert all(day < "2026-11-01" for day in dates if day)
    added = [
        {
            "url": page["url"],
            "title": "",
            "reader_job": f"job {index}",
            "published": page.get("published"),
            "lastmod": page.get("lastmod", ""),
        }
        for index, page in enumerate(pages)
    ]
    full = sorted(existing + added, key=lambda page: page["url"])
    path.write_text(json.dumps({"pages": full}), "utf-8")
    return len(existing), sum(1 for day in dates if day)


def count_warning(project: Project, *args: str) -> str:
    """Return the sitemap-count line of an audit, or ''."""
    result = project.run("--audit", *args)
    lines = result.stderr.splitlines()
    return next((line for line in lines if "sitemap-count" in line and RECORD in line), "")


def probe_project(project: Project, count: int) -> tuple[int, int]:
    """A probe guide (checked 2026-11-01) and a registry with pages dated around that day.

    Return the registry's pages and dated pages before these, which the bounds count too.
    """
    write_probe_guide(project.root)
    set_count(project, count)
    return add_to_registry(
        project,
        [
            {"url": "https://glm52.ai/guides/a/", "lastmod": "2026-10-01"},
            {"url": "https://glm52.ai/guides/b/", "published": "2026-10-15"},
            {"url": "https://glm52.ai/guides/c/", "lastmod": "2026-10-20T08:00:00+00:00"},
            {"url": "https://glm52.ai/guides/later/", "published": "2026-11-20"},
            {"url": "https://glm52.ai/guides/undated/"},
        ],
    )


def test_sitemap_count_inside_the_provable_bounds_is_quiet(project: Project) -> None:
    before, dated = probe_project(project, 0)
    lower = dated + 3  # and a, b, c: published or modified before the record was checked
    upper = before + 5 + 1 - 2  # every page and the probe, less /later/ and the probe
    for count in (lower, lower + 1, upper):
        set_count(project, count)
        assert count_warning(project) == "", count
    set_count(project, upper + 1)
    assert f"at most {upper}" in count_warning(project)
    set_count(project, lower - 1)
    assert f"at least {lower}" in count_warning(project)


def test_sitemap_count_below_the_lower_bound_says_to_fix_the_record(project: Project) -> None:
    probe_project(project, 1)
    line = count_warning(project)
    assert "at least" in line and "correct the record" in line and RECORD in line


def test_sitemap_count_above_the_upper_bound_says_to_import_the_sitemap(project: Project) -> None:
    probe_project(project, 500)
    line = count_warning(project)
    assert "at most" in line and "--import-sitemap" in line


def acknowledge_in_front_matter(project: Project, entry: str) -> None:
    """Add an `acknowledge:` list to the probe guide's front matter."""
    path = project.root / f"content/{SLUG}.md"
    text = path.read_text("utf-8")
    path.write_text(text.replace("\n---\n", f"\nacknowledge:\n{entry}---\n", 1), "utf-8")


def test_an_acknowledged_warning_is_not_repeated_but_audit_lists_it(project: Project) -> None:
    probe_project(project, 500)
    assert count_warning(project) != ""
    acknowledge_in_front_matter(
        project, "  - check: sitemap-count\n    reason: the live sitemap is not imported\n"
    )
    build = project.run()
    assert build.returncode == 0
    assert RECORD not in build.stderr
    assert "acknowledged warning(s) not shown" in build.stdout
    assert "(acknowledged: the live sitemap is not imported)" in count_warning(project)
    report = json.loads(project.run("--audit", "--format", "json").stdout)
    finding = next(f for f in report["findings"] if f["source"] == RECORD)
    assert finding["acknowledged"] == "the live sitemap is not imported"


def test_a_stale_acknowledgement_is_itself_a_warning(project: Project) -> None:
    _, dated = probe_project(project, 500)
    acknowledge_in_front_matter(
        project, "  - check: sitemap-count\n    reason: the live sitemap is not imported\n"
    )
    assert " acknowledge " not in project.run().stderr
    set_count(project, dated + 3)  # now inside the bounds: nothing left to acknowledge
    result = project.run()
    line = next(line for line in result.stderr.splitlines() if " acknowledge " in line)
    assert f"content/{SLUG}.md" in line and "front matter.acknowledge.0" in line
    assert "remove the acknowledgement" in line


def test_the_baseline_file_acknowledges_by_check_page_and_message(project: Project) -> None:
    probe_project(project, 500)
    project.write(
        "content/acknowledged.yaml",
        "acknowledged:\n"
        f"  - check: sitemap-count\n    page: /guides/{SLUG}/\n    match: at most\n"
        "    reason: registry incomplete\n"
        "  - check: sitemap-count\n    page: /guides/another-page/\n    reason: not this one\n",
    )
    result = project.run()
    assert RECORD not in result.stderr
    stale = [line for line in result.stderr.splitlines() if " acknowledge " in line]
    assert len(stale) == 1 and "content/acknowledged.yaml" in stale[0]
    assert "acknowledged.1" in stale[0]


def test_errors_cannot_be_acknowledged(project: Project) -> None:
    probe_project(project, 0)
    prose = project.root / f"content/{SLUG}.md"
    prose.write_text(prose.read_text("utf-8") + "\n[gone](/guides/no-such/)\n", "utf-8")
    acknowledge_in_front_matter(project, "  - check: link\n    reason: I know\n")
    result = project.run()
    assert result.returncode == 1 and "/guides/no-such/" in result.stderr
    line = next(line for line in result.stderr.splitlines() if "/guides/no-such/" in line)
    assert line.split()[:2] == ["error", "link"] and "acknowledged" not in line
    # It still matches a finding, so it is not reported as stale.
    assert " acknowledge " not in result.stderr


def test_a_production_build_fails_on_a_live_page_whose_warning_is_acknowledged(
    project: Project,
) -> None:
    baseline = (project.root / "content/acknowledged.yaml").read_text("utf-8")
    assert "check: deploy" in baseline
    build = project.run()
    assert build.returncode == 0 and "would answer 404" not in build.stderr
    production = project.run("--production")
    assert production.returncode == 1
    errors = [line for line in production.stderr.splitlines() if "would answer 404" in line]
    assert errors and all(line.split()[:2] == ["error", "deploy"] for line in errors)
    assert " acknowledge " not in production.stderr


def test_a_malformed_acknowledgement_is_a_located_input_error(project: Project) -> None:
    probe_project(project, 0)
    acknowledge_in_front_matter(project, "  - check: sitemap-count\n")
    result = project.run()
    assert result.returncode == 1
    assert f"content/{SLUG}.md: front matter.acknowledge.0.reason" in result.stderr
