"""How a deploy answers every live page of the registry, so no deploy drops one.

Each registry page is, first match wins: built here (a guide or a site page), copied verbatim
from static/, retired on purpose with a 301 (site.yaml `retired:` or a guide's `aliases:`),
proxied to site.yaml's `legacy_origin` with a Netlify 200 rule, or unserved: a 404, an error in
a production deploy build and a warning otherwise. The sitemap lists exactly the pages answered
with 200; `_redirects` holds the 301 and 200 rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal
from urllib.parse import urlsplit

from site_builder.model.models import Finding, Guide, Page, Severity, Site
from site_builder.model.schema import RegistryEntry
from site_builder.urls import canonical_url, page_key

Serving = Literal["built", "static", "retired", "proxied", "unserved"]
ANSWERS_200 = frozenset({"built", "static", "proxied"})
FIXES = (
    "build a guide at that URL, set `legacy_origin` in content/site.yaml to proxy it from where "
    "it lives now, copy it into static/ at the same path, or retire it with a 301 under "
    "`retired:` in content/site.yaml"
)
LISTED_IN_WARNING = 10


@dataclass(frozen=True)
class LivePage:
    """One registry page and how this deploy answers it."""

    key: str
    """The page's normal form: `/guides/x/`."""
    entry: RegistryEntry
    serving: Serving
    target: str = ""
    """Where a retired page redirects, or the URL a proxied page is fetched from."""


@dataclass(frozen=True)
class DeployPlan:
    """How the deploy answers each registry page, in registry order."""

    pages: tuple[LivePage, ...]

    def serving(self, state: Serving) -> tuple[LivePage, ...]:
        """Return the pages answered in one way."""
        return tuple(page for page in self.pages if page.serving == state)

    @property
    def answered(self) -> frozenset[str]:
        """Keys of the registry pages this deploy answers with 200."""
        return frozenset(page.key for page in self.pages if page.serving in ANSWERS_200)


def plan_deploy(site: Site, built: Iterable[str]) -> DeployPlan:
    """Decide how each registry page is answered, given the site paths this build writes."""
    base = site.settings.base_url
    files = {path.lower() for path in built}
    static = {"/" + asset.name.lower() for asset in site.static}
    retired = _retired(site)
    aliases = {page_key(alias, base) for guide in site.guides for alias in guide.aliases}
    pages: dict[str, LivePage] = {}
    for entry in site.registry:
        key = page_key(entry.url, base)
        if key is None or key in pages:
            continue
        if key in aliases:  # a forced 301 answers before the alias's own "moved" page
            pages[key] = LivePage(key, entry, "retired", retired[key])
        elif _has_file(key, files):
            pages[key] = LivePage(key, entry, "built")
        elif _has_file(key, static):
            pages[key] = LivePage(key, entry, "static")
        elif key in retired:
            pages[key] = LivePage(key, entry, "retired", retired[key])
        elif site.settings.legacy_origin:
            target = site.settings.legacy_origin + _path_as_written(entry.url)
            pages[key] = LivePage(key, entry, "proxied", target)
        else:
            pages[key] = LivePage(key, entry, "unserved")
    return DeployPlan(tuple(pages.values()))


def redirect_rules(site: Site, plan: DeployPlan) -> list[str]:
    """Return Netlify `_redirects` lines: aliases (forced 301), retired pages (301), proxies (200)."""
    aliases = sorted({(alias, guide.url) for guide in site.guides for alias in guide.aliases})
    lines = ["# Renamed guides: old path, new path, status (from front matter `aliases`)."]
    # Forced (`301!`): the alias's own "moved" page must not shadow the redirect.
    lines += [f"{alias} {target} 301!" for alias, target in aliases]
    alias_keys = {page_key(alias, site.settings.base_url) for alias, _ in aliases}
    retired = [
        (key, target) for key, target in sorted(_retired(site).items()) if key not in alias_keys
    ]
    if retired:
        lines.append("# Live pages retired on purpose (content/site.yaml `retired:`).")
        lines += [f"{key} {target} 301" for key, target in retired]
    proxied = plan.serving("proxied")
    if proxied:
        lines.append("# Live pages not built here, served from `legacy_origin` (200 proxy).")
        lines += [f"{_path_as_written(page.entry.url)} {page.target} 200" for page in proxied]
    origin = site.settings.legacy_origin
    if origin and site.settings.legacy_paths:
        lines.append("# Files the proxied pages need (content/site.yaml `legacy_paths:`).")
        lines += [
            f"{folder} {origin}{folder.removesuffix('*')}:splat 200"
            for folder in site.settings.legacy_paths
        ]
    return lines


def sitemap_entries(plan: DeployPlan, base_url: str) -> list[tuple[str, str]]:
    """Return (canonical URL, lastmod) of the registry pages served from elsewhere with 200."""
    return [
        (canonical_url(page.key, base_url), _lastmod(page.entry))
        for page in plan.pages
        if page.serving in {"static", "proxied"}
    ]


def static_pages(site: Site) -> list[Page]:
    """Return the files of static/, to be written verbatim."""
    return [Page(asset.name, asset.content) for asset in site.static]


def check_deploy(site: Site, plan: DeployPlan, built: Iterable[str]) -> list[Finding]:
    """Live pages that would answer 404, bad retirements, and static files that collide."""
    findings = _unserved(site, plan) + _proxied(site, plan)
    served = {page.key for page in plan.pages if page.serving in ANSWERS_200}
    files = {path.lower() for path in built}
    base = site.settings.base_url
    for old, target in sorted(site.settings.retired.items()):
        old_key, target_key = page_key(old, base), page_key(target, base)
        where = f"retired.{old}"
        if old_key in served or _has_file(old_key or old, files):
            message = f"{where}: {old} is retired but this deploy also serves it; remove one"
            findings.append(Finding("deploy", "error", "content/site.yaml", message, old_key or ""))
        elif target_key not in served and not _has_file(target_key or target, files):
            message = f"{where}: the target {target} is no page this deploy answers with 200"
            findings.append(Finding("deploy", "error", "content/site.yaml", message, old_key or ""))
    for asset in site.static:
        if "/" + asset.name.lower() in files:
            message = f"collides with a page the build writes (/{asset.name}); rename or remove it"
            findings.append(Finding("static", "error", f"static/{asset.name}", message))
    return findings


