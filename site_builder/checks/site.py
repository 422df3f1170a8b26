"""Site-wide checks: pure functions of the Site (and its rendered pages) that return findings.

Adding a check means adding a function to CHECKS. Checks never raise; the CLI decides
what the findings mean for the exit code. The report groups them by page.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date

from site_builder.cache.store import BuildCache
from site_builder.checks.consistency import check_orphans, check_site
from site_builder.checks.overlap import check_overlap
from site_builder.checks.seo import check_cannibalisation, check_descriptions, check_titles
from site_builder.model.claims import Verification
from site_builder.model.declared import PageScan
from site_builder.model.models import Finding, Page, Site
from site_builder.render.deploy import check_deploy, check_takeovers, parse_lastmod, plan_deploy
from site_builder.render.scan import page_key_of_path, scan_pages
from site_builder.urls import canonical_url, page_key

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def check_drafts(site: Site) -> list[Finding]:
    """Note every draft: audited like any guide, but a deploy leaves it out."""
    return [
        Finding(
            "draft",
            "info",
            guide.source,
            f"not published ({guide.draft}); audited, shown in the preview and by --drafts, "
            f"never deployed",
            guide.url,
        )
        for guide in site.drafts
    ]


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
        if literal != canonical:
            message = (
                f"the registry lists {literal} but the guide's canonical is {canonical}: "
                f"one page, two canonicals"
            )
            findings.append(Finding("canonical", "error", guide.source, message, key, (literal,)))
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
    """Check each record's prepublication canonical count against what the registry can prove.

    Pages published or last modified before the record's check were certainly live then (the
    lower bound); pages published on or after it, by the registry or by guides built here,
    certainly were not (all pages less those is the upper bound). Only a count outside the
    bounds is a warning, and it says which bound and what to change.
    """
    base = site.settings.base_url
    published: dict[str, date] = {}
    live_since: dict[str, date] = {}
    for entry in site.registry:
        key = page_key(entry.url, base) or entry.url
        modified = parse_lastmod(entry.lastmod)
        known = [day for day in (entry.published, modified) if day is not None]
        if known:
            live_since[key] = min(known)
        if entry.published is not None:
            published[key] = entry.published
    for guide in site.guides:
        if not guide.draft:
            published.setdefault(guide.url, guide.published)
    pages = site.registry_by_key.keys() | {g.url for g in site.guides if not g.draft}
    # Sorted once, so each record's bounds are two binary searches (10,000 guides stay cheap).
    live_days = sorted(live_since.values())
    # A page published on or after a day was not live before it, unless it was seen earlier.
    new_days = sorted(live_since.get(key, day) for key, day in published.items())
    findings = []
    for guide in site.guides:
        claimed = guide.evidence.sitemap_count
        if claimed is None:
            continue
        checked = guide.evidence.checked_at.astimezone(UTC).date()
        lower = bisect_left(live_days, checked)
        later = len(new_days) - bisect_left(new_days, checked)
        upper = len(pages) - later
        if lower <= claimed <= upper:
            continue
        if claimed < lower:
            message = (
                f"the record counts {claimed} canonicals before {checked}, but the registry shows "
                f"at least {lower} pages published or modified before then; correct the "
                f"record's count ({_count_key(site)})"
            )
        else:
            message = (
                f"the record counts {claimed} canonicals before {checked}, but the registry can "
                f"account for at most {upper} ({len(pages)} pages, less {later} published on or "
                f"after that day); import the live sitemap with --import-sitemap, add the "
                f"missing pages to content/registry.json, or correct the record's count "
                f"({_count_key(site)})"
            )
        findings.append(
            Finding("sitemap-count", "warning", guide.evidence.source, message, guide.url)
        )
    return findings


def _count_key(site: Site) -> str:
    """Return where a record keeps its sitemap count, as its vocabulary spells it."""
    keys = site.vocabulary.overlap if site.vocabulary else None
    return f"{keys.key}.{keys.sitemap_count}" if keys else "sitemap count"


SITE_CHECKS: tuple[Callable[[Site], list[Finding]], ...] = (
    check_drafts,
    check_takeovers,
    check_cannibalisation,
    check_titles,
    check_descriptions,
    check_canonical_uniqueness,
    check_nearby_pages_resolve,
    check_sitemap_count,
)


def check_claims(site: Site, verifications: Mapping[str, Verification]) -> list[Finding]:
    """A contradicted claim is an error naming the field, expected and found values; a derived
    number no rule covers and no inferred formula explains is a warning (an error when
    site.yaml sets strict_derived_numbers), naming the closest formula."""
    findings = []
    unexplained = "error" if site.settings.strict_derived_numbers else "warning"
    for guide in site.guides:
        verification = verifications.get(guide.evidence.operation_id)
        if verification is None:
            continue
        for check in verification.unsettled:
            if check.state == "unverifiable":
                continue
            if check.state == "contradicted":
                severity = "error"
                message = f"{check.path}: expected {check.expected}, found {check.found}"
            else:  # unexplained
                severity = unexplained
                message = (
                    f"{check.path}: expected {check.expected} from {check.formula}, found "
                    f"{check.found}; add a rule to content/rules.yaml if the formula is another"
                )
            findings.append(
                Finding("verify", severity, verification.source, message, guide.url, (check.path,))
            )
        for path, problem in verification.warnings:
            findings.append(
                Finding("verify", "warning", verification.source, f"{path}: {problem}", guide.url)
            )
    return findings


def run_checks(
    site: Site,
    pages: Sequence[Page],
    verifications: Mapping[str, Verification] | None = None,
    *,
    deploy: bool = True,
    cache: BuildCache | None = None,
) -> list[Finding]:
    """Run every check on the site and its rendered pages; return findings in report order.

    `deploy` false leaves out how a deploy answers live pages: for a site holding drafts,
    which the deploy (checked by `check_published`) leaves out. `cache` keeps what the
    overlap audit makes of each page for the next build.
    """
    scans: list[PageScan] = scan_pages(pages, site.settings.base_url)
    findings = [finding for check in SITE_CHECKS for finding in check(site)]
    findings += check_orphans(site, pages)
    findings += check_claims(site, verifications or {})
    shingled = {page_key_of_path(page.path): page.shingles for page in pages if page.shingles}
    findings += check_overlap(site, shingled, cache)
    findings += check_site(site, pages, scans)
    if deploy:
        findings += _deploy_findings(site, pages)
    return ordered(findings)


def check_published(site: Site, pages: Sequence[Page]) -> list[Finding]:
    """Check what a deploy writes when drafts are left out: links, sitemap, live pages."""
    return ordered(
        [
            *check_site(site, pages, scan_pages(pages, site.settings.base_url)),
            *_deploy_findings(site, pages),
        ]
    )


def ordered(findings: Sequence[Finding]) -> list[Finding]:
    """Return findings by page, then severity, check, file and message."""
    return sorted(
        findings,
        key=lambda f: (f.page, SEVERITY_ORDER[f.severity], f.check, f.source, f.message),
    )


def _deploy_findings(site: Site, pages: Sequence[Page]) -> list[Finding]:
    """How the deploy of these pages answers every live page, and static/ collisions."""
    built = ["/" + page.path for page in pages]
    return check_deploy(site, plan_deploy(site, built), built)


def _absolute(url: str, base_url: str) -> str:
    """Return a registry URL in absolute form (site paths get the base URL)."""
    return canonical_url(url, base_url) if url.startswith("/") else url
