"""Which links of a page the page alone can judge, and where the others point; and the links
an editor wrote in prose (`ProseLink`).

A page's own `#anchors`, links to other sites (never fetched) and malformed links are judged
where the page is scanned (a guide page in the worker that renders it, and kept with it in
the build cache); a link to a path of this site is left for the site checks
(`consistency.py`), which know every page, file and registry entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

from site_builder.urls import page_key, same_host


@dataclass(frozen=True)
class ProseLink:
    """A link an editor wrote in a guide's prose: its line, the target as typed, as published."""

    line: int
    typed: str
    href: str
    """The published target; "" when the link was refused (see `problem`)."""
    problem: str = ""


class SiteLink(NamedTuple):
    """A link to a path of this site, as the site checks resolve it."""

    href: str
    key: str
    """The page it names (`urls.page_key`)."""
    path: str
    """Its path as written: a file of the site (`/sitemap.xml`) is found by it too."""
    fragment: str


def judged_links(
    hrefs: Iterable[str], key: str, ids: frozenset[str], base_url: str
) -> tuple[tuple[tuple[str, str], ...], tuple[SiteLink, ...]]:
    """Return the distinct links of the page at `key`, in href order: (href, problem) of each
    the page alone shows to be broken, and each link to a path of this site."""
    problems: list[tuple[str, str]] = []
    site_links: list[SiteLink] = []
    for href in sorted(set(hrefs)):
        judged = _judged(href, key, ids, base_url)
        if isinstance(judged, SiteLink):
            site_links.append(judged)
        elif judged:
            problems.append((href, judged))
    return tuple(problems), tuple(site_links)


def missing_fragment(fragment: str, ids: frozenset[str], key: str) -> str | None:
    """Return why a #fragment is no id of the page at `key`, or None when it is one."""
    if fragment and fragment not in ids:
        return f"points at #{fragment}, which {key} does not have"
    return None


def _judged(href: str, key: str, ids: frozenset[str], base_url: str) -> str | SiteLink | None:
    """Return why one link is broken, None when it is fine, or the site path it names."""
    if href.startswith("#") and href.isprintable():  # within the page: urlsplit's fragment
        return missing_fragment(href[1:], ids, key)
    try:
        parts = urlsplit(href)
        hostname = parts.hostname or ""
    except ValueError:
        return "is not a valid URL"
    if parts.scheme in {"http", "https"} and not same_host(hostname, base_url):
        return None  # another site: not ours to check, and never fetched
    if href.startswith("#"):
        return missing_fragment(parts.fragment, ids, key)
    target = page_key(href, base_url)
    if target is None:
        return "is neither an http(s) URL nor a site path"
    return SiteLink(href, target, parts.path, parts.fragment)
