"""Render the site's pages with Jinja (autoescape on, StrictUndefined).

The only module that imports jinja2. Rendering one guide is a pure function of that guide
and a small site-wide summary, so pages can later be rendered in parallel or alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import (
    Environment,
    FileSystemLoader,
    StrictUndefined,
    TemplateError,
    TemplateRuntimeError,
    meta,
)
from markupsafe import Markup

from site_builder.cache import BuildCache, reused
from site_builder.cells import format_time, machine_time
from site_builder.claims import Verification
from site_builder.config import BuildConfig
from site_builder.deploy import plan_deploy, redirect_rules
from site_builder.errors import BuilderError, InputError
from site_builder.humanize import humanize_slug
from site_builder.markdown import render_markdown
from site_builder.models import Page, Site
from site_builder.navigation import SiteNavigation, TagPage, family_groups, navigation_of, tag_pages
from site_builder.pageview import PageView, link_target, page_view
from site_builder.reuse import (
    folder_digest,
    guide_page_key,
    list_page_key,
    remembered_fragment,
    site_digest,
)
from site_builder.scan import scanned_guide_page, scanned_page
from site_builder.site_files import asset_pages, image_pages, sitemap_urls
from site_builder.stored_pages import reused_pages
from site_builder.structured import guide_json_ld, modified_at, published_at
from site_builder.template_errors import template_problem
from site_builder.urls import alias_file

LATEST_ON_HOME = 10
_LITERAL_ID = re.compile(r'\bid="([^"{}]+)"')
TEMPLATE_ERRORS = (TemplateError, OSError, ArithmeticError, LookupError, TypeError, ValueError)
"""What a template can raise as it is read and run: each is located in the template."""
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Characters no HTML or XML page may hold (C0 and C1 controls but tab, line feed and carriage
return): a record string carrying one is published with U+FFFD (the replacement character)."""
_EVERY_GUIDE = re.compile(r"\bsite\.(guides|by_url|drafts)\b")


