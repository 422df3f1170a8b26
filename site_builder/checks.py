"""Site-wide checks: pure functions of the Site (and its rendered pages) that return findings.

Adding a check means adding a function to CHECKS. Checks never raise; the CLI decides
what the findings mean for the exit code. The report groups them by page.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC

from site_builder.consistency import check_site
from site_builder.models import Finding, Page, Site, Verification
from site_builder.overlap import check_overlap
from site_builder.scan import PageScan, scan_pages
from site_builder.urls import canonical_url, page_key

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def check_missing_prose(site: Site) -> list[Finding]:
    """Warn about guides built from a record alone, with a title derived from its status."""
    return [
        Finding(
            "prose",
            "warning",
            guide.evidence.source,
            f"no guide in content/ renders this record; built {guide.url} with a title "
            f"derived from its status",
            guide.url,
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
            source = guide.doc_source or guide.evidence.source
            message = f"has the same description as {first}"
            findings.append(Finding("description", "warning", source, message, guide.url, (first,)))
    return findings


def check_canonical_uniqueness(site: Site) -> list[Finding]:
    """No two registry entries, and no guide and a differently spelled entry, share a canonical.

    A guide whose canonical is already registered, spelled the same, is an update of that page.
    """
    base = site.settings.base_url
    findings = []
    first_entry: dict[str, str] = {}
    for entry in site.registry:
        key = page_key(entry.url, base) or entry.url
        literal = _absolute(entry.url, base)
        if key in first_entry:
            message = f"{literal} and {first_entry[key]} are the same page ({key})"
            findings.append(Finding("canonical", "error", site.registry_source, message, key))
            continue
        first_entry[key] = literal
        guide = site.by_url.get(key)
        if guide is None:
            continue
        canonical = site.canonical(guide.url)
        source = guide.doc_source or guide.evidence.source
        if literal != canonical:
            message = (
                f"the registry lists {literal} but the guide's canonical is {canonical}: "
                f"one page, two canonicals"
            )
            findings.append(Finding("canonical", "error", source, message, key, (literal,)))
        else:
            message = f"updates the registered page {canonical}"
            findings.append(Finding("canonical", "info", source, message, key))
    return findings


def check_nearby_pages_resolve(site: Site) -> list[Finding]:
    """Every page a record's overlap audit names is a registry page or a built guide."""
    base = site.settings.base_url
    registered = {page_key(entry.url, base) for entry in site.registry}
    findings = []
    for guide in site.guides:
        for page in guide.evidence.nearby:
            key = page_key(page.url, base)
            if key is None or (key not in registered and key not in site.by_url):
                message = f"nearest page {page.url} is not in the sitemap registry or built here"
                findings.append(
                    Finding(
                        "nearest-page",
                        "error",
                        guide.evidence.source,
                        message,
                        guide.url,
                        (page.url,),
                    )
                )
    return findings


def check_sitemap_count(site: Site) -> list[Finding]:
    """Compare each record's prepublication canonical count with the registry's count then."""
    dates = sorted(entry.published for entry in site.registry if entry.published is not None)
    undated = len(site.registry) - len(dates)
    findings = []
    for guide in site.guides:
        claimed = dict(guide.evidence.overlap_facts).get("prepublicationSitemapCanonicals")
        if not isinstance(claimed, int) or isinstance(claimed, bool):
            continue
        checked = guide.evidence.checked_at.astimezone(UTC).date()
        before = bisect_left(dates, checked)
        if before != claimed:
            message = (
                f"the record counts {claimed} canonicals before {checked}; the registry has "
                f"{before} published before then ({undated} entries have no date; import the "
                f"live sitemap with --import-sitemap to complete it)"
            )
            findings.append(
                Finding("sitemap-count", "warning", guide.evidence.source, message, guide.url)
            )
    return findings


SITE_CHECKS: tuple[Callable[[Site], list[Finding]], ...] = (
    check_missing_prose,
    check_descriptions,
    check_canonical_uniqueness,
    check_nearby_pages_resolve,
    check_sitemap_count,
)


def check_claims(site: Site, verifications: Mapping[str, Verification]) -> list[Finding]:
    """A contradicted claim is an error naming the field, expected and found values."""
    findings = []
    for guide in site.guides:
        verification = verifications.get(guide.evidence.operation_id)
        if verification is None:
            continue
        for check in verification.checks:
            if check.state == "contradicted":
                message = f"{check.path}: expected {check.expected}, found {check.found}"
                findings.append(
                    Finding(
                        "verify", "error", verification.source, message, guide.url, (check.path,)
                    )
                )
        for path, problem in verification.warnings:
            findings.append(
                Finding("verify", "warning", verification.source, f"{path}: {problem}", guide.url)
            )
    return findings


def run_checks(
    site: Site, pages: Sequence[Page], verifications: Mapping[str, Verification] | None = None
) -> list[Finding]:
    """Run every check on the site and its rendered pages; return findings in report order."""
    scans: list[PageScan] = scan_pages(pages)
    findings = [finding for check in SITE_CHECKS for finding in check(site)]
    findings += check_claims(site, verifications or {})
    findings += check_overlap(site, scans)
    findings += check_site(site, pages, scans)
    return sorted(
        findings,
        key=lambda f: (f.page, SEVERITY_ORDER[f.severity], f.check, f.source, f.message),
    )


def _absolute(url: str, base_url: str) -> str:
    """Return a registry URL in absolute form (site paths get the base URL)."""
    return canonical_url(url, base_url) if url.startswith("/") else url
