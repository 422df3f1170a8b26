"""Format findings as the audit report: text grouped by page, or JSON with a stable schema.

JSON schema `glm52-audit/1` (documented in the README):
    {"schema": "glm52-audit/1",
     "summary": {"ok": bool, "errors": int, "warnings": int, "info": int, "acknowledged": int,
                 "pages": int},
     "findings": [{"check", "severity", "page", "source", "message", "related", "score",
                   "reviewed", "acknowledged"}, ...],
     "records": [{"source", "checked", "verified", "unverifiable", "contradicted",
                  "items": [{"path", "kind", "state", "expected", "found", "reason"}]}, ...]}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby

from site_builder.claims import Verification
from site_builder.errors import Problem, one_line
from site_builder.models import Finding

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
    shown = [f for f in findings if include_info or (f.severity != "info" and not f.acknowledged)]
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
                f"{verification.count('verified')} verified, "
                f"{verification.count('unverifiable')} unverifiable, "
                f"{verification.count('contradicted')} contradicted"
            )
            for check in verification.checks:
                if check.state == "unverifiable":
                    lines.append(f"    unverifiable {check.path}: {check.reason}")
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
            for f in sorted(findings, key=_order)
        ],
        "records": [_record_section(verification) for verification in verifications],
    }
    return json.dumps(report, indent=2, ensure_ascii=False)


def _record_section(verification: Verification) -> dict[str, object]:
    """Return one record's verification: counts, then every item not verified."""
    return {
        "source": verification.source,
        "checked": len(verification.checks),
        "verified": verification.count("verified"),
        "unverifiable": verification.count("unverifiable"),
        "contradicted": verification.count("contradicted"),
        "items": [
            {
                "path": check.path,
                "kind": check.kind,
                "state": check.state,
                "expected": check.expected,
                "found": check.found,
                "reason": check.reason,
            }
            for check in verification.checks
            if check.state != "verified"
        ],
    }


def _order(finding: Finding) -> tuple[str, int, str, str, str]:
    """Sort by page, then errors before warnings before notes."""
    rank = {"error": 0, "warning": 1, "info": 2}[finding.severity]
    return (finding.page or SITE_WIDE, rank, finding.check, finding.source, finding.message)
