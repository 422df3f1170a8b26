"""How readers move between guides: tag pages, verdict families, related and adjacent guides.

Pure functions of the assembled site. The first tag of a guide names its engine (`sglang`,
`vllm`); the others are topics. A verdict family (content/vocabulary.yaml) groups
classifications by what the reader does next, read from the classification's words.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.model.models import Guide, Site
from site_builder.model.vocabulary import Family
from site_builder.urls import page_key

RELATED_LIMIT = 3
RELATED = "related"
"""The build cache's kind of entry holding every guide's related guides, by layout."""


OTHER = Family(
    name="Other verdicts", anchor="other", summary="Verdicts that name no adoption step.", words=()
)


Layout = tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]
"""Each guide's slug, tags and nearest pages, in index order (`site_layout`)."""


@dataclass(frozen=True)
class FamilyGroup:
    """One family and its guides, in index order."""

    family: Family
    guides: tuple[Guide, ...]


@dataclass(frozen=True)
class TagPage:
    """A tag and the guides that carry it, newest evidence first."""

    tag: str
    kind: str
    """engine (the first tag of some guide) | topic"""
    guides: tuple[Guide, ...]

    @property
    def url(self) -> str:
        """Site-relative URL of the tag page."""
        return f"/tags/{self.tag}/"


@dataclass(frozen=True)
class Neighbours:
    """The guides next to one guide in index order, and the guides most related to it."""

    newer: Guide | None
    older: Guide | None
    related: tuple[Guide, ...]


def verdict_family(classification: str, families: tuple[Family, ...]) -> Family:
    """Return the first family whose words the classification slug holds, else OTHER."""
    index = _family_index(classification, families)
    return families[index] if index < len(families) else OTHER


@lru_cache(maxsize=65536)
def _family_index(classification: str, families: tuple[Family, ...]) -> int:
    """Return the position of `verdict_family` in `families` (their length for OTHER),
    remembered: a preview rebuild looks up every guide's verdict."""
    words = classification.lower().replace("_", "-")
    spaced = " ".join(re.split(r"[^a-z0-9]+", words))
    for index, family in enumerate(families):
        if family.words and (family.pattern.search(words) or family.pattern.search(spaced)):
            return index
    return len(families)


def family_groups(site: Site) -> tuple[FamilyGroup, ...]:
    """Return the non-empty verdict families of the vocabulary, in its order, with their guides."""
    families = site.vocabulary.families if site.vocabulary else ()
    members: list[list[Guide]] = [[] for _ in (*families, OTHER)]
    found: dict[str, list[Guide]] = {}  # by verdict: hashing `families` once a verdict
    for guide in site.guides:
        verdict = guide.evidence.verdict
        group = found.get(verdict)
        if group is None:
            group = found[verdict] = members[_family_index(verdict, families)]
        group.append(guide)
    return tuple(
        FamilyGroup(family, tuple(guides))
        for family, guides in zip((*families, OTHER), members, strict=True)
        if guides
    )


def tag_pages(guides: tuple[Guide, ...]) -> tuple[TagPage, ...]:
    """Return one page per tag: engines first, then topics, each alphabetical."""
    engines = {guide.tags[0] for guide in guides if guide.tags}
    carrying: dict[str, list[Guide]] = {}
    for guide in guides:
        for tag in dict.fromkeys(guide.tags):
            carrying.setdefault(tag, []).append(guide)
    pages = [
        TagPage(tag, "engine" if tag in engines else "topic", tuple(carrying[tag]))
        for tag in sorted(carrying)
    ]
    return tuple(sorted(pages, key=lambda page: (page.kind != "engine", page.tag)))


