"""The cache key of every guide page of a build, and the preview's way of redoing only those
an edit can change.

A guide page's key digests the guide, the site and the guides its page shows (newer, older,
related, the nearest pages of its overlap audit; `reuse.guide_page_key`). In the preview a
guide whose inputs did not change is the same object from one rebuild to the next, so a
page's key changes only when its guide or a guide it shows is a new object. When the site's
layout is the last rebuild's too (no guide's slug, tags, order or nearest pages changed:
`navigation_of` then keeps the related guides), the pages a guide is shown on are those of
the last rebuild, and only the new guides' pages and the pages showing them get new keys:
at 10,000 guides that is a few keys, not a pass over every guide and what it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_not

from site_builder.cache.reuse import guide_page_key
from site_builder.cache.store import BuildCache
from site_builder.model.models import Guide
from site_builder.present.navigation import SiteNavigation


def guide_page_keys(
    guides: Sequence[Guide], site_key: str, navigation: SiteNavigation, cache: BuildCache | None
) -> list[str]:
    """Return the key of each guide's page, in order. With a memory cache (the preview's),
    the last rebuild's keys are kept for the same site key (see the module's docstring)."""
    if cache is None or cache.memory is None:
        return [guide_page_key(guide, site_key, navigation.shown(guide), cache) for guide in guides]
    return cache.reused(("guide page keys", site_key), GuidePageKeys).update(
        guides, site_key, navigation, cache
    )


class GuidePageKeys:
    """The guide page keys of the last rebuild with one site key, updated in place by the
    next (it is the same object while the site key is the same)."""

    def __init__(self) -> None:
        self.held: dict[int, tuple[Guide, tuple[Guide, ...], str]] = {}
        """By guide object id: the guide, the guides its page shows, its key (the entry keeps
        them alive, so their identities cannot pass to other objects)."""
        self.guides: tuple[Guide, ...] = ()
        self.keys: list[str] = []
        self.related: object = None
        """The related guides of the navigation the last pass over every guide used: the same
        object in a later rebuild only while the layout is the same (`navigation_of`)."""
        self.showing: list[list[int]] = []
        """By position: the positions of the guides whose pages show the guide there."""

    def update(
        self,
        guides: Sequence[Guide],
        site_key: str,
        navigation: SiteNavigation,
        cache: BuildCache,
    ) -> list[str]:
        """Return this build's keys, keying again only the pages of new guide objects and of
        the guides showing them when the layout is the last one's."""
        guides = tuple(guides)
        if navigation.related is not self.related or len(guides) != len(self.guides):
            return self._every(guides, site_key, navigation, cache)
        changed = [
            i
            for i, (old, new) in enumerate(zip(self.guides, guides, strict=True))
            if old is not new
        ]
        for index in changed:
            del self.held[id(self.guides[index])]
        keys = list(self.keys)
        for index in sorted({*changed, *(i for c in changed for i in self.showing[c])}):
            keys[index] = self._key(guides[index], site_key, navigation, cache)
        self.guides, self.keys = guides, keys
        return keys

    def _key(
        self, guide: Guide, site_key: str, navigation: SiteNavigation, cache: BuildCache
    ) -> str:
        """Return the key of one guide's page: the last one while the guide and the guides
        its page shows are the same objects."""
        shown = tuple(navigation.shown(guide))
        held = self.held.get(id(guide))
        if held is None or len(held[1]) != len(shown) or any(map(is_not, held[1], shown)):
            held = self.held[id(guide)] = (
                guide,
                shown,
                guide_page_key(guide, site_key, shown, cache),
            )
        return held[2]

    def _every(
        self,
        guides: tuple[Guide, ...],
        site_key: str,
        navigation: SiteNavigation,
        cache: BuildCache,
    ) -> list[str]:
        """Key every guide's page (each kept while it and what it shows are the same objects)
        and note which pages show which guide."""
        keys = [self._key(guide, site_key, navigation, cache) for guide in guides]
        kept = {id(guide) for guide in guides}
        self.held = {number: held for number, held in self.held.items() if number in kept}
        self.showing = [[] for _ in guides]
        for index, guide in enumerate(guides):
            for other in self.held[id(guide)][1]:
                self.showing[navigation.position[other.slug]].append(index)
        self.guides, self.keys, self.related = guides, keys, navigation.related
        return keys
