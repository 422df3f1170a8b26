"""The site's files that no template draws: fingerprinted assets, prose images, sitemap entries."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from site_builder.cache.reuse import remembered_fragment
from site_builder.cache.store import BuildCache
from site_builder.model.images import ContentImage
from site_builder.model.models import Guide, Page, Site
from site_builder.model.raw import Asset
from site_builder.present.cells import machine_time
from site_builder.present.navigation import TagPage
from site_builder.render.deploy import DeployPlan, sitemap_entries


def asset_pages(assets: tuple[Asset, ...]) -> tuple[list[Page], dict[str, str]]:
    """Fingerprint each asset (style.css -> style.1a2b3c4d5e.css) so it can be cached forever."""
    pages, urls = [], {}
    for asset in assets:
        stem, dot, suffix = asset.name.rpartition(".")
        digest = hashlib.sha256(asset.content).hexdigest()[:10]
        name = f"{stem}.{digest}.{suffix}" if dot else f"{asset.name}.{digest}"
        pages.append(Page(f"assets/{name}", asset.content))
        urls[asset.name] = f"/assets/{name}"
    return pages, urls


def image_pages(pages: Sequence[Page], images: Mapping[str, ContentImage]) -> list[Page]:
    """Return the image files of content/ that the pages show, each once, at its hashed URL."""
    shown = {link.href for page in pages for link in page.links}
    files = {image.url: image.content for image in images.values() if image.url in shown}
    return [Page(url.removeprefix("/"), files[url]) for url in sorted(files)]


def sitemap_urls(
    site: Site, tags: tuple[TagPage, ...], plan: DeployPlan, cache: BuildCache | None = None
) -> list[tuple[str, str]]:
    """Return (canonical URL, lastmod) of every URL the deploy answers with 200.

    The pages built here, and the registry pages served verbatim from static/ or proxied to
    the legacy origin; never a retired (301) or unserved (404) page. With the preview's
    memory `cache`, each guide's lastmod text is remembered with the guide.
    """
    entries = {
        url: (url, lastmod) for url, lastmod in sitemap_entries(plan, site.settings.base_url)
    }
    lastmod = remembered_fragment(cache, "sitemap lastmod", _lastmod)
    built = [(guide.url, lastmod(guide)) for guide in site.guides]
    # Guides come newest evidence first (`Site.guides`), on tag pages as on the site.
    newest = lastmod(site.guides[0]) if site.guides else ""
    built += [("/", newest), ("/guides/", newest), ("/tags/", newest)]
    built += [(tag.url, lastmod(tag.guides[0])) for tag in tags]
    for url, when in built:
        entries[site.canonical(url)] = (site.canonical(url), when)
    return sorted(entries.values())


def _lastmod(guide: Guide) -> str:
    """Return the guide's lastmod as the sitemap writes it."""
    return machine_time(guide.lastmod)
