"""What the pages that list guides show of each guide, remembered by the preview.

The guides index, the tag pages and the Atom feed show every guide they list through one
macro of `macros.html` (a card, a feed entry). Templates call a `Fragment` for one guide,
`card(guide)`, or for all of them, `card.each(guides)`. With the preview's memory cache a
guide object's fragment is drawn once while it is unchanged, and so is each run of guides:
a list is cut into runs after the guides whose identity says so (about one in `RUN_BREAK`),
so a guide that is added, removed or replaced changes the run it is in and no other, and a
rebuild of a 10,000-guide list joins a few hundred remembered runs instead of 10,000 cards.
A build without the preview's memory keeps each fragment in the build cache instead, under
its scope and the digest of every input of its guide (`key`): a build after one edited
record draws that guide's card and feed entry, not 10,000 of each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from markupsafe import Markup, escape

from site_builder.cache.store import BuildCache, digest

RUN_BREAK = 61
"""A run of guides ends after one whose identity (`id >> 4`) is a multiple of this prime."""
FRAGMENTS = "fragments"
"""The build cache's kind of entry holding one scope's fragments (`Fragment.keep`)."""


class Fragment:
    """`render(item, *args)` as the templates call it: for one item, or joined for a list."""

    def __init__(
        self,
        cache: BuildCache | None,
        scope: str,
        render: Callable[..., Any],
        key: Callable[[Any], str] | None = None,
    ) -> None:
        """`scope` digests everything `render` reads besides its arguments (templates,
        settings, the site's shared inputs): a fragment is remembered under it; `key(item)`
        digests every input of an item, for a cache on disk (see `keep`)."""
        self.render = render
        self.scope = scope
        self.cache = cache if cache is not None and cache.memory is not None else None
        self._drawn = _Drawn()
        if self.cache is not None:
            self._drawn = self.cache.reused(("fragments", scope), _Drawn)
            self._drawn.begin()
        self._on_disk = cache if cache is not None and self.cache is None and key else None
        self._key = key
        self._kept = _read(self._on_disk, scope) if self._on_disk is not None else {}
        self._shown: dict[str, Markup] = {}

    def __call__(self, item: Any, *args: Hashable) -> Any:
        """Return `render(item, *args)`; with a memory cache what it returned for the same
        item object and `args` in the last rebuild that showed the item, with a cache on
        disk what it returned in the last build for an item of the same inputs."""
        if self._on_disk is not None and self._key is not None:
            return self._stored(f"{self._key(item)} {args!r}", item, args)
        if self.cache is None:
            return self.render(item, *args)
        self._drawn.seen.add(id(item))
        return self._drawn.get(item, args, self.render)

    def each(self, items: Iterable[Any], *args: Hashable) -> Markup:
        """Return each item's fragment, one after the other, a line apart."""
        if self.cache is None:
            return _joined(self(item, *args) for item in items)
        cache = self.cache
        return Markup("\n".join(self._run(cache, run, args) for run in runs(items)))

    def keep(self) -> None:
        """Keep the fragments this build showed in the cache on disk, for the next build."""
        if self._on_disk is None or self._shown.keys() == self._kept.keys():
            if self._on_disk is not None:
                self._on_disk.keep(FRAGMENTS, _entry(self.scope))
            return
        data = json.dumps(self._shown, ensure_ascii=False, sort_keys=True).encode("utf-8")
        self._on_disk.write(FRAGMENTS, _entry(self.scope), data)

    def _stored(self, key: str, item: Any, args: tuple[Hashable, ...]) -> Any:
        """Return the fragment kept under `key`, or draw it (and keep it, if it is markup)."""
        fragment = self._shown.get(key) or self._kept.get(key)
        if fragment is None:
            fragment = self.render(item, *args)
        if isinstance(fragment, Markup):
            self._shown[key] = fragment
        return fragment

    def _run(self, cache: BuildCache, run: list[Any], args: tuple[Hashable, ...]) -> Markup:
        """Return the run's fragments joined, as the last rebuild did for the same objects
        (the memo keeps them alive, so their identities cannot pass to other objects)."""
        ids = tuple(map(id, run))
        self._drawn.seen.update(ids)
        key = ("run", self.scope, args, ids)
        return cache.reused(key, lambda: (run, _joined(self(item, *args) for item in run)))[1]


class _Drawn:
    """One scope's fragments by item and arguments, kept while a rebuild shows the item."""

    def __init__(self) -> None:
        self.fragments: dict[tuple[int, tuple[Hashable, ...]], tuple[Any, Any]] = {}
        self.seen: set[int] = set()

    def begin(self) -> None:
        """Let go of the items the last rebuild did not show (the memo keeps what it holds
        alive, so an identity cannot pass to another object while it is here)."""
        seen = self.seen
        self.fragments = {key: held for key, held in self.fragments.items() if key[0] in seen}
        self.seen = set()

    def get(self, item: Any, args: tuple[Hashable, ...], render: Callable[..., Any]) -> Any:
        """Return the item's fragment, drawing it if it is not held."""
        key = (id(item), args)
        held = self.fragments.get(key)
        if held is None:
            held = self.fragments[key] = (item, render(item, *args))
        return held[1]


def runs(items: Iterable[Any]) -> Iterator[list[Any]]:
    """Cut `items` into runs, each ending after an item whose identity says so (or at the
    end): the cuts move with the items, so one item more or less changes one run."""
    run: list[Any] = []
    for item in items:
        run.append(item)
        if (id(item) >> 4) % RUN_BREAK == 0:
            yield run
            run = []
    if run:
        yield run


def _joined(fragments: Iterable[Any]) -> Markup:
    """Join fragments a line apart; one that is not markup already is escaped."""
    return Markup(
        "\n".join(part if isinstance(part, Markup) else escape(part) for part in fragments)
    )


def _read(cache: BuildCache, scope: str) -> dict[str, Markup]:
    """Return the fragments kept for `scope`: markup our templates drew, by key (none for an
    entry that is not a JSON object of strings)."""
    data = cache.read(FRAGMENTS, _entry(scope))
    try:
        kept = json.loads(data) if data is not None else {}
    except ValueError:
        return {}
    if not isinstance(kept, dict) or not all(isinstance(html, str) for html in kept.values()):
        return {}
    return {key: Markup(html) for key, html in kept.items()}


def _entry(scope: str) -> str:
    return digest(FRAGMENTS, scope)
