"""What a rendered page declares, collected where it is rendered so nothing parses it back:
its ids and links (`PageScan`) and a guide page's word 3-grams for the overlap audit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from site_builder.model.links import SiteLink


class Shingles(NamedTuple):
    """A guide's 3-gram codes (`words.gram_codes`): of its page's text and of its record."""

    text: bytes
    evidence: bytes


@dataclass(frozen=True)
class PageScan:
    """What one built HTML page declares and links to."""

    path: str
    key: str
    canonical: str
    og_url: str
    noindex: bool
    ids: frozenset[str]
    duplicate_ids: tuple[str, ...]
    link_problems: tuple[tuple[str, str], ...]
    """(href, problem) of each link the page alone shows to be broken (`links.judged_links`)."""
    site_links: tuple[SiteLink, ...]
