"""A derived number no rule covers is checked against a formula inferred from its neighbours.

The record of a new shape below comes with no rules: its right derived values (a difference,
percent changes in both directions, a /1024 conversion, a maximum and a sum over a list column,
a ratio inside a `derived` object) are verified by inference and their marks name the formula;
a wrong one is a warning naming the expected value and formula (an error in strict mode).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from site_builder.model.claims import agrees
from site_builder.model.formula import evaluate
from site_builder.verify.infer import MAX_OPERANDS, Node, candidates, infer
from tests.conftest import Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

RECORD = "900_latency_probe.json"
PAGE = Path("guides") / SLUG / "index.html"
CHANGE = "(chunkedTokensPerSecond - baselineTokensPerSecond) / baselineTokensPerSecond * 100"
INFERRED = {  # JSON path: the formula its mark names
    "chunkLatency.calculatedP99DeltaMs": "chunk8192P99Ms - chunk4096P99Ms",
    "chunkLatency.calculatedQueueReductionPercent": (
        "(queueDepthBefore - queueDepthAfter) / queueDepthBefore * 100"
    ),
    "chunkLatency.calculatedPrefillBufferMiB": "prefillBufferKiB / 1024",
    "throughputRows.0.calculatedPrefillThroughputChangePercent": CHANGE,
    "throughputRows.1.calculatedPrefillThroughputChangePercent": CHANGE,
    "chunkSweep.calculatedWorstP99Ms": "max(row.p99Ms for row in rows)",
    "chunkSweep.calculatedTotalPrefillTokens": "sum(row.prefillTokens for row in rows)",
    "chunkSweep.derived.speedup": "baselineSeconds / chunkedSeconds",
}
WRONG = "throughputRows.1.calculatedPrefillThroughputChangePercent"


def sections(wrong: float = 108.5) -> dict[str, Any]:
    """Return record sections of shapes no seed has, with derived numbers and no rules."""
    row = {"promptTokens": 8192, "baselineTokensPerSecond": 400, "chunkedTokensPerSecond": 434}
    return {
        "chunkLatency": {
            "chunk4096P99Ms": 2210,
            "chunk8192P99Ms": 2419,
            "calculatedP99DeltaMs": 209,
            "queueDepthBefore": 64,
            "queueDepthAfter": 40,
            "calculatedQueueReductionPercent": 37.5,
            "prefillBufferKiB": 393216,
            "calculatedPrefillBufferMiB": 384,
            "claimBoundary": "scheduler arithmetic from source; no latency was measured here",
        },
        "throughputRows": [
            {**row, "calculatedPrefillThroughputChangePercent": 8.5},
            {
                "promptTokens": 32768,
                "baselineTokensPerSecond": 200,
                "chunkedTokensPerSecond": 417,
                "calculatedPrefillThroughputChangePercent": wrong,
            },
        ],
        "chunkSweep": {
            "rows": [
                {"chunkSize": 2048, "p99Ms": 1210, "prefillTokens": 30000},
                {"chunkSize": 4096, "p99Ms": 1530, "prefillTokens": 41000},
                {"chunkSize": 8192, "p99Ms": 2388, "prefillTokens": 52500},
            ],
            "calculatedWorstP99Ms": 2388,
            "calculatedTotalPrefillTokens": 123500,
            "baselineSeconds": 5.0,
            "chunkedSeconds": 2.0,
            "derived": {"speedup": 2.5},
            "boundary": "vendor sweep quoted from the pull request; not reproduced here",
        },
        "invariants": {"oneSourceReceipt": True, "chunkSizeIsGlobal": True},
    }


def probe_project(project: Project, wrong: float = 108.5, **settings: str) -> Project:
    """Add the probe guide with the derived sections to the project; optional site settings."""
    write_probe_guide(project.root)
    project.save_record(RECORD, probe_record(**sections(wrong)))
    site = project.root / "content" / "site.yaml"
    extra = "".join(f"{key}: {value}\n" for key, value in settings.items())
    site.write_text(site.read_text("utf-8") + extra, "utf-8")
    return project


def add_rule(project: Project, text: str) -> None:
    """Add rules (YAML list items) under a section of the copy's content/rules.yaml."""
    path = project.root / "content/rules.yaml"
    section, _, items = text.partition("\n")
    rules = path.read_text("utf-8").replace(f"\n{section}\n", f"\n{section}\n{items}\n", 1)
    path.write_text(rules, "utf-8")


def invariant_line(page: BeautifulSoup, text: str) -> Tag:
    """Return the invariants checklist line that mentions `text`."""
    (line,) = [li for li in page.select(".invariants li") if text in li.get_text()]
    return line