class SiteNavigation:
    """Adjacent and related guides of every guide of one site, from indexes built once.

    Related guides rank by evidence of a shared subject: each shared topic tag (a tag after
    the first) counts 2, being named in the record's overlap audit (the nearest pages the
    research compared it with) 3, the same engine (first tag) 1; ties go to newer evidence.
    Only guides sharing a topic, named by the audit, or the newest few of the same engine
    are scored, so a site of thousands of guides is not compared pair by pair.
    """

    def __init__(self, site: Site) -> None:
        self.site = site
        self.position = {guide.slug: index for index, guide in enumerate(site.guides)}
        carrying: dict[str, list[int]] = {}
        engines: dict[str, int] = {}
        self.engine = np.full(len(site.guides), -1, dtype=np.int64)
        self.by_engine: dict[str, list[int]] = {}
        for index, guide in enumerate(site.guides):
            for tag in dict.fromkeys(guide.tags):
                carrying.setdefault(tag, []).append(index)
            if guide.tags:
                self.engine[index] = engines.setdefault(guide.tags[0], len(engines))
                self.by_engine.setdefault(guide.tags[0], []).append(index)
        self.carrying = {tag: np.array(found, dtype=np.int64) for tag, found in carrying.items()}
        self.related: dict[int, tuple[int, ...]] = {}
        """Each guide's related guides by position, as far as asked (or kept, see
        `navigation_of`)."""

    def neighbours(self, guide: Guide) -> Neighbours:
        """Return the newer and older guide beside `guide` and up to three related guides."""
        order = self.site.guides
        index = self.position[guide.slug]
        if index not in self.related:
            self.related[index] = self._related(guide, index)
        newer = order[index - 1] if index > 0 else None
        older = order[index + 1] if index + 1 < len(order) else None
        return Neighbours(newer, older, tuple(order[other] for other in self.related[index]))

    @cached_property
    def layout(self) -> Layout:
        """Return what related guides are chosen from (`site_layout`)."""
        return site_layout(self.site)

    def moved_to(self, site: Site) -> SiteNavigation:
        """Return this navigation for `site`, whose layout is this one's: the same indexes
        and related guides (positions, not guides, so they hold for the new guides)."""
        navigation = copy.copy(self)
        navigation.site = site
        return navigation

    def _related(self, guide: Guide, index: int) -> tuple[int, ...]:
        """Score every candidate at once: guides sharing a topic (counted in one pass over the
        topics' guide lists), the nearest pages and the newest guides of the same engine."""
        nearest = [
            self.position[self.site.by_url[key].slug] for key in nearest_keys(guide, self.site)
        ]
        topics = [self.carrying[tag] for tag in sorted(set(guide.tags[1:]))]
        empty = np.zeros(0, dtype=np.int64)
        sharing, shared = np.unique(np.concatenate([empty, *topics]), return_counts=True)
        head = self.by_engine[guide.tags[0]][: RELATED_LIMIT + 1] if guide.tags else []
        others = np.setdiff1d(np.array([*nearest, *head], dtype=np.int64), sharing)
        candidates = np.concatenate([sharing, others])
        score = 2 * np.concatenate([shared, np.zeros(len(others), dtype=np.int64)])
        score += 3 * np.isin(candidates, nearest)
        if guide.tags:
            score += self.engine[candidates] == self.engine[index]
        keep = (score > 0) & (candidates != index)
        candidates, score = candidates[keep], score[keep]
        best = candidates[np.lexsort((candidates, -score))[:RELATED_LIMIT]]
        return tuple(best.tolist())

    def shown(self, guide: Guide) -> list[Guide]:
        """Return the other guides `guide`'s page shows: newer, older, related and the nearest
        pages its overlap audit names."""
        nav = self.neighbours(guide)
        nearest = [self.site.by_url[key] for key in nearest_keys(guide, self.site)]
        return [*filter(None, (nav.newer, nav.older)), *nav.related, *nearest]


_LAST: list[tuple[Site, SiteNavigation]] = []


def navigation_of(site: Site, cache: BuildCache | None = None) -> SiteNavigation:
    """Return the navigation of `site`, made once for the site object the last caller asked
    about (rendering and the orphan check of one build share it). When the last site had
    the same layout (an edit that changed no guide's slug, tags, order or nearest pages,
    as most of the preview's are), its related guides are kept; with a `cache`, so are those
    an earlier build of the same layout kept there (`keep_related`)."""
    if _LAST and _LAST[0][0] is site:
        return _LAST[0][1]
    layout = site_layout(site)
    if _LAST and _LAST[0][1].layout == layout:
        navigation = _LAST[0][1].moved_to(site)
    else:
        navigation = SiteNavigation(site)
        navigation.__dict__["layout"] = layout  # what the cached property would compute
        if cache is not None:
            navigation.related = _kept_related(cache, layout)
    _LAST[:] = [(site, navigation)]
    return navigation


def keep_related(navigation: SiteNavigation, cache: BuildCache | None) -> None:
    """Keep every guide's related guides in `cache` for the next build of the same layout
    (a record or prose edit changes none: 10,000 guides take 2 s to relate), once every
    guide's were asked for (rendering asks for all)."""
    related, count = navigation.related, len(navigation.site.guides)
    if cache is None or len(related) != count or not count:
        return
    key = _related_key(navigation.layout)
    data = json.dumps([related[index] for index in range(count)]).encode("utf-8")
    if cache.read(RELATED, key) != data:
        cache.write(RELATED, key, data)


def _kept_related(cache: BuildCache, layout: Layout) -> dict[int, tuple[int, ...]]:
    """Return the related guides by position that `cache` kept for `layout`, or none (also
    for a damaged entry)."""
    data = cache.read(RELATED, _related_key(layout))
    try:
        kept = json.loads(data) if data is not None else []
        if len(kept) != len(layout):
            return {}
        related = {index: tuple(map(int, others)) for index, others in enumerate(kept)}
    except (ValueError, TypeError):
        return {}
    fits = all(0 <= other < len(layout) for others in related.values() for other in others)
    return related if fits else {}


def _related_key(layout: Layout) -> str:
    return digest(RELATED, code_digest(), json.dumps(layout))


def site_layout(site: Site) -> Layout:
    """Return each guide's slug, tags and nearest pages, in index order: what the related
    guides are chosen from."""
    return tuple((g.slug, g.tags, tuple(nearest_keys(g, site))) for g in site.guides)


def nearest_keys(guide: Guide, site: Site) -> list[str]:
    """Return the keys of built guides that the record's overlap audit names."""
    keys = (page_key(page.url, site.settings.base_url) for page in guide.evidence.nearby)
    return [key for key in keys if key is not None and key in site.by_url]
