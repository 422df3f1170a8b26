"""The record's vocabulary is data: content/vocabulary.yaml, not names written into the code."""

from __future__ import annotations

import json
import re

import yaml

from tests.conftest import ROOT, Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

VOCABULARY = "content/vocabulary.yaml"


def vocabulary(project: Project) -> dict[str, object]:
    """Return the project's vocabulary file as data."""
    return yaml.safe_load((project.root / VOCABULARY).read_text("utf-8"))


def save_vocabulary(project: Project, data: dict[str, object]) -> None:
    """Write the project's vocabulary file."""
    project.write(VOCABULARY, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def record_specific_names() -> set[str]:
    """Return the seed vocabulary's distinctive names: camelCase keys, spellings, the subject."""
    data = yaml.safe_load((ROOT / "tests/fixtures/seed-site" / VOCABULARY).read_text("utf-8"))
    keys: list[str] = [
        *data["decision_keys"],
        *data["record_boundary_keys"],
        *data["caveat_keys"],
        *data["editorial_keys"],
        *data["overlap"].values(),
    ]
    camel = {key for key in keys if re.search(r"[a-z][A-Z]", key)}
    # Product and engine names; units (MiB) and plurals (URLs) are words of any record.
    mixed = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
    spelled = {
        word
        for word in data["spelling"]["words"]
        if mixed.search(word) and not re.fullmatch(r"[KMGT]iB|[A-Z]+s", word)
    }
    patterns = {pattern.removeprefix("(?i)") for pattern in data["runtime_counts"].values()}
    engines = set(data["engines"].values())
    return camel | spelled | engines | patterns | {data["subject"], "serp"}


def test_no_module_but_the_vocabulary_names_a_record_specific_key() -> None:
    names = record_specific_names()
    assert {"rolloutDecision", "distinctIntent", "aiHot", "GLM-5.2", "SGLang"} <= names
    for path in sorted((ROOT / "site_builder").rglob("*.py")):
        if path.name == "vocabulary.py":
            continue
        text = path.read_text("utf-8")
        found = sorted(name for name in names if name in text)
        assert not found, f"{path.name} names {found}"


def test_a_record_with_other_names_builds_once_the_vocabulary_says_them(
    project: Project,
) -> None:
    write_probe_guide(project.root)
    record = probe_record()
    record["ruling"] = record.pop("decision")
    record["ruling"]["verdictSlug"] = record["ruling"].pop("classification")
    record["latencyProbe"]["caveat"] = record["latencyProbe"].pop("claimBoundary")
    record["internalNotes"] = {"costUsd": 12.5, "requestId": "SECRET-REQUEST-ID"}
    record["dupeCheck"] = {
        "neighbours": [{"url": "/guides/glm-5-2-sglang-weight-cache-daemon/", "why": "cache"}],
        "uniqueIntent": True,
    }
    project.save_record("900_latency_probe.json", record)
    assert project.run().returncode == 1  # with the seed vocabulary this record is unknown
    for seed in [*project.root.glob("records/0*.json"), *project.root.glob("content/glm*.md")]:
        if SLUG not in seed.name:
            seed.unlink()  # records of the old vocabulary: this project now uses the new one

    data = vocabulary(project)
    data["decision_keys"] = ["ruling"]
    data["classification_key"] = "verdictSlug"
    data["caveat_keys"] = ["caveat"]
    data["editorial_keys"] = ["internalNotes"]
    data["overlap"] = {**data["overlap"], "key": "dupeCheck", "nearest_pages": "neighbours"}
    data["overlap"]["difference"] = "why"
    data["overlap"]["distinct_intent"] = "uniqueIntent"
    save_vocabulary(project, data)
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / f"guides/{SLUG}/index.html")
    assert "Hold chunk size at 4096" in page.select_one(".verdict-line").get_text()
    caveats = [aside.get_text(" ", strip=True) for aside in page.select(".callout.caveat")]
    assert any("no latency was measured here" in text for text in caveats)
    assert "SECRET-REQUEST-ID" not in page.decode()
    nearby = page.select_one(".nearby-list")
    assert "cache" in nearby.get_text() and nearby.a["href"].endswith("weight-cache-daemon/")


def test_the_sitemap_count_is_read_where_the_vocabulary_says(project: Project) -> None:
    write_probe_guide(project.root)
    record = probe_record()
    record["overlapAudit"] = {"liveCanonicals": 99_999}
    project.save_record("900_latency_probe.json", record)
    data = vocabulary(project)
    data["overlap"] = {**data["overlap"], "sitemap_count": "liveCanonicals"}
    save_vocabulary(project, data)
    result = project.run("--audit", "--format", "json")
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["check"] == "sitemap-count"]
    assert "counts 99999 canonicals" in finding["message"]
    assert "overlapAudit.liveCanonicals" in finding["message"]


def test_spellings_come_from_the_vocabulary(project: Project) -> None:
    write_probe_guide(project.root)
    record = probe_record(schedulerNotes=None, zorbQuux={"zorbPerSecond": 3})
    project.save_record("900_latency_probe.json", record)
    data = vocabulary(project)
    data["spelling"]["words"].append("ZORB")
    save_vocabulary(project, data)
    assert project.run().returncode == 0
    headings = [h.get_text() for h in soup(project.out / f"guides/{SLUG}/index.html")("h2")]
    assert "ZORB quux" in headings


def test_a_broken_vocabulary_is_a_located_one_line_error(project: Project) -> None:
    data = vocabulary(project)
    data["measurement_pattern"] = "(unclosed"
    data["decison_keys"] = ["typo"]
    save_vocabulary(project, data)
    result = project.run()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{VOCABULARY}: measurement_pattern: Value error, not a valid regular expression" in (
        result.stderr
    )
    assert f"{VOCABULARY}: decison_keys: Extra inputs are not permitted" in result.stderr


def test_a_missing_vocabulary_is_named(project: Project) -> None:
    (project.root / VOCABULARY).unlink()
    result = project.run()
    assert result.returncode == 1
    assert f"{VOCABULARY}: file: missing: the record vocabulary file is required" in result.stderr
