"""Site consistency: sitemap, canonical tags and internal links agree with each other, and
every guide is linked from another (no orphans).

Works on the rendered pages (via their scans), after rendering and before writing, so a
site whose links or canonicals disagree is never published.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from xml.etree import ElementTree

from site_builder.model.declared import PageScan
from site_builder.model.links import ProseLink, SiteLink, missing_fragment
from site_builder.model.models import Finding, Guide, Page, Site
from site_builder.present.navigation import navigation_of
from site_builder.render.deploy import plan_deploy
from site_builder.urls import page_key

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def check_site(site: Site, pages: Sequence[Page], scans: Sequence[PageScan]) -> list[Finding]:
    """Return every sitemap, canonical, link and anchor inconsistency of the built site."""
    locs = _sitemap_locs(pages)
    return [
        *_check_sitemap(site, pages, scans, locs),
        *_check_canonicals(site, scans, set(locs)),
        *_check_links(site, pages, scans),
    ]


def check_orphans(site: Site, pages: Sequence[Page]) -> list[Finding]:
    """Warn on a guide no other published guide links to from its prose, overlap audit or
    related guides (the index, tag pages, feed and newer/older links list every guide).

    Prose links are the ones rendering recorded on each guide's page (`Page.links`)."""
    base = site.settings.base_url
    navigation = navigation_of(site)
    prose = {"/" + page.path.removesuffix("index.html"): page.links for page in pages}
    linked: set[str | None] = set()
    for guide in site.guides:
        if guide.draft:
            continue  # a draft is not published: its links reach no reader
        targets = {page_key(link.href, base) for link in prose.get(guide.url, ()) if link.href}
        targets |= {page_key(page.url, base) for page in guide.evidence.nearby}
        targets |= {other.url for other in navigation.neighbours(guide).related}
        linked |= targets - {guide.url}
    message = (
        "no other guide links to it (only the index, tag pages and feed do); link to it from "
        "a related guide's prose, name it as a nearest page in another record's overlap audit, or "
        "give it a tag other guides have so it is listed among their related guides"
    )
    return [
        Finding("orphan", "warning", guide.source, message, guide.url)
        for guide in site.guides
        if guide.url not in linked
    ]


def _sitemap_locs(pages: Sequence[Page]) -> list[str]:
    """Return the <loc> values of the built sitemap.xml."""
    sitemap = next((page for page in pages if page.path == "sitemap.xml"), None)
    if sitemap is None:
        return []
    root = ElementTree.fromstring(sitemap.content)
    return [(loc.text or "").strip() for loc in root.iter(f"{SITEMAP_NS}loc")]


def _source(site: Site, key: str) -> str:
    """Return the input file behind a page: its guide's prose or record, else the templates."""
    guide = site.by_url.get(key)
    if guide is not None:
        return guide.source
    return "templates/"


def _check_sitemap(
    site: Site, pages: Sequence[Page], scans: Sequence[PageScan], locs: list[str]
) -> list[Finding]:
    """sitemap.xml lists exactly the pages the deploy answers with 200, each once."""
    built = ["/" + page.path for page in pages]
    expected: set[str | None] = set(plan_deploy(site, built).answered)
    expected |= {scan.key for scan in scans if not scan.noindex}
    base = site.settings.base_url
    listed = Counter(page_key(loc, base) or loc for loc in locs)
    findings = [
        Finding("sitemap", "error", "sitemap.xml", f"{key} is listed {count} times", key)
        for key, count in sorted(listed.items())
        if count > 1
    ]
    findings += [
        Finding("sitemap", "error", "sitemap.xml", f"{key} is missing from sitemap.xml", key)
        for key in sorted(expected - set(listed), key=str)
    ]
    findings += [
        Finding(
            "sitemap", "error", "sitemap.xml", f"{key} is listed but is no page of the site", key
        )
        for key in sorted(set(listed) - expected, key=str)
    ]
    return findings


def _check_canonicals(site: Site, scans: Sequence[PageScan], locs: set[str]) -> list[Finding]:
    """Every indexable page's canonical and og:url equal its own sitemap entry."""
    findings = []
    for scan in scans:
        if scan.noindex:
            continue
        source = _source(site, scan.key)
        if not scan.canonical:
            findings.append(
                Finding("canonical", "error", source, "has no canonical link", scan.key)
            )
            continue
        if page_key(scan.canonical, site.settings.base_url) != scan.key:
            message = f"canonical {scan.canonical} points away from the page itself"
            findings.append(Finding("canonical", "error", source, message, scan.key))
        if scan.og_url != scan.canonical:
            message = f"og:url {scan.og_url or '(none)'} differs from canonical {scan.canonical}"
            findings.append(Finding("canonical", "error", source, message, scan.key))
        if scan.canonical not in locs:
            message = f"canonical {scan.canonical} is not the page's entry in sitemap.xml"
            findings.append(Finding("canonical", "error", source, message, scan.key))
    return findings


def _check_links(site: Site, pages: Sequence[Page], scans: Sequence[PageScan]) -> list[Finding]:
    """Every internal link and #anchor resolves to a built page, a registry page or an id.

    A link the editor wrote in prose is reported at its line, as typed; any other link on a
    guide page comes from its record (the overlap audit's nearest pages). What a page alone
    shows was judged when it was scanned (`links.py`); links to site paths are resolved here.
    """
    base = site.settings.base_url
    built = {scan.key: scan for scan in scans}
    files = {"/" + page.path for page in pages} | {"/" + asset.name for asset in site.static}
    registered = {page_key(entry.url, base) for entry in site.registry}
    prose = {page.path: page.links for page in pages if page.links}
    findings = []
    for scan in scans:
        guide = site.by_url.get(scan.key)
        links = prose.get(scan.path, ())
        for duplicate in scan.duplicate_ids:
            message = (
                f"id '{duplicate}' is used more than once, so #{duplicate} is ambiguous "
                f"(the builder hands out ids once per page: a template writes this one twice)"
            )
            findings.append(Finding("anchor", "error", "templates/", message, scan.key))
        findings += [
            _prose_finding(guide, scan.key, link, link.problem) for link in links if link.problem
        ]
        resolved = [
            (link.href, _site_problem(link, built, files, registered)) for link in scan.site_links
        ]
        for href, problem in sorted([*scan.link_problems, *(pair for pair in resolved if pair[1])]):
            written = [link for link in links if link.href == href]
            findings += [_prose_finding(guide, scan.key, link, problem) for link in written]
            if not written:
                source = guide.evidence.source if guide else "templates/"
                message = f"link {href} {problem}"
                findings.append(Finding("link", "error", source, message, scan.key, (href,)))
    return findings


def _site_problem(
    link: SiteLink, built: dict[str, PageScan], files: set[str], registered: set[str | None]
) -> str | None:
    """Return why a link to a site path does not resolve, or None when it does."""
    if link.key in files or link.path in files:
        return None
    target = built.get(link.key)
    if target is None:
        return None if link.key in registered else f"resolves to no page ({link.key})"
    return missing_fragment(link.fragment, target.ids, target.key)


def _prose_finding(guide: Guide | None, key: str, link: ProseLink, problem: str) -> Finding:
    """Report a prose link at its line, as the editor typed it."""
    source = guide.source if guide else "templates/"
    shown = f"'{link.typed}'"
    if link.href and not link.typed.strip().startswith(("/", "#", "http:", "https:")):
        problem += "; write the site path of a page (/guides/<slug>/) or a full https:// address"
    message = f"line {link.line}: {shown} {problem}"
    return Finding("link", "error", source, message, key, (link.href or link.typed,))
