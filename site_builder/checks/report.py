"""Format findings as the audit report: text grouped by page, or JSON with a stable schema.

JSON schema `glm52-audit/1` (documented in the README):
    {"schema": "glm52-audit/1",
     "summary": {"ok": bool, "errors": int, "warnings": int, "info": int, "acknowledged": int,
                 "pages": int},
     "findings": [{"check", "severity", "page", "source", "message", "related", "score",
                   "reviewed", "acknowledged"}, ...],
     "records": [{"source", "checked", "verified", "inferred", "unverifiable", "unexplained",
                  "contradicted", "items": [{"path", "kind", "state", "expected", "found",
                  "reason", "formula"}]}, ...],
     "closest": {"<guide URL>": [{"url", "score", "kind"}, ...], ...}}

The closest pages of each guide arrive as `closest` notes from the overlap check; they are
listed in their own section, not among the findings, and not counted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

from site_builder.checks.overlap import CLOSEST_CHECK, NEAR_DUPLICATE, STRONG_OVERLAP
from site_builder.errors import Problem, one_line
from site_builder.model.claims import Verification
from site_builder.model.models import BuildReport, Finding

SCHEMA = "glm52-audit/1"
SITE_WIDE = "(site)"


def problems_as_findings(problems: Sequence[Problem]) -> list[Finding]:
    """Return input problems as error findings, so both reach the same report."""
    return [
        Finding("input", "error", problem.source, f"{problem.location}: {problem.message}")
        for problem in problems
    ]


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    """Return how many findings there are of each severity."""
    findings = _findings(findings)
    return {
        "errors": sum(1 for f in findings if f.severity == "error"),
        "warnings": sum(1 for f in findings if f.severity == "warning"),
        "info": sum(1 for f in findings if f.severity == "info"),
        "acknowledged": sum(1 for f in findings if f.acknowledged),
    }


def format_text(
    findings: Sequence[Finding],
    pages: int,
    *,
    include_info: bool,
    verifications: Sequence[Verification] = (),
) -> str:
    """Return the report as text: a heading per page, one line per finding, a summary line."""
    shown = [
        f
        for f in _findings(findings)
        if include_info or (f.severity != "info" and not f.acknowledged)
    ]
    lines = []
    for page, group in groupby(sorted(shown, key=_order), key=lambda f: f.page or SITE_WIDE):
        lines.append(one_line(page))
        for finding in group:
            mark = " (reviewed)" if finding.reviewed else ""
            if finding.acknowledged:
                mark += f" (acknowledged: {finding.acknowledged})"
            lines.append(
                one_line(
                    f"  {finding.severity:<7} {finding.check:<15} {finding.source}: "
                    f"{finding.message}{mark}"
                )
            )
    if include_info and verifications:
        lines.append("Record verification (claims checked, verified, unverifiable, contradicted):")
        for verification in verifications:
            lines.append(
                f"  {verification.source}: {len(verification.checks)} checked, "
                f"{verification.count('verified')} verified "
                f"({verification.inferred} by an inferred formula), "
                f"{verification.count('unverifiable')} unverifiable, "
                f"{verification.count('unexplained')} unexplained, "
                f"{verification.count('contradicted')} contradicted"
            )
            for check in verification.unsettled:
                if check.state == "unverifiable":
                    lines.append(f"    unverifiable {check.path}: {check.reason}")
                elif check.state == "unexplained":
                    lines.append(
                        f"    unexplained {check.path}: expected {check.expected}, "
                        f"found {check.found}"
                    )
    closest = _closest(findings)
    if include_info and closest:
        lines.append(
            f"Closest pages of each guide (similarity 0-1; overlap warnings from "
            f"{STRONG_OVERLAP:.2f}, errors from {NEAR_DUPLICATE:.2f}):"
        )
        for page, near in closest.items():
            listed = "; ".join(f"{n['url']} {n['score']:.2f} {n['kind']}" for n in near)
            lines.append(one_line(f"  {page}: {listed}"))
    total = counts(findings)
    acknowledged = f" ({total['acknowledged']} acknowledged)" if total["acknowledged"] else ""
    hidden = "; --audit lists them" if total["acknowledged"] and not include_info else ""
    lines.append(
        f"{total['errors']} error(s), {total['warnings']} warning(s){acknowledged}, "
        f"{total['info']} note(s) across {pages} page(s){hidden}."
    )
    return "\n".join(lines)


def format_json(
    findings: Sequence[Finding], pages: int, verifications: Sequence[Verification] = ()
) -> str:
    """Return the report as JSON (schema glm52-audit/1), keys in a stable order."""
    total = counts(findings)
    report = {
        "schema": SCHEMA,
        "summary": {"ok": total["errors"] == 0, **total, "pages": pages},
        "findings": [
            {
                "check": f.check,
                "severity": f.severity,
                "page": f.page,
                "source": f.source,
                "message": f.message,
                "related": list(f.related),
                "score": f.score,
                "reviewed": f.reviewed,
                "acknowledged": f.acknowledged,
            }
            for f in sorted(_findings(findings), key=_order)
        ],
        "records": [_record_section(verification) for verification in verifications],
        "closest": _closest(findings),
    }
    return json.dumps(report, indent=2, ensure_ascii=False)


def _findings(findings: Sequence[Finding]) -> list[Finding]:
    """Return the findings proper: everything but the closest-page notes."""
    return [finding for finding in findings if finding.check != CLOSEST_CHECK]


def _closest(findings: Sequence[Finding]) -> dict[str, list[dict[str, object]]]:
    """Return each guide's closest pages, closest first: {page: [{url, score, kind}]}."""
    notes = sorted(
        (f for f in findings if f.check == CLOSEST_CHECK),
        key=lambda f: (f.page, -(f.score or 0.0), f.related),
    )
    closest: dict[str, list[dict[str, object]]] = {}
    for note in notes:
        kind = note.message.split(":", 1)[0]  # overlap writes "<kind>: <score> with <url>"
        entry = {"url": note.related[0], "score": note.score, "kind": kind}
        closest.setdefault(note.page, []).append(entry)
    return closest