def check_takeovers(site: Site) -> list[Finding]:
    """A guide at a live page's URL must say `replaces:`; `replaces:` must name a live page."""
    findings = []
    for guide in site.guides:
        entry = site.registry_by_key.get(guide.url)
        if entry is None:
            if guide.replaces is not None:
                message = (
                    f"replaces {guide.replaces}, which is no page of the registry; "
                    f"remove `replaces:` (nothing live is taken over)"
                )
                findings.append(Finding("takeover", "error", guide.source, message, guide.url))
            continue
        findings += _named_as_other(site, guide)
        if is_own_page(entry, guide):
            continue
        url = site.canonical(guide.url)
        their_job = entry.reader_job or "not recorded in the registry"
        if guide.replaces is not None:
            message = f"replaces the live page {url} (reader job: {their_job!r}), as declared"
            findings.append(Finding("takeover", "info", guide.source, message, guide.url))
            continue
        message = (
            f"{url} is already a live page (reader job: {their_job!r}); this guide (reader job: "
            f"{guide.reader_job or 'none'!r}) would replace it. If it should, add "
            f"`replaces: {guide.url}` to the front matter; otherwise choose another slug"
        )
        findings.append(Finding("takeover", "error", guide.source, message, guide.url, (url,)))
    return findings


def is_own_page(entry: RegistryEntry, guide: Guide) -> bool:
    """Return whether a registry page is this guide's own earlier publication.

    It is when the page was published on or after the guide's `published` date, or (with no
    publication date) last modified at or after the guide's evidence was checked, as this
    builder's sitemap says. A page live before that, or with no date at all, is another page.
    """
    if entry.published is not None:
        return entry.published >= guide.published
    modified = parse_lastmod(entry.lastmod)
    if modified is None:
        return False
    return modified >= guide.evidence.checked_at.date()


def parse_lastmod(text: str) -> date | None:
    """Return the date of a sitemap `lastmod` (W3C date or time), or None when unreadable."""
    text = text.strip()
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).date() if "T" in text else date.fromisoformat(text)
    except ValueError:
        return None


def _named_as_other(site: Site, guide: Guide) -> list[Finding]:
    """A record whose overlap audit names the guide's own URL as a different nearby page."""
    findings = []
    for nearby in guide.evidence.nearby:
        if page_key(nearby.url, site.settings.base_url) == guide.url:
            message = (
                f"the record's overlap audit names {nearby.url} as a different nearby page "
                f"(reader job: {nearby.reader_job or 'none'!r}), yet this guide is published at "
                f"that URL; choose another slug or correct the overlap audit"
            )
            findings.append(Finding("takeover", "error", guide.evidence.source, message, guide.url))
    return findings


def _unserved(site: Site, plan: DeployPlan) -> list[Finding]:
    """Live pages that would answer 404, one finding each: an error in production, else a warning.

    One finding per page, so acknowledging one page never hides another that is lost later.
    """
    severity: Severity = "error" if site.production else "warning"
    when = "" if site.production else " (a production build fails on it)"
    return [
        Finding(
            "deploy",
            severity,
            site.registry_source,
            f"{canonical_url(page.key, site.settings.base_url)} is live but this deploy would "
            f"answer 404{when}; {FIXES}",
            page.key,
        )
        for page in plan.serving("unserved")
    ]


def _proxied(site: Site, plan: DeployPlan) -> list[Finding]:
    """Note how many live pages still come from the legacy origin, and legacy_paths unused."""
    findings = []
    proxied = plan.serving("proxied")
    if proxied:
        listed = ", ".join(page.key for page in proxied[:LISTED_IN_WARNING])
        more = len(proxied) - LISTED_IN_WARNING
        listed += f" and {more} more" if more > 0 else ""
        message = f"{len(proxied)} live page(s) proxied to {site.settings.legacy_origin}: {listed}"
        findings.append(Finding("deploy", "info", "content/site.yaml", message))
    if site.settings.legacy_paths and not site.settings.legacy_origin:
        message = "legacy_paths: has no effect without legacy_origin; set it or remove them"
        findings.append(Finding("deploy", "warning", "content/site.yaml", message))
    return findings


def _retired(site: Site) -> dict[str, str]:
    """Return retired page keys -> redirect targets: site.yaml `retired:` and guide aliases."""
    base = site.settings.base_url
    retired = {}
    for guide in site.guides:
        for alias in guide.aliases:
            key = page_key(alias, base)
            if key is not None:
                retired[key] = guide.url
    for old, target in site.settings.retired.items():
        key = page_key(old, base)
        if key is not None:
            retired.setdefault(key, target)
    return retired


def _path_as_written(url: str) -> str:
    """Return a registry URL's path as the live site spells it (case and escapes kept)."""
    return urlsplit(url).path or "/"


def _has_file(key: str, files: set[str]) -> bool:
    """Return whether a page key is answered by a file: itself, or its folder's index.html."""
    return key in files or (key.endswith("/") and f"{key}index.html" in files)


def _lastmod(entry: RegistryEntry) -> str:
    """Return a registry page's lastmod as the sitemap gives it."""
    return entry.lastmod or (entry.published.isoformat() if entry.published else "")