def titles(page: BeautifulSoup) -> list[str]:
    """Return the titles of every verified mark on the page."""
    return [str(mark["title"]) for mark in page.select("span.verified-mark[title]")]


def node(path: str, value: Any, *scopes: Mapping[str, Any], rows: list[Any] | None = None) -> Node:
    """Return the walk node of a field: its key is the path's last part."""
    return (path, path.rsplit(".", 1)[-1], value, scopes, rows or [])


# --- the build --------------------------------------------------------------------------------


def test_right_derived_values_of_a_new_shape_are_verified_by_inferred_formulas(
    project: Project,
) -> None:
    probe_project(project)
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert " verify " not in result.stderr
    page = soup(project.out / PAGE)
    shown = titles(page)
    for formula in INFERRED.values():
        assert f"Recomputed by the build (inferred): {formula}" in shown
    inferred = page.select("span.verified-mark.inferred")
    assert len(inferred) == len(INFERRED)
    note = page.select_one(".verified-note").get_text()
    assert f"({len(INFERRED)} values)" in note


def test_a_wrong_value_is_a_warning_naming_expected_value_and_formula(project: Project) -> None:
    probe_project(project, wrong=118.5)
    result = project.run()
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if WRONG in line]
    assert "warning" in line and "verify" in line and f"records/{RECORD}" in line
    assert f"{WRONG}: expected 108.5 from {CHANGE}, found 118.5" in line
    assert "add a rule to content/rules.yaml if the formula is another" in line
    page = soup(project.out / PAGE)
    assert len(page.select("span.verified-mark.inferred")) == len(INFERRED) - 1
    report = json.loads(project.run("--audit", "--format", "json").stdout)
    (item,) = [i for s in report["records"] for i in s["items"] if i["path"] == WRONG]
    assert (item["state"], item["expected"], item["found"]) == ("unexplained", "108.5", "118.5")
    assert CHANGE in item["reason"]


def test_strict_derived_numbers_fails_the_build_on_an_unexplained_value(project: Project) -> None:
    probe_project(project, wrong=118.5, strict_derived_numbers="true")
    result = project.run()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if WRONG in line]
    assert line.split()[:2] == ["error", "verify"]
    assert f"records/{RECORD}: {WRONG}: expected 108.5 from {CHANGE}, found 118.5" in line
    assert "Aborted: 1 check error; nothing was written." in result.stderr
    assert not project.out.exists()


def test_strict_mode_builds_when_every_value_is_explained(project: Project) -> None:
    probe_project(project, strict_derived_numbers="true")
    assert project.run().returncode == 0


def test_a_rule_wins_over_inference(project: Project) -> None:
    probe_project(project, wrong=118.5, strict_derived_numbers="true")
    formula = f"{CHANGE} + 10 if promptTokens == 32768 else {CHANGE}"
    add_rule(project, f"derived:\n  - field: {WRONG.rsplit('.', 1)[-1]}\n    formula: '{formula}'")
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert WRONG not in result.stderr
    shown = titles(soup(project.out / PAGE))
    assert shown.count(f"Recomputed by the build: {formula}") == 2
    assert f"Recomputed by the build (inferred): {CHANGE}" not in shown


def test_a_rule_for_another_records_field_of_the_same_name_falls_back_to_inference(
    project: Project,
) -> None:
    probe_project(project, wrong=118.5)
    record = project.record(RECORD)
    for row in record["throughputRows"]:
        row["calculatedThroughputChangePercent"] = row.pop(WRONG.rsplit(".", 1)[-1])
    project.save_record(RECORD, record)  # the seed's rule names fusionOn/OffTokensPerSecond
    report = json.loads(project.run("--audit", "--format", "json").stdout)
    items = {i["path"]: i for s in report["records"] for i in s["items"]}
    wrong = items["throughputRows.1.calculatedThroughputChangePercent"]
    assert (wrong["state"], wrong["expected"], wrong["found"]) == ("unexplained", "108.5", "118.5")
    assert wrong["reason"].startswith(
        "the rule for calculatedThroughputChangePercent has inputs missing: no input named "
    )
    assert "throughputRows.0.calculatedThroughputChangePercent" not in items  # verified


