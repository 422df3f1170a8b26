"""Every build verifies each record's own claims; a contradiction fails the build and the audit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup, Tag

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from tests.conftest import (
    EDITORIAL_KEYS,
    SEED_SITE,
    Project,
    audit,
    copy_project,
    load_records,
    seed_root,
    soup,
)

Report = dict[str, Any]
RECORDS = load_records()
R0, R1, R2, R3 = sorted(RECORDS)  # 000_f072...json (DSA indexer fusion) to 003_d837...json
FUSION_PAGE = "guides/glm-5-2-sglang-dsa-indexer-fusion/index.html"
UNDECIDABLE = yaml.safe_load((SEED_SITE / "content/rules.yaml").read_text("utf-8"))["undecidable"]
NO_RULE = "no rule in content/rules.yaml"
SHA0 = "e4593fd36878e5d25429fa2fc7875b720f4f0e928d542c9a252df861735b8e3c"
SHA1 = "40fb0fae0d999e72be149b81ed87b5cfd83f006d759341e3314a094ac51e7a9f"
URL0 = "https://api.github.com/repos/sgl-project/sglang/releases/tags/v0.5.14"
COMMIT = "71de97b264b04dcd514cf904003028aefe9775c8"
CAVEAT = (
    "measurement has no boundary caveat (boundary, claimBoundary, ...); "
    "add one to it or around it saying what the number does not prove"
)
DERIVED_KEY = re.compile(r"^(calculated|computed|derived)[A-Z]")


def section(report: Report, name: str) -> Report:
    """Return the `records` entry of one record."""
    (found,) = [s for s in report["records"] if s["source"] == f"records/{name}"]
    return found


def items(report: Report) -> list[tuple[str, Report]]:
    """Return (record file, item) for every item of the report that is not verified."""
    return [(s["source"], item) for s in report["records"] for item in s["items"]]


def findings(report: Report, severity: str) -> list[Report]:
    """Return the verify findings of one severity."""
    return [f for f in report["findings"] if f["check"] == "verify" and f["severity"] == severity]


def change(project: Project, name: str, path: str, new: Any) -> None:
    """Set one dotted path of a record; `new` may be a function of the old value."""
    record = holder = project.record(name)
    *parents, last = path.split(".")
    for key in parents:
        holder = holder[int(key)] if isinstance(holder, list) else holder[key]
    key = int(last) if isinstance(holder, list) else last
    holder[key] = new(holder[key]) if callable(new) else new
    project.save_record(name, record)


def add_rule(project: Project, field: str, formula: str) -> None:
    """Add a derived rule to the copy's content/rules.yaml."""
    path = project.root / "content/rules.yaml"
    rule = f"\nderived:\n  - field: {field}\n    formula: {formula}\n"
    path.write_text(path.read_text("utf-8").replace("\nderived:\n", rule, 1), "utf-8")


def derived_fields(value: Any, path: str = "", inside: bool = False) -> Iterator[str]:
    """Yield calculated*/computed* scalars and the numbers and flags inside such objects."""
    for key, child in value.items() if isinstance(value, dict) else enumerate(value):
        child_path, own = f"{path}.{key}" if path else key, bool(DERIVED_KEY.match(str(key)))
        if isinstance(child, dict | list):
            yield from derived_fields(child, child_path, inside or own)
        elif own or (inside and not isinstance(child, str)):
            yield child_path


def invariant_line(page: BeautifulSoup, text: str) -> Tag:
    """Return the invariants checklist line that mentions `text`."""
    (line,) = [li for li in page.select(".invariants li") if text in li.get_text()]
    return line


