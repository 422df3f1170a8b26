"""Replacing a live page is a decision: a guide at a registry page's URL must say `replaces:`."""

from __future__ import annotations

import json

from tests.conftest import Project
from tests.new_guide import READER_JOB, SLUG, write_probe_guide

LIVE_JOB = "measure prefill latency on the old scheduler"


def register(project: Project, url: str, **fields: object) -> None:
    """Add a live page to the project's registry."""
    path = project.root / "content/registry.json"
    registry = json.loads(path.read_text("utf-8"))
    entry = {"url": url, "title": "", "reader_job": LIVE_JOB, "published": None, "lastmod": ""}
    registry["pages"].append({**entry, **fields})
    registry["pages"].sort(key=lambda page: page["url"])
    path.write_text(json.dumps(registry, indent=2), "utf-8")


def test_an_undeclared_takeover_is_refused_naming_the_page_and_both_jobs(
    project: Project,
) -> None:
    register(project, f"https://glm52.ai/guides/{SLUG}/")
    write_probe_guide(project.root)
    result = project.run()
    assert result.returncode == 1
    line = next(line for line in result.stderr.splitlines() if "takeover" in line)
    assert f"https://glm52.ai/guides/{SLUG}/ is already a live page" in line
    assert LIVE_JOB in line and READER_JOB in line
    assert f"replaces: /guides/{SLUG}/" in line
    assert not project.out.exists()


def test_a_declared_takeover_is_built_and_noted(project: Project) -> None:
    register(project, f"https://glm52.ai/guides/{SLUG}/")
    write_probe_guide(project.root, replaces=f"/guides/{SLUG}/")
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert (project.out / f"guides/{SLUG}/index.html").is_file()
    audit = project.run("--audit")
    assert "replaces the live page" in audit.stderr and "as declared" in audit.stderr


def test_a_page_published_by_this_guide_needs_no_declaration(project: Project) -> None:
    register(project, f"https://glm52.ai/guides/{SLUG}/", published="2026-11-02")
    write_probe_guide(project.root)
    assert project.run().returncode == 0


def test_a_page_this_builder_deployed_is_known_by_its_lastmod(project: Project) -> None:
    # What --import-sitemap brings back after a deploy: lastmod is the record's checkedAt.
    register(project, f"https://glm52.ai/guides/{SLUG}/", lastmod="2026-11-01T09:00:00+00:00")
    write_probe_guide(project.root)
    assert project.run().returncode == 0


def test_a_page_live_before_the_evidence_is_another_page(project: Project) -> None:
    register(project, f"https://glm52.ai/guides/{SLUG}/", lastmod="2026-07-01")
    write_probe_guide(project.root)
    result = project.run()
    assert result.returncode == 1 and "takeover" in result.stderr


def test_replaces_must_name_the_guides_own_url(project: Project) -> None:
    write_probe_guide(project.root, replaces="/guides/some-other-page/")
    result = project.run()
    assert result.returncode == 1
    assert "front matter.replaces" in result.stderr and "aliases" in result.stderr


def test_replaces_of_a_page_that_is_not_live_is_an_error(project: Project) -> None:
    write_probe_guide(project.root, replaces=f"/guides/{SLUG}/")
    result = project.run()
    assert result.returncode == 1
    assert "no page of the registry" in result.stderr


def test_a_record_naming_its_own_url_as_a_different_page_is_refused(project: Project) -> None:
    register(project, f"https://glm52.ai/guides/{SLUG}/")
    write_probe_guide(project.root, replaces=f"/guides/{SLUG}/")
    record_path = project.root / "records/900_latency_probe.json"
    record = json.loads(record_path.read_text("utf-8"))
    record["overlapAudit"] = {
        "nearestPages": [
            {"url": f"/guides/{SLUG}/", "readerJob": LIVE_JOB, "difference": "another job"}
        ]
    }
    record_path.write_text(json.dumps(record), "utf-8")
    result = project.run()
    assert result.returncode == 1
    assert "names /guides/" in result.stderr and "as a different nearby page" in result.stderr