def test_asserted_invariants_are_drawn_apart_from_verified_ones(project: Project) -> None:
    probe_project(project)
    add_rule(
        project, "invariants:\n  - name: oneSourceReceipt\n    formula: len(sourceReceipts) == 1"
    )
    assert project.run().returncode == 0
    page = soup(project.out / PAGE)
    verified = invariant_line(page, "One source receipt")
    asserted = invariant_line(page, "Chunk size is global")
    assert "state-verified" in verified["class"] and "holds" in verified["class"]
    assert verified.select_one(".check").get_text() == "✓"
    assert verified.select_one(".badge-yes").get_text() == "true"
    assert verified.select_one(".claim-state")["title"] == (
        "Decided by the build: len(sourceReceipts) == 1"
    )
    assert asserted["class"] == ["state-asserted"]
    assert asserted.select_one(".asserted-mark").get_text() == "○"
    assert not asserted.select(".check, .badge-yes, .badge-no, .verified-mark")
    assert asserted.select_one(".badge-asserted").get_text() == "asserted true"
    assert "✓" not in asserted.get_text()
    assert asserted.select_one(".claim-state").get_text() == (
        "asserted by the audit (no rule in content/rules.yaml)"
    )


# --- inference, unit by unit ------------------------------------------------------------------

FUSION = {"fusionOffTokensPerSecond": 97.72, "fusionOnTokensPerSecond": 107.77, "batchSize": 1}


def test_change_percent_asks_for_a_percent_change_of_the_parallel_pair() -> None:
    field = node("calculatedThroughputChangePercent", 10.284486, FUSION)
    top = candidates(field)[:4]
    assert all("/ fusion" in c.formula and "* 100" in c.formula for c in top)
    assert {c.score for c in top} == {max(c.score for c in candidates(field))}
    check = infer(field)
    assert (check.state, check.inferred) == ("verified", True)
    assert check.formula == (
        "(fusionOnTokensPerSecond - fusionOffTokensPerSecond) / fusionOffTokensPerSecond * 100"
    )


def test_a_summary_named_like_the_field_does_not_outrank_the_pair_it_summarises() -> None:
    row = {"fusionOffTargetMemoryGb": 108, "fusionOnTargetMemoryGb": 127, "tensorParallel": 4}
    root = {"schemaVersion": 1, "summary": {"largestReportedTargetMemoryDeltaGb": 20}}
    check = infer(node("calculatedTargetMemoryDeltaGb", 19, row, root))
    assert check.formula == "fusionOnTargetMemoryGb - fusionOffTargetMemoryGb"


def test_largest_asks_for_the_maximum_of_a_list_column_and_skips_the_fields_own_column() -> None:
    rows = [{"calculatedTargetMemoryDeltaGb": 19}, {"calculatedTargetMemoryDeltaGb": 20}]
    owner = {"largestReportedTargetMemoryDeltaGb": 20}
    root = {"reportedMemoryRows": rows, "memoryReconciliation": owner}
    field = node("memoryReconciliation.largestReportedTargetMemoryDeltaGb", 20, owner, root)
    assert infer(field).formula == (
        "max(row.calculatedTargetMemoryDeltaGb for row in reportedMemoryRows)"
    )
    single = {"only": 7, "calculatedPeakTokens": 7}
    own_rows = [single]
    found = candidates(node("calculatedPeakTokens", 7, single, {"r": own_rows}, rows=own_rows))
    assert not any("calculatedPeakTokens" in c.formula for c in found)


def test_a_unit_in_the_name_picks_the_matching_conversion() -> None:
    memory = {"fusedBytes": 153354240, "unfusedBytes": 92012544}
    assert infer(node("fusedMiB", 146.25, memory)).formula == "fusedBytes / 1024 ** 2"
    timing = {"prefillMs": 1530}
    assert infer(node("calculatedPrefillSeconds", 1.53, timing)).formula == "prefillMs / 1000"


def test_a_copy_of_an_unrelated_number_explains_nothing() -> None:
    check = infer(node("calculatedWidgetCount", 4, {"afterKernels": 4, "pr": 30018}))
    assert check.state == "unverifiable"
    assert "named like it" in check.reason


def test_a_two_digit_value_is_not_explained_by_a_coincidence() -> None:
    row = {"fusionOnKvBudgetGb": 78, "fusionOffKvBudgetGb": 98, "unrelatedCount": 53}
    check = infer(node("calculatedKvBudgetDeltaGb", -25, row))  # 53 - 78 = -25 by chance
    assert check.state == "unexplained"
    assert (check.expected, check.found) == ("-20", "-25")
    assert check.formula == "fusionOnKvBudgetGb - fusionOffKvBudgetGb"


def test_the_closest_formula_is_the_best_named_then_the_nearest_in_value() -> None:
    row = {"baselineTokensPerSecond": 200, "chunkedTokensPerSecond": 417, "promptTokens": 32768}
    check = infer(node("calculatedThroughputChangePercent", 118.5, row))
    assert (check.state, check.expected, check.formula) == ("unexplained", "108.5", CHANGE)
    assert check.reason.endswith(f"closest: {CHANGE} = 108.5")


