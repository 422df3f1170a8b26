"""Site-wide checks: pure functions of the Site that return findings, never raise.

Adding a check means adding a function to CHECKS. The CLI decides what a finding's
severity means for the exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from site_builder.models import Finding, Site


def check_missing_prose(site: Site) -> list[Finding]:
    """Warn about guides built from a record alone, with a title derived from its status."""
    return [
        Finding(
            "prose",
            "warning",
            guide.evidence.source,
            f"no guide in content/ renders this record; built {guide.url} with a title "
            f"derived from its status",
        )
        for guide in site.guides
        if guide.doc_source is None
    ]


def check_descriptions(site: Site) -> list[Finding]:
    """Warn when two guides share a meta description, which search engines flag."""
    seen: dict[str, str] = {}
    findings = []
    for guide in site.guides:
        first = seen.setdefault(guide.description, guide.url)
        if first != guide.url:
            message = f"{guide.url} has the same description as {first}"
            findings.append(
                Finding(
                    "description", "warning", guide.doc_source or guide.evidence.source, message
                )
            )
    return findings


CHECKS: tuple[Callable[[Site], list[Finding]], ...] = (check_missing_prose, check_descriptions)


def run_checks(site: Site) -> list[Finding]:
    """Run every check and return all findings, errors first, in a stable order."""
    findings = [finding for check in CHECKS for finding in check(site)]
    return sorted(findings, key=lambda f: (f.severity != "error", f.source, f.check, f.message))