def _record_section(verification: Verification) -> dict[str, object]:
    """Return one record's verification: counts, then every item not verified."""
    return {
        "source": verification.source,
        "checked": len(verification.checks),
        "verified": verification.count("verified"),
        "inferred": verification.inferred,
        "unverifiable": verification.count("unverifiable"),
        "unexplained": verification.count("unexplained"),
        "contradicted": verification.count("contradicted"),
        "items": [
            {
                "path": check.path,
                "kind": check.kind,
                "state": check.state,
                "expected": check.expected,
                "found": check.found,
                "reason": check.reason,
                "formula": check.formula,
            }
            for check in verification.unsettled
        ],
    }


def _order(finding: Finding) -> tuple[str, int, str, str, str]:
    """Sort by page, then errors before warnings before notes."""
    rank = {"error": 0, "warning": 1, "info": 2}[finding.severity]
    return (finding.page or SITE_WIDE, rank, finding.check, finding.source, finding.message)


def format_timings(timings: Sequence[tuple[str, float]]) -> str:
    """Return the stage times of one build as one line: 'Stage times: load 0.02 s, ...'."""
    total = sum(seconds for _, seconds in timings)
    stages = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in timings)
    return f"Stage times: {stages}; total {total:.2f} s."


def outcome(
    report: BuildReport, out_dir: Path, audit: bool, include_drafts: bool, seconds: float
) -> str:
    """The command's last line: what it did, with how many guides and drafts, in how long."""
    if audit:
        action = "Audited (nothing changed since the last check)" if report.unchanged else "Audited"
    elif report.unchanged:
        action = f"Up to date: nothing changed since {out_dir} was built"
    else:
        action = f"Built {len(report.pages)} files into {out_dir}"
    drafts = report.drafts
    note = ""
    if drafts and include_drafts:
        note = f" (including {len(drafts)} draft(s))"
    elif drafts:
        note = f" ({len(drafts)} draft(s) left out: {', '.join(drafts)}; --drafts writes them)"
    cached, made = report.guide_pages
    if cached and not audit and not report.unchanged:
        note += f" ({cached} of {made} guide pages from the build cache)"
    acknowledged = counts(report.findings)["acknowledged"]
    if acknowledged and not audit:
        note += f" ({acknowledged} acknowledged warning(s) not shown; --audit lists them)"
    return f"{action}: {report.guides} guides{note} in {seconds:.2f}s."