def make_env(templates_dir: Path) -> Environment:
    """Return the Jinja environment: autoescape everything, fail on undefined names."""
    env = Environment(
        loader=FileSystemLoader(templates_dir),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["timestamp"] = format_time  # 2026-08-24 11:09 UTC, as cells.format_cell
    env.filters["iso"] = machine_time  # W3C, in UTC: 2026-08-24T11:09:48+00:00
    env.filters["words"] = humanize_slug
    return env


def render_site(
    site: Site,
    config: BuildConfig,
    verifications: Mapping[str, Verification] | None = None,
    cache: BuildCache | None = None,
    *,
    html: bool = True,
) -> list[Page]:
    """Return every page of the site (guides over `config.jobs` processes, or from `cache`);
    template errors become one InputError. Without `html`, guide and tag pages come without
    their bytes (for an audit: their scans are what the checks read)."""
    verifications = verifications or {}
    templates_key = folder_digest(config.templates_dir)
    env = reused(cache, ("templates", templates_key), lambda: make_env(config.templates_dir))
    pages, asset_urls = asset_pages(site.assets)
    tags = tag_pages(site.guides)
    common: dict[str, Any] = {"site": site, "settings": site.settings, "assets": asset_urls}
    site_key = site_digest(site, templates_key, every_guide=False) if cache else ""
    guides = _guide_pages(
        env, templates_key, site, site_key, verifications, config, common, cache, html
    )
    pages += [*guides, *image_pages(guides, site.images)]
    try:
        intro = _markdown(site.settings.intro)
        latest = site.guides[:LATEST_ON_HOME]
        families = family_groups(site)
        card = remembered_fragment(cache, f"card {site_key}", _card_macro(env))
        pages.append(_page(env, "index.html", "home.html", common, intro=intro, latest=latest))
        pages.append(
            _page(env, "guides/index.html", "guides.html", common, families=families, card=card)
        )
        pages.append(_page(env, "tags/index.html", "tags.html", common, tags=tags))
        pages.extend(_tag_pages(env, templates_key, site, tags, common, cache, html))
        pages.append(_page(env, "search/index.html", "search.html", common))
        pages.extend(_alias_pages(env, site, common))
        pages.append(_page(env, "404.html", "404.html", common))
        pages.append(_page(env, "robots.txt", "robots.txt", common))
        pages.append(_feed(env, site, common))
        plan = plan_deploy(site, ["/" + page.path for page in pages])
        sitemap = sitemap_urls(site, tags, plan)
        pages.append(_page(env, "sitemap.xml", "sitemap.xml", common, entries=sitemap))
        redirects = "\n".join(redirect_rules(site, plan)) + "\n"
        pages.append(Page("_redirects", redirects.encode("utf-8")))
    except TEMPLATE_ERRORS as error:
        raise InputError([template_problem(error, config)]) from None
    return sorted(pages, key=lambda page: page.path)


def template_ids(env: Environment, name: str) -> frozenset[str]:
    """Return the literal ids a template and every template it uses write (`id="sources"`)."""
    return frozenset(i for source in _sources(env, name) for i in _LITERAL_ID.findall(source))


def _reads_every_guide(env: Environment, name: str) -> bool:
    """Whether a template (or one it uses) reads the site's list of guides itself."""
    return any(_EVERY_GUIDE.search(source) for source in _sources(env, name))


def _sources(env: Environment, name: str) -> list[str]:
    """Return the source of a template and of every template it uses."""
    found = []
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        source = env.loader.get_source(env, current)[0] if env.loader else ""
        found.append(source)
        pending.extend(used for used in meta.find_referenced_templates(env.parse(source)) if used)
    return found


def _card_macro(env: Environment) -> Any:
    """Return the `guide_card` macro of macros.html, which guides.html shows each guide with
    (as `card(guide)`: the preview remembers each guide's card between rebuilds)."""
    card = getattr(env.get_template("macros.html").module, "guide_card", None)
    if card is None:
        raise TemplateRuntimeError("macros.html has no guide_card macro (guides.html uses it)")
    return card


def _guide_pages(
    env: Environment,
    templates_key: str,
    site: Site,
    site_key: str,
    verifications: Mapping[str, Verification],
    config: BuildConfig,
    common: dict[str, Any],
    cache: BuildCache | None,
    html: bool,
) -> list[Page]:
    """Build each guide's view, render it and scan it, over `config.jobs` processes; reuse
    the pages `cache` has for the same guide and site (without their bytes unless `html`;
    `site_key` digests the site without its guides' summaries).

    The templates are compiled before the workers fork. A failure building a view is a
    builder bug; a template error is located here, where its traceback still exists.
    """
    try:
        reserved, every_guide = reused(
            cache,
            ("guide template", templates_key),
            lambda: (template_ids(env, "guide.html"), _reads_every_guide(env, "guide.html")),
        )
        env.get_template("guide.html")
    except (TemplateError, OSError) as error:
        raise InputError([template_problem(error, config)]) from None
    navigation = navigation_of(site)

    def guide_page(index: int) -> Page:
        guide = site.guides[index]
        verification = verifications.get(guide.evidence.operation_id)
        try:
            view = page_view(
                guide, site, verification, reserved, lambda href: link_target(href, site)
            )
        except Exception as error:  # any failure here is ours, not the editor's
            raise BuilderError(guide.source, error) from error
        try:
            page = render_guide(env, view, common, navigation)
        except TEMPLATE_ERRORS as error:
            raise InputError([template_problem(error, config)]) from None
        return scanned_guide_page(page, guide, site.settings.base_url)

    guides = site.guides
    if cache and every_guide:
        site_key = site_digest(site, templates_key, every_guide=True)
    return reused_pages(
        cache,
        len(guides),
        lambda index: guide_page_key(
            guides[index], site_key, navigation.shown(guides[index]), cache
        ),
        guide_page,
        config.jobs,
        html=html,
    )


def _tag_pages(
    env: Environment,
    templates_key: str,
    site: Site,
    tags: tuple[TagPage, ...],
    common: dict[str, Any],
    cache: BuildCache | None,
    html: bool,
) -> list[Page]:
    """Render each tag's page, or reuse the cached page when none of its guides changed."""
    every_guide = reused(
        cache, ("tag template", templates_key), lambda: _reads_every_guide(env, "tag.html")
    )
    site_key = site_digest(site, templates_key, every_guide=every_guide) if cache else ""
    paths = [f"tags/{tag.tag}/index.html" for tag in tags]
    return reused_pages(
        cache,
        len(tags),
        lambda index: list_page_key(site_key, paths[index], tags[index].guides, cache),
        lambda index: scanned_page(
            _page(env, paths[index], "tag.html", common, tag=tags[index]), site.settings.base_url
        ),
        1,
        html=html,
    )


def render_guide(
    env: Environment, page: PageView, common: dict[str, Any], navigation: SiteNavigation
) -> Page:
    """Render one guide page from its view and the site-wide summary."""
    site: Site = common["site"]
    view, prose = page.view, page.prose
    guide = view.guide
    rendered = _page(
        env,
        f"guides/{guide.slug}/index.html",
        "guide.html",
        common,
        view=view,
        verified=view.verified,
        prose=Markup(prose.html),
        prose_headings=prose.headings,
        release=guide.evidence.pinned_release,
        json_ld=tuple(Markup(data) for data in guide_json_ld(guide, site)),
        modified=modified_at(guide),
        published=published_at(guide),
        nav=navigation.neighbours(guide),
    )
    return Page(rendered.path, rendered.content, prose.links)


def _page(
    env: Environment, path: str, template: str, common: dict[str, Any], **context: Any
) -> Page:
    """Render one template into a Page; control characters become U+FFFD (see CONTROLS)."""
    text = env.get_template(template).render(**common, **context)
    return Page(path, CONTROLS.sub("\ufffd", text).encode("utf-8"))


def _feed(env: Environment, site: Site, common: dict[str, Any]) -> Page:
    """Return the Atom feed: every guide, most recently changed first."""
    entries = sorted(
        ((guide, modified_at(guide)) for guide in site.guides),
        key=lambda entry: (-entry[1].timestamp(), entry[0].slug),
    )
    updated = machine_time(entries[0][1]) if entries else "1970-01-01T00:00:00+00:00"
    context = {"entries": entries, "updated": updated, "published": published_at}
    return _page(env, "atom.xml", "atom.xml", common, **context)


def _alias_pages(env: Environment, site: Site, common: dict[str, Any]) -> list[Page]:
    """Return a redirect page at each old path of a renamed guide (for hosts without rules)."""
    pages = {}
    for guide in site.guides:
        for alias in guide.aliases:
            path = alias_file(alias)
            pages[path] = _page(env, path, "alias.html", common, guide=guide)
    return [pages[path] for path in sorted(pages)]


def _markdown(text: str) -> Markup:
    """Render trusted-configuration Markdown (still with raw HTML off)."""
    return Markup(render_markdown(text).html)