@pytest.fixture(scope="module")
def seed_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The audit report of an unchanged copy of the project."""
    code, report = audit(copy_project(tmp_path_factory.mktemp("seeds") / "project"))
    assert code == 0
    return report


def test_seeds_pass_with_known_shares_and_no_contradiction(seed_report: Report) -> None:
    counts = ("checked", "verified", "unverifiable", "contradicted")
    shares = {s["source"]: tuple(s[count] for count in counts) for s in seed_report["records"]}
    assert shares == {
        f"records/{R0}": (123, 123, 0, 0),
        f"records/{R1}": (127, 126, 1, 0),
        f"records/{R2}": (149, 149, 0, 0),
        f"records/{R3}": (448, 445, 3, 0),
    }
    assert seed_report["summary"]["errors"] == 0


def test_only_the_undecidable_invariants_are_unverifiable_each_with_reason(
    seed_report: Report,
) -> None:
    listed = {(src, i["path"], i["kind"], i["state"], i["reason"]) for src, i in items(seed_report)}
    expected = {
        (f"records/{name}", f"invariants.{key}", "invariant", "unverifiable", UNDECIDABLE[key])
        for name, record in RECORDS.items()
        for key in record["invariants"]
        if key in UNDECIDABLE
    }
    assert len(expected) == len(UNDECIDABLE) == 4
    assert listed == expected
    assert all(reason.strip() for *_, reason in listed)


def test_every_calculated_or_computed_field_of_the_seeds_is_verified(seed_report: Report) -> None:
    fields = {
        (f"records/{name}", path)
        for name, record in RECORDS.items()
        for path in derived_fields({k: v for k, v in record.items() if k not in EDITORIAL_KEYS})
    }
    assert len(fields) == 41
    listed = {(source, item["path"]) for source, item in items(seed_report)}
    assert not fields & listed, "none is unverifiable (no rule) or contradicted"
    checked = build(BuildConfig.for_root(seed_root()), write=False).verifications
    states = {verification.source: verification for verification in checked}
    assert {states[source].state_of(path) for source, path in fields} == {"verified"}


N8 = "historicalNightlyRegression.computedReportedDeltas.glm52Nvfp4.tokensPerSecondPercent.n8"
MUTATIONS = {  # id: (record, path, new value, {error path: (expected starts, found)})
    "derived-percentage": (R0, "speedRows.0.calculatedThroughputChangePercent", 11.284486, {
        "speedRows.0.calculatedThroughputChangePercent": ("10.284486 = (fusionOn", "11.284486")}),
    "derived-via-enclosing-objects": (R3, N8, -14.267813, {
        N8: ("-13.267813 = (reportedGlm52Nvfp4.tokensPerSecond[key].on", "-14.267813")}),
    "shape-equation-row": (R3, "shapeRows.5.paddedTokens", 8, {
        "shapeRows.5.paddedTokens": ("6 = ceil(fullTokens / tensorParallel) * tensorParallel", "8")}),
    "stable-to-backend-merge-days": (R1, "stableToBackendMergeDays", 24.1217, {
        "stableToBackendMergeDays": ("23.1217 = days_between(", "24.1217")}),
    "receipt-count-invariant": (R0, "sourceReceipts", lambda receipts: receipts[:-1], {
        "invariants.twentyOneSourceReceipts": ("false = len(sourceReceipts) == 21", "true")}),
    "table-based-invariant": (R2, "topologyExamples.tp8Pp2.15.socket", "/tmp/sglang_weight_cache_rank14.sock", {
        "invariants.tp8Pp2HasSixteenSockets": ("false = len(unique(", "true"),
        "topologyExamples.tp8Pp2.15.socket": ("'/tmp/sglang_weight_cache_rank15.sock' = replace(", "'/tmp/sglang_weight_cache_rank14.sock'")}),
    "topology-invariant": (R3, "topologyMatrix.1.expectedDecoderLayerPath", False, {
        "invariants.everyTopologyMatchesPinnedExpectation": ("false = all(", "true"),
        "topologyMatrix.1.matchesPinnedExpectation": ("false = computedSequence", "true")}),
    "sha256-of-63-chars": (R0, "sourceReceipts.0.sha256", SHA0[:63], {
        "sourceReceipts.0.sha256": ("64 lower-case hex digits", f"'{SHA0[:63]}'"),
        "invariants.allSourceHashesValid": ("false = all(matches(", "true")}),
    "receipt-of-0-bytes": (R0, "sourceReceipts.0.bytes", 0, {
        "sourceReceipts.0.bytes": ("a positive byte count", "0")}),
    "same-url-other-hash": (R0, "sourceReceipts.1.url", URL0, {
        "sourceReceipts.1.sha256": (f"the sha256 of sourceReceipts.0 ({SHA0}) for the same URL", f"'{SHA1}'")}),
    "commit-of-39-hex": (R0, "revisions.sglangAuditCommit", COMMIT[:39], {
        "revisions.sglangAuditCommit": ("a 40-hex commit", f"'{COMMIT[:39]}'")}),
    "tag-that-is-no-tag": (R0, "releaseBoundary.1.tag", "version-five", {
        "releaseBoundary.1.tag": ("a release tag like v1.2.3", "'version-five'")}),
    "time-without-zone": (R0, "releaseBoundary.1.publishedAt", "2026-07-10T22:58:33", {
        "releaseBoundary.1.publishedAt": ("an ISO 8601 time with a zone", "'2026-07-10T22:58:33'")}),
    "releases-out-of-order": (R0, "releaseBoundary.1.publishedAt", "2026-06-01T00:00:00Z", {
        "releaseBoundary.1.publishedAt": ("published after v0.5.14 (2026-06-26T22:57:30Z)", "'2026-06-01T00:00:00Z'")}),
}  # fmt: skip


@pytest.mark.parametrize("case", MUTATIONS)
def test_one_changed_value_is_an_error_naming_file_path_expected_and_found(
    project: Project, case: str
) -> None:
    name, path, new, expected = MUTATIONS[case]
    change(project, name, path, new)
    code, report = audit(project)
    assert code == 1
    errors = {f["related"][0]: f for f in findings(report, "error")}
    assert set(errors) == set(expected)
    assert report["summary"]["errors"] == len(expected)
    for where, (want, got) in expected.items():
        assert errors[where]["source"] == f"records/{name}"
        assert errors[where]["message"].startswith(f"{where}: expected {want}")
        assert errors[where]["message"].endswith(f", found {got}")
    items = section(report, name)["items"]
    assert {i["path"] for i in items if i["state"] == "contradicted"} == set(expected)


def test_a_contradiction_fails_the_normal_build_and_writes_nothing(project: Project) -> None:
    change(project, R0, "speedRows.0.calculatedThroughputChangePercent", 11.284486)
    result = project.run()
    assert result.returncode == 1
    assert "speedRows.0.calculatedThroughputChangePercent: expected 10.284486" in result.stderr
    assert not project.out.exists()


def test_the_same_receipt_listed_twice_is_a_warning_not_an_error(project: Project) -> None:
    change(project, R0, "sourceReceipts.1.url", URL0)
    change(project, R0, "sourceReceipts.1.sha256", SHA0)
    code, report = audit(project)
    assert code == 0
    assert not findings(report, "error")
    warnings = {f["message"] for f in findings(report, "warning")}
    assert f"sourceReceipts.1: repeats sourceReceipts.0 ({URL0}); remove one" in warnings


def test_an_invariant_without_a_rule_builds_and_is_asserted_by_the_audit(project: Project) -> None:
    change(project, R0, "invariants.everyoneAgreesItIsFast", True)
    code, report = audit(project)
    assert code == 0
    assert {
        "path": "invariants.everyoneAgreesItIsFast", "kind": "invariant", "state": "unverifiable",
        "expected": "", "found": "", "reason": NO_RULE, "formula": "",
    } in section(report, R0)["items"]  # fmt: skip
    assert project.run().returncode == 0
    line = invariant_line(soup(project.out / FUSION_PAGE), "Everyone agrees it is fast")
    assert "state-asserted" in line["class"]
    assert line.select_one(".claim-state").get_text() == f"asserted by the audit ({NO_RULE})"


def test_a_rule_added_to_rules_yaml_explains_a_field_inference_cannot(project: Project) -> None:
    path = "speedRows.0.calculatedTokensPerHour"
    change(project, R0, path, 387972.0)  # 107.77 tokens/s * 3600: no formula inference tries
    code, before = audit(project)
    assert code == 0
    (item,) = section(before, R0)["items"]
    assert (item["path"], item["state"], item["found"]) == (path, "unexplained", "387972.0")
    (warning,) = [f for f in findings(before, "warning") if f["related"] == [path]]
    assert warning["message"].startswith(f"{path}: expected ")
    assert warning["message"].endswith(
        ", found 387972.0; add a rule to content/rules.yaml if the formula is another"
    )
    add_rule(project, "calculatedTokensPerHour", "fusionOnTokensPerSecond * 3600")
    code, after = audit(project)
    assert code == 0
    fusion = section(after, R0)
    assert (fusion["checked"], fusion["verified"], fusion["items"]) == (124, 124, [])
    assert not [f for f in findings(after, "warning") if f["related"] == [path]]


def test_guide_pages_show_what_the_build_verified(site: Path) -> None:
    page = soup(site / FUSION_PAGE)
    line = invariant_line(page, "Twenty one source receipts")
    assert "state-verified" in line["class"]
    assert line.select_one(".claim-state").get_text() == "verified by the build"
    (table,) = [t for t in page.select("table.data") if "Calculated throughput change %" in t.text]
    headers = [th.get_text(strip=True) for th in table.select("thead th")]
    derived = headers.index("Calculated throughput change %")
    measured = headers.index("Fusion on tokens/s")
    rows = [row.find_all("td") for row in table.select("tbody tr")]
    assert len(rows) == 2
    assert all(cells[derived].select_one("span.verified-mark") for cells in rows)
    rule = "(fusionOnTokensPerSecond - fusionOffTokensPerSecond) / fusionOffTokensPerSecond * 100"
    titles = {cells[derived].select_one("span.verified-mark")["title"] for cells in rows}
    assert titles == {f"Recomputed by the build: {rule}"}
    assert not any(cells[measured].select_one("span.verified-mark") for cells in rows)
    # Marks adorn the page; search indexes what the values say, not "verified" on every page.
    marks = [m for m in page.select(".verified-mark, .claim-state") if "verified" in m.get_text()]
    assert len(marks) > 10
    assert all(any(t.has_attr("data-pagefind-ignore") for t in [m, *m.parents]) for m in marks)
    dcp = soup(site / "guides/glm-5-2-vllm-decode-context-parallel/index.html")
    line = invariant_line(dcp, "GLM TP8 DCP8 passes only head envelope")
    reason = UNDECIDABLE["glmTp8Dcp8PassesOnlyHeadEnvelope"]
    assert line.select_one(".claim-state").get_text() == f"asserted by the audit ({reason})"


def test_sourced_measurements_without_a_boundary_caveat_are_warnings(
    seed_report: Report, project: Project
) -> None:
    warned = [(f["source"], f["message"]) for f in findings(seed_report, "warning")]
    assert warned == [(f"records/{R0}", f"reportedMemoryRows.{i}: {CAVEAT}") for i in range(4)]
    change(project, R0, "reportedMemoryRows.0.boundary", "Pull-request author measurement.")
    code, report = audit(project)
    assert code == 0
    warned = [f["message"] for f in findings(report, "warning")]
    assert warned == [f"reportedMemoryRows.{i}: {CAVEAT}" for i in (1, 2, 3)]


def test_a_release_candidate_published_before_its_release_is_in_order(project: Project) -> None:
    rc = {"tag": "v0.5.15rc1", "publishedAt": "2026-07-03T00:00:00Z", "fusionPresent": True,
          "disableFlagDefault": False, "decision": "release candidate"}  # fmt: skip
    change(project, R0, "releaseBoundary", lambda rows: [rows[0], rc, *rows[1:]])
    code, report = audit(project)
    assert [f["message"] for f in findings(report, "error")] == []
    assert code == 0


def test_a_commit_with_a_non_hex_character_is_a_contradiction(project: Project) -> None:
    change(project, R0, "revisions.sglangAuditCommit", COMMIT[:39] + "g")
    code, report = audit(project)
    assert [f["related"] for f in findings(report, "error")] == [["revisions.sglangAuditCommit"]]
    assert code == 1


def test_a_tiny_recorded_number_is_compared_at_its_own_precision(project: Project) -> None:
    change(project, R0, "speedRows.0.calculatedHoursPerToken", 9e-06)  # 1/97.72/3600 = 2.84e-06
    add_rule(project, "calculatedHoursPerToken", "1 / fusionOffTokensPerSecond / 3600")
    code, report = audit(project)
    errors = [f["related"] for f in findings(report, "error")]
    assert errors == [["speedRows.0.calculatedHoursPerToken"]]
    assert code == 1
