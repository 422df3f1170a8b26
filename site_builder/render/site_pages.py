"""Render every page of the site: the guide pages (`render`), then the pages that list them.

The home page, the guides index, the tag pages, the Atom feed, the sitemap and the redirects
are functions of the whole site. The preview remembers, for each guide that did not change,
its card (guides index and tag pages) and its feed entry, so a rebuild draws only the
changed guides' (see `fragments`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from markupsafe import Markup

from site_builder.cache.fragments import Fragment
from site_builder.cache.reuse import guide_digest, list_page_key, remembered_fragment, site_digest
from site_builder.cache.store import BuildCache, reused
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.model.claims import Verification
from site_builder.model.models import Guide, Page, Site
from site_builder.present.cells import machine_time
from site_builder.present.navigation import TagPage, family_groups, tag_pages
from site_builder.present.structured import modified_at, published_at
from site_builder.render.deploy import plan_deploy, redirect_rules
from site_builder.render.markdown import render_markdown
from site_builder.render.pages import (
    TEMPLATE_ERRORS,
    Environment,
    environment,
    guide_pages,
    reads_every_guide,
    render_page,
    template_macro,
)
from site_builder.render.scan import scanned_page
from site_builder.render.site_files import asset_pages, image_pages, sitemap_urls
from site_builder.render.stored_pages import reused_pages
from site_builder.render.template_errors import template_problem
from site_builder.urls import alias_file
from site_builder.verify.kept_verifications import Deferred

LATEST_ON_HOME = 10


def render_site(
    site: Site,
    config: BuildConfig,
    verifications: Mapping[str, Verification] | None = None,
    cache: BuildCache | None = None,
    *,
    html: bool = True,
    later: bool = False,
    on_disk: Path | None = None,
    deferred: Mapping[str, Deferred] | None = None,
    guides_rendered: Callable[[list[Page]], None] | None = None,
) -> list[Page]:
    """Return every page of the site (guides over `config.jobs` processes, or from `cache`);
    template errors become one InputError. Without `html`, guide and tag pages come without
    their bytes (for an audit: their scans are what the checks read); with `on_disk` (a
    folder of this build's), with their bytes in the cache's files, linked there. With
    `later`, guide and tag pages rendered now are scanned by `stored_pages.finished` (the
    preview shows them first). A guide whose verification is `deferred` is verified where its
    page is rendered (`pages.guide_pages`). `guides_rendered` is handed the guide pages as
    soon as they are all rendered, before the pages listing them (the search index starts
    then: it indexes guide pages alone)."""
    verifications = verifications or {}
    env, templates_key = environment(config, cache)
    pages, asset_urls = asset_pages(site.assets)
    tags = tag_pages(site.guides)
    common: dict[str, Any] = {"site": site, "settings": site.settings, "assets": asset_urls}
    guides = guide_pages(
        env,
        templates_key,
        site,
        verifications,
        config,
        common,
        cache,
        html,
        later,
        on_disk,
        deferred,
    )
    if guides_rendered is not None:
        guides_rendered(guides)
    pages += [*guides, *image_pages(guides, site.images)]
    try:
        intro = _markdown(site.settings.intro)
        latest = site.guides[:LATEST_ON_HOME]
        families = family_groups(site)
        inputs = partial(guide_digest, cache=cache)
        site_key = _fragment_site_key(env, templates_key, site, cache)
        macro = template_macro(env, "guide_card", "guides.html")
        card = Fragment(cache, f"card {site_key}", macro, inputs)
        pages.append(
            render_page(env, "index.html", "home.html", common, intro=intro, latest=latest)
        )
        pages.append(
            render_page(
                env, "guides/index.html", "guides.html", common, families=families, card=card
            )
        )
        pages.append(render_page(env, "tags/index.html", "tags.html", common, tags=tags))
        pages.extend(
            _tag_pages(
                env,
                templates_key,
                site,
                tags,
                common | {"card": card},
                cache,
                html,
                later,
                on_disk,
            )
        )
        pages.append(render_page(env, "search/index.html", "search.html", common))
        pages.extend(_alias_pages(env, site, common))
        pages.append(render_page(env, "404.html", "404.html", common))
        pages.append(render_page(env, "robots.txt", "robots.txt", common))
        feed_entry = partial(template_macro(env, "feed_entry", "atom.xml"), site)
        modified = remembered_fragment(cache, "modified", modified_at)
        entry = Fragment(
            cache,
            f"entry {site_key}",
            lambda guide: feed_entry(guide, published_at(guide), modified(guide)),
            lambda guide: f"{inputs(guide)} {published_at(guide)} {modified(guide)}",
        )
        pages.append(_feed(env, site, common, entry, modified))
        plan = plan_deploy(site, ["/" + page.path for page in pages])
        sitemap = sitemap_urls(site, tags, plan, cache)
        pages.append(render_page(env, "sitemap.xml", "sitemap.xml", common, entries=sitemap))
        redirects = "\n".join(redirect_rules(site, plan)) + "\n"
        pages.append(Page("_redirects", redirects.encode("utf-8")))
        card.keep()
        entry.keep()
    except TEMPLATE_ERRORS as error:
        raise InputError([template_problem(error, config)]) from None
    return sorted(pages, key=lambda page: page.path)


def _fragment_site_key(
    env: Environment, templates_key: str, site: Site, cache: BuildCache | None
) -> str:
    """Return what each guide's card and feed entry read of the site (`macros.html` draws
    them from the guide and the settings; every guide's summary too if it reads the site's
    guides), so a guide added draws its own card and entry alone."""
    if cache is None:
        return ""
    every_guide = reused(
        cache, ("macros template", templates_key), lambda: reads_every_guide(env, "macros.html")
    )
    return site_digest(site, templates_key, every_guide=every_guide)


def _tag_pages(
    env: Environment,
    templates_key: str,
    site: Site,
    tags: tuple[TagPage, ...],
    common: dict[str, Any],
    cache: BuildCache | None,
    html: bool,
    later: bool,
    on_disk: Path | None,
) -> list[Page]:
    """Render each tag's page, or reuse the cached page when none of its guides changed."""
    every_guide = reused(
        cache, ("tag template", templates_key), lambda: reads_every_guide(env, "tag.html")
    )
    # Not every guide's path: a tag page shows its own guides (part of its key) and no others.
    site_key = site_digest(site, templates_key, every_guide=every_guide) if cache else ""
    paths = [f"tags/{tag.tag}/index.html" for tag in tags]
    return reused_pages(
        cache,
        len(tags),
        lambda index: list_page_key(site_key, paths[index], tags[index].guides, cache),
        lambda index: render_page(env, paths[index], "tag.html", common, tag=tags[index]),
        lambda _, page: scanned_page(page, site.settings.base_url),
        1,
        html=html,
        later=later,
        on_disk=on_disk,
    )


def _feed(
    env: Environment,
    site: Site,
    common: dict[str, Any],
    entry: Fragment,
    modified: Callable[[Guide], datetime],
) -> Page:
    """Return the Atom feed: every guide, most recently changed first (`modified`: when a
    guide last changed), each shown by `entry` (the `feed_entry` macro with the site and the
    guide's times: the template shows `entry.each(entries)`)."""
    entries = sorted(site.guides, key=lambda guide: (-modified(guide).timestamp(), guide.slug))
    updated = machine_time(modified(entries[0])) if entries else "1970-01-01T00:00:00+00:00"
    return render_page(
        env, "atom.xml", "atom.xml", common, entries=entries, updated=updated, entry=entry
    )


def _alias_pages(env: Environment, site: Site, common: dict[str, Any]) -> list[Page]:
    """Return a redirect page at each old path of a renamed guide (for hosts without rules)."""
    pages = {}
    for guide in site.guides:
        for alias in guide.aliases:
            path = alias_file(alias)
            pages[path] = render_page(env, path, "alias.html", common, guide=guide)
    return [pages[path] for path in sorted(pages)]


def _markdown(text: str) -> Markup:
    """Render trusted-configuration Markdown (still with raw HTML off)."""
    return Markup(render_markdown(text).html)
