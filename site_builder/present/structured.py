"""Structured data for search engines: JSON-LD `TechArticle` and `BreadcrumbList` per guide.

The JSON is made safe to sit inside `<script type="application/ld+json">`: `<`, `>` and `&`
are written as \\u escapes, so no record or prose text can close the script element.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from site_builder.model.models import Guide, Site

_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def modified_at(guide: Guide) -> datetime:
    """Return when the guide last changed: its evidence check or its prose update, if later."""
    checked = guide.lastmod.astimezone(UTC)
    if guide.updated is not None:
        updated = datetime(guide.updated.year, guide.updated.month, guide.updated.day, tzinfo=UTC)
        return max(checked, updated)
    return checked


def published_at(guide: Guide) -> datetime:
    """Return the publication date as a UTC midnight time (RFC 3339 needs a time)."""
    day: date = guide.published
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def guide_json_ld(guide: Guide, site: Site) -> tuple[str, str]:
    """Return the guide's JSON-LD TechArticle and BreadcrumbList, each as script-safe JSON."""
    url = site.canonical(guide.url)
    publisher = {
        "@type": "Organization",
        "name": site.settings.title,
        "url": site.canonical("/"),
    }
    article: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "TechArticle",
        "@id": f"{url}#article",
        "headline": guide.title,
        "description": guide.description,
        "url": url,
        "mainEntityOfPage": url,
        "inLanguage": site.settings.language,
        "datePublished": published_at(guide).isoformat(),
        "dateModified": modified_at(guide).isoformat(),
        "author": publisher,
        "publisher": publisher,
        "keywords": list(guide.tags),
        "about": site.vocabulary.subject if site.vocabulary else site.settings.title,
        "citation": [receipt.url for receipt in guide.evidence.receipts if receipt.url],
    }
    if guide.reader_job:
        article["abstract"] = guide.reader_job
    crumbs = [("Home", "/"), ("Guides", "/guides/"), (guide.title, guide.url)]
    breadcrumbs = {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": position, "name": name, "item": site.canonical(path)}
            for position, (name, path) in enumerate(crumbs, 1)
        ],
    }
    return _script_json(article), _script_json(breadcrumbs)


def _script_json(data: dict[str, Any]) -> str:
    """Return JSON that cannot end or open markup inside a script element."""
    return json.dumps(data, ensure_ascii=False, indent=1).translate(_SCRIPT_SAFE)
