"""The fragments list pages show of each guide: the same text as drawing every one, and in
the preview only the guides that are new objects are drawn again."""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path

import pytest
from markupsafe import Markup

from site_builder.cache import fragments
from site_builder.cache.fragments import Fragment
from site_builder.cache.store import BuildCache


class Item:
    def __init__(self, name: str) -> None:
        self.name = name


def drawing(drawn: list[str]):
    def draw(item: Item, level: int = 3) -> Markup:
        drawn.append(item.name)
        return Markup("<h{0}>{1}</h{0}>").format(level, item.name)

    return draw


def plain(items: list[Item], level: int = 3) -> str:
    return "\n".join(f"<h{level}>{item.name}</h{level}>" for item in items)


def test_without_a_memory_cache_every_fragment_is_drawn_and_joined(tmp_path: Path) -> None:
    drawn: list[str] = []
    for cache in (None, BuildCache(tmp_path)):
        fragment = Fragment(cache, "scope", drawing(drawn))
        items = [Item(f"g{n}") for n in range(300)]
        assert fragment.each(items, 2) == plain(items, 2)
        assert fragment.each(items) == plain(items)
        assert fragment(items[0]) == "<h3>g0</h3>"
    assert len(drawn) == 2 * (300 + 300 + 1)


def test_text_that_is_not_markup_is_escaped() -> None:
    fragment = Fragment(None, "scope", lambda item: item)
    assert fragment.each(["<b>", Markup("<i>x</i>")]) == "&lt;b&gt;\n<i>x</i>"


def test_a_rebuild_draws_only_the_items_that_are_new_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replace, insert, remove and move items of a 3,000-item list between rebuilds: the
    text is always that of drawing every item, only the new objects are drawn, and only
    the runs of items around a change are joined again."""
    cache = BuildCache(tmp_path, memory=True)
    items = [Item(f"g{n}") for n in range(3000)]
    drawn: list[str] = []
    rng = random.Random(7)
    joins: list[int] = []
    join = fragments._joined

    def counted(parts: Iterable[object]) -> Markup:
        joins.append(1)
        return join(parts)

    monkeypatch.setattr(fragments, "_joined", counted)

    def rebuild(expected_draws: int) -> None:
        cache.begin()
        fragment = Fragment(cache, "scope", drawing(drawn))
        drawn.clear()
        joins.clear()
        assert fragment.each(items) == plain(items)
        assert fragment.each(items, 2) == plain(items, 2)
        assert len(drawn) == 2 * expected_draws
        # Runs are about RUN_BREAK items long: a change touches the one or two around it.
        assert len(joins) <= (2 * 3000 if expected_draws == 3000 else 2 * 4)
        cache.forget_unused()

    rebuild(3000)
    rebuild(0)
    for step in range(40):
        where = rng.randrange(len(items))
        match step % 4:
            case 0:
                items[where] = Item(f"edited{step}")
                rebuild(1)
            case 1:
                items.insert(where, Item(f"new{step}"))
                rebuild(1)
            case 2:
                del items[where]
                rebuild(0)
            case 3:
                items.insert(rng.randrange(len(items)), items.pop(where))
                rebuild(0)


def test_a_new_scope_draws_every_item_again(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path, memory=True)
    items = [Item(f"g{n}") for n in range(200)]
    drawn: list[str] = []
    for scope, expected in (("a", 200), ("a", 0), ("b", 200)):
        cache.begin()
        drawn.clear()
        assert Fragment(cache, scope, drawing(drawn)).each(items) == plain(items)
        assert len(drawn) == expected


def by_name(item: Item) -> str:
    return item.name


def test_a_build_with_a_cache_on_disk_draws_only_the_items_whose_inputs_changed(
    tmp_path: Path,
) -> None:
    items = [Item(f"g{n}") for n in range(200)]
    drawn: list[str] = []
    first = Fragment(BuildCache(tmp_path), "scope", drawing(drawn), by_name)
    assert first.each(items, 2) == plain(items, 2)
    first.keep()
    assert len(drawn) == 200

    drawn.clear()
    items[7] = Item("changed")  # a guide whose inputs changed has another key
    again = Fragment(BuildCache(tmp_path), "scope", drawing(drawn), by_name)
    assert again.each(items, 2) == plain(items, 2)
    assert again.each(items[:3]) == plain(items[:3]), "other arguments, other fragments"
    again.keep()
    assert drawn == ["changed", "g0", "g1", "g2"]

    drawn.clear()
    other = Fragment(BuildCache(tmp_path), "other scope", drawing(drawn), by_name)
    assert other.each(items, 2) == plain(items, 2)
    assert len(drawn) == 200, "templates or settings changed: every fragment is drawn again"


def test_only_the_fragments_a_build_showed_are_kept(tmp_path: Path) -> None:
    items = [Item(f"g{n}") for n in range(50)]
    first = Fragment(BuildCache(tmp_path), "scope", drawing([]), by_name)
    first.each(items)
    first.keep()
    second = Fragment(BuildCache(tmp_path), "scope", drawing([]), by_name)
    second.each(items[:10])
    second.keep()
    drawn: list[str] = []
    third = Fragment(BuildCache(tmp_path), "scope", drawing(drawn), by_name)
    assert third.each(items) == plain(items)
    assert drawn == [item.name for item in items[10:]]


@pytest.mark.parametrize("kept", [b"not json", b'["a list"]', b'{"g0 ()": 3}'])
def test_a_kept_entry_that_is_not_fragments_draws_them_again(tmp_path: Path, kept: bytes) -> None:
    items = [Item(f"g{n}") for n in range(5)]
    first = Fragment(BuildCache(tmp_path), "scope", drawing([]), by_name)
    first.each(items)
    first.keep()
    BuildCache(tmp_path).write(fragments.FRAGMENTS, fragments._entry("scope"), kept)
    drawn: list[str] = []
    again = Fragment(BuildCache(tmp_path), "scope", drawing(drawn), by_name)
    assert again.each(items) == plain(items)
    assert drawn == [item.name for item in items]