def test_equally_named_matches_pick_the_simplest_and_say_so() -> None:
    scope = {"memoryGiBBefore": 79.71, "memoryGiBAfterFix": 79.71, "memoryGiBRegression": 85.33}
    check = infer(node("memoryGiBDelta", 5.62, scope))
    assert check.formula == "memoryGiBRegression - memoryGiBAfterFix"  # then string order
    assert "1 other(s) as well named give it too, e.g. memoryGiBRegression - memoryGiBBefore" in (
        check.reason
    )
    assert infer(node("memoryGiBDelta", 5.62, dict(reversed(scope.items())))) == check


def test_no_numbers_beside_a_value_leave_it_unverifiable() -> None:
    check = infer(node("calculatedSpeedupRatio", 1.93, {"note": "measured by the vendor"}))
    assert check.state == "unverifiable"
    assert check.reason == (
        "no rule in content/rules.yaml, and no numbers beside it to infer a formula from"
    )


def test_an_outer_name_hidden_by_an_inner_one_is_not_used() -> None:
    inner = {"total": 10, "calculatedSharePercent": 25.0, "part": 2.5}
    root = {"total": 4, "inner": inner}
    found = candidates(node("calculatedSharePercent", 25.0, inner, root))
    shares = [c.value for c in found if c.formula == "part / total * 100"]
    assert shares == [25.0]  # total is inner's 10, not the root's 4


def test_every_candidate_formula_evaluates_to_its_value_in_the_rules_language() -> None:
    rows = [{"tpRank": 0, "p99Ms": 1210.5}, {"tpRank": 1, "p99Ms": 1530.25}]
    row = {"tpRank": 1, "p99Ms": 1530.25, "calculatedP99ChangePercent": 3.0}
    root = {
        "sweep": rows,
        "sizes": [2048, 4096],
        "reported": {"bytes": 1048576, "nested": {"afterMs": 12.5, "beforeMs": 20.0}},
        "rowsBeside": [row],
    }
    field = node(
        "calculatedP99ChangePercent", 3.0, row, root, rows=[row, {"tpRank": 2, "p99Ms": 9.0}]
    )
    found = candidates(field)
    assert len(found) > 100
    bindings = {"key": "calculatedP99ChangePercent", "siblings": field[4]}
    for candidate in found:
        computed = evaluate(candidate.formula, field[3], bindings)
        tolerance = 1e-9 * max(1, abs(candidate.value))
        assert agrees(computed, candidate.value, tolerance), candidate.formula


def test_the_search_stays_bounded_on_an_object_with_hundreds_of_numbers() -> None:
    wide = {f"metric{index}Value": index * 1.5 + 1 for index in range(300)}
    wide["calculatedMetricTotal"] = 12345.678
    started = time.perf_counter()
    found = candidates(node("calculatedMetricTotal", 12345.678, wide))
    assert time.perf_counter() - started < 2
    pairs = MAX_OPERANDS * (MAX_OPERANDS - 1)
    assert len(found) <= 6 * pairs + 13 * MAX_OPERANDS + 5 * 24


def test_a_long_table_of_derived_values_is_summed_once_not_once_per_row() -> None:
    rows = [
        {"offMs": 100 + i, "onMs": 90 + i, "calculatedLatencyChangePercent": -1000 / (100 + i)}
        for i in range(1000)
    ]
    root, cache = {"probeRows": rows}, {}
    started = time.perf_counter()
    checks = [
        infer(node(f"probeRows.{i}.calculatedLatencyChangePercent", row[
            "calculatedLatencyChangePercent"], row, root, rows=rows), cache=cache)
        for i, row in enumerate(rows)
    ]  # fmt: skip
    assert time.perf_counter() - started < 10
    assert {check.formula for check in checks} == {"(onMs - offMs) / offMs * 100"}


@pytest.mark.parametrize("name", ["calculatedFoo", "computedBar", "derivedBaz"])
def test_odd_values_never_raise(name: str) -> None:
    scope = {"a": 10**30, "b": -(10**30) + 1, "c": 1e308, "d": 0, "e": 1, "f": 2**53 + 1}
    scope |= {"g": 1e149, "h": 1e-300, "i": float("nan"), "j": 10**400}
    for value in (0, 1, -1, 10**30, 1e-300, 1e308, 2.5, 1e149):
        check = infer(node(name, value, {**scope, name: value}))
        assert check.state in ("verified", "unexplained", "unverifiable")
        assert "inf" not in check.expected and "nan" not in check.expected
