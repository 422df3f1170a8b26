"""The template's shingles, counted from kept counts after edits, are exactly those a full count
finds: through changed, added, removed and reordered pages, and counts that cross the line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from site_builder.cache.store import VERSION, BuildCache
from site_builder.checks import boilerplate
from site_builder.checks.boilerplate import COMMON
from site_builder.checks.boilerplate import boilerplate as template_codes

POOL = np.arange(1, 81, dtype=np.int64) * 7_919  # codes a template may put on any page
SHARES = np.linspace(0.06, 0.16, len(POOL))  # how often each is on a page: around the tenth


def page(rng: np.random.Generator) -> np.ndarray:
    """A page's sorted, distinct codes: some of the pool's, and codes of its own."""
    own = rng.integers(1 << 40, 1 << 62, rng.integers(5, 60))
    return np.unique(np.concatenate([POOL[rng.random(len(POOL)) < SHARES], own]))


def digests(arrays: list[np.ndarray]) -> list[bytes]:
    return [hashlib.sha256(array.tobytes()).digest() for array in arrays]


def counted_in_full(arrays: list[np.ndarray]) -> list[int]:
    return template_codes(None, "text", arrays, digests(arrays)).tolist()


@pytest.fixture
def recounts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pages each full count counted."""
    seen: list[int] = []
    original = boilerplate._recounted

    def recounted(arrays: list[np.ndarray], *rest: object) -> boilerplate.Counts:
        seen.append(len(arrays))
        return original(arrays, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(boilerplate, "_recounted", recounted)
    return seen


@pytest.mark.parametrize("seed", range(4))
def test_counts_kept_through_edits_are_those_counted_in_full(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = [page(rng) for _ in range(300)]
    seen = set()
    for step in range(120):
        action = rng.choice(["change", "add", "remove", "reorder"])
        at = int(rng.integers(len(arrays)))
        if action == "change":
            arrays[at] = page(rng)
        elif action == "add":
            arrays.insert(at, page(rng))
        elif action == "remove":
            arrays.pop(at)
        else:
            arrays.insert(at, arrays.pop())
        found = template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays)).tolist()
        assert found == counted_in_full(arrays), f"step {step}: {action}"
        seen.add(tuple(found))
    assert len(seen) > 3, "codes crossed the threshold both ways along the way"


def test_one_changed_page_is_counted_without_a_full_count(
    tmp_path: Path, recounts: list[int]
) -> None:
    rng = np.random.default_rng(7)
    arrays = [page(rng) for _ in range(300)]
    template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    assert recounts == [300]
    arrays[5] = page(rng)
    found = template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    assert recounts == [300], "the kept counts were updated"
    recounts.clear()
    assert found.tolist() == counted_in_full(arrays)


def test_after_as_many_added_pages_as_the_margin_allows_the_codes_are_counted_in_full(
    tmp_path: Path, recounts: list[int]
) -> None:
    rng = np.random.default_rng(8)
    arrays = [page(rng) for _ in range(300)]  # kept: codes on at least 15 pages (30 / 2)
    template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    for added in range(1, 19):
        arrays.append(page(rng))
        template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
        # A code on 14 pages at the full count is on 14 + added now at most: past the line?
        assert recounts == ([300, 318] if 14 + added > len(arrays) / 10 else [300]), added


@pytest.mark.parametrize("damage", ["bytes", "code", "offsets"])
def test_a_damaged_entry_or_one_of_other_code_is_counted_in_full(
    tmp_path: Path, recounts: list[int], monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    rng = np.random.default_rng(9)
    arrays = [page(rng) for _ in range(100)]
    template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    (entry,) = (tmp_path / f"v{VERSION}" / COMMON).iterdir()
    data = entry.read_bytes()
    if damage == "bytes":  # a byte changed on disk: its checksum no longer matches
        entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "code":  # the builder changed since
        monkeypatch.setattr(boilerplate, "code_digest", lambda: "0" * 64)
    else:  # an entry that checks out but whose page offsets run past its codes
        payload = bytearray(data.partition(b"\n")[2])
        codes, _, positions = np.frombuffer(bytes(payload[64:88]), "<i8").tolist()
        offsets_end = len(payload) - boilerplate._index(codes).itemsize * positions
        payload[offsets_end - 8 : offsets_end] = (10**9).to_bytes(8, "little")
        BuildCache(tmp_path).write(COMMON, entry.name, bytes(payload))
    arrays[3] = page(rng)
    found = template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    assert recounts == [100, 100]
    assert found.tolist() == template_codes(None, "text", arrays, digests(arrays)).tolist()


def test_a_code_not_kept_is_found_once_enough_new_pages_carry_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    rising = np.int64(5)  # on 14 of 300 pages: under the 15 a code needs to be kept
    arrays = [np.union1d(page(rng), [rising]) if n < 14 else page(rng) for n in range(300)]
    template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays))
    for added in range(1, 21):
        arrays.append(np.union1d(page(rng), [rising]))
        found = template_codes(BuildCache(tmp_path), "text", arrays, digests(arrays)).tolist()
        assert found == counted_in_full(arrays), added
        assert (rising in found) == (14 + added > len(arrays) / 10), added
