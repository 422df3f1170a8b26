"""Which shingles are the template's, not one guide's: those on more than a tenth of the guides.

Counting every code of 10,000 pages takes about 2 s, so the counts are kept in the build cache
from one build to the next, with each page's codes among them: after one changed guide, its
old codes are taken off the counts and its new ones added. Exactly: the counts kept are of
every code that was on at least half the threshold's pages when last counted in full, so a
code not kept can pass the threshold only after that many pages were added, and before that
the codes are counted in full again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.checks.minhash import starts

BOILERPLATE_SHARE = 0.1
BOILERPLATE_MIN = 10
"""A shingle of visible text or evidence found on more than a tenth of the guides (and on more
than ten) is the template's or the record shape's, not one page's content: it is left out, so
shared headings and captions neither make unrelated guides look alike nor cost time."""
BUCKETS = 8  # value ranges the codes are counted in, one after the other (less memory)
COMMON = "common"
"""The build cache's kind of entry holding one kind of text's counts (`boilerplate`)."""
_DIGEST = 32


@dataclass(frozen=True)
class Counts:
    """The codes counted (sorted) and how many pages have each; each page's digest and which
    of the codes it has (`at[offsets[n] : offsets[n + 1]]`); the least count a code needed to
    be kept when last counted in full (`floor`), and how many pages were added since."""

    codes: np.ndarray
    counts: np.ndarray
    pages: list[bytes]
    offsets: np.ndarray
    at: np.ndarray
    floor: int
    added: int


def boilerplate(
    cache: BuildCache | None, label: str, arrays: Sequence[np.ndarray], pages: Sequence[bytes]
) -> np.ndarray:
    """Return the codes (sorted) more than BOILERPLATE_SHARE of the pages have (and more than
    BOILERPLATE_MIN), from each page's sorted, distinct int64 codes and a 32-byte digest of
    them; `cache` keeps the counts for `label` for the next build."""
    threshold = max(BOILERPLATE_MIN, BOILERPLATE_SHARE * len(arrays))
    kept = _read(cache, label) if cache is not None else None
    counted = _updated(kept, arrays, pages, threshold) if kept is not None else None
    if counted is None:
        counted = _recounted(arrays, pages, threshold)
    if cache is not None and counted is not kept:
        cache.write(COMMON, _key(label), _dumped(counted))
    return counted.codes[counted.counts > threshold]


def common_codes(arrays: Sequence[np.ndarray], more_than: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the codes more than `more_than` pages have, sorted, and how many pages have each
    (each page's codes are sorted and distinct). They are counted a value range at a time
    (BUCKETS): at 10,000 guides every code at once, and its sorted copy, are hundreds of MB."""
    if not arrays:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    step = (1 << 64) // BUCKETS
    bounds = np.array([-(1 << 63) + step * n for n in range(1, BUCKETS)], np.int64)
    cuts = [[0, *np.searchsorted(array, bounds).tolist(), len(array)] for array in arrays]
    found, how_many = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for bucket in range(BUCKETS):
        part = [a[cut[bucket] : cut[bucket + 1]] for a, cut in zip(arrays, cuts, strict=True)]
        ordered = np.sort(np.concatenate(part), kind="stable")  # timsort merges sorted runs
        firsts = np.flatnonzero(starts(ordered))
        counts = np.diff(firsts, append=len(ordered))
        found.append(ordered[firsts[counts > more_than]])
        how_many.append(counts[counts > more_than])
    return np.concatenate(found), np.concatenate(how_many)


def _recounted(arrays: Sequence[np.ndarray], pages: Sequence[bytes], threshold: float) -> Counts:
    """Count every page's codes, keeping those on at least half the threshold's pages."""
    floor = max(1, int(threshold // 2))
    codes, counts = common_codes(arrays, floor - 1)
    at = [_positions(codes, array).astype(_index(len(codes))) for array in arrays]
    offsets = np.cumsum([0, *map(len, at)])
    flat = np.concatenate(at) if at else np.empty(0, _index(len(codes)))
    return Counts(codes, counts, list(pages), offsets, flat, floor, 0)


def _updated(
    kept: Counts, arrays: Sequence[np.ndarray], pages: Sequence[bytes], threshold: float
) -> Counts | None:
    """Return the kept counts less the pages gone and plus the pages new since, or None when
    so many pages were added since the last full count that a code not kept may have passed
    `threshold`."""
    slots: dict[bytes, list[int]] = defaultdict(list)
    for slot, page in enumerate(kept.pages):
        slots[page].append(slot)
    matched: list[int | None] = [slots[page].pop() if slots[page] else None for page in pages]
    new = [n for n, slot in enumerate(matched) if slot is None]
    added = kept.added + len(new)
    if kept.floor - 1 + added > threshold:
        return None
    gone = [slot for left in slots.values() for slot in left]
    if not new and not gone:
        return kept
    size = len(kept.codes)
    counts = kept.counts.copy()
    for slot in gone:
        counts -= np.bincount(kept.at[kept.offsets[slot] : kept.offsets[slot + 1]], minlength=size)
    at = []
    for n, slot in enumerate(matched):
        if slot is None:
            at.append(_positions(kept.codes, arrays[n]).astype(kept.at.dtype))
            counts += np.bincount(at[-1], minlength=size)
        else:
            at.append(kept.at[kept.offsets[slot] : kept.offsets[slot + 1]])
    offsets = np.cumsum([0, *map(len, at)])
    flat = np.concatenate(at) if at else np.empty(0, kept.at.dtype)
    return Counts(kept.codes, counts, list(pages), offsets, flat, kept.floor, added)


def _positions(codes: np.ndarray, array: np.ndarray) -> np.ndarray:
    """Return where each of the page's codes that are among `codes` (sorted) is there."""
    if not len(codes):
        return np.empty(0, np.int64)
    at = np.searchsorted(codes, array).clip(max=len(codes) - 1)
    return at[codes[at] == array]


def _dumped(counted: Counts) -> bytes:
    head = [len(counted.codes), len(counted.pages), len(counted.at), counted.floor, counted.added]
    return b"".join(
        [
            code_digest().encode("ascii"),
            np.array(head, "<i8").tobytes(),
            counted.codes.astype("<i8").tobytes(),
            counted.counts.astype("<i8").tobytes(),
            *counted.pages,
            counted.offsets.astype("<i8").tobytes(),
            counted.at.astype(_index(len(counted.codes))).tobytes(),
        ]
    )


def _read(cache: BuildCache, label: str) -> Counts | None:
    """Return the counts `cache` keeps for `label`, or None (also for other code's, or damaged)."""
    data = cache.read(COMMON, _key(label))
    code = code_digest().encode("ascii")
    start = len(code) + 40
    if data is None or not data.startswith(code) or len(data) < start:
        return None
    codes_count, pages_count, at_count, floor, added = np.frombuffer(data, "<i8", 5, len(code))
    parts = [8 * codes_count, 8 * codes_count, _DIGEST * pages_count, 8 * (pages_count + 1)]
    index = _index(codes_count)
    ends = np.cumsum([start, *parts, index.itemsize * at_count]).tolist()
    if ends[-1] != len(data) or min(codes_count, pages_count, at_count) < 0:
        return None
    codes, counts = (np.frombuffer(data, "<i8", codes_count, ends[n]) for n in (0, 1))
    first = ends[2]
    pages = [data[first + _DIGEST * n : first + _DIGEST * (n + 1)] for n in range(pages_count)]
    offsets = np.frombuffer(data, "<i8", pages_count + 1, ends[3])
    at = np.frombuffer(data, index, at_count, ends[4])
    fits = offsets[0] == 0 and offsets[-1] == at_count and bool(np.all(np.diff(offsets) >= 0))
    if not fits or (at_count and int(at.max()) >= codes_count):
        return None
    return Counts(codes, counts, pages, offsets, at, int(floor), int(added))


def _index(codes: int) -> np.dtype:
    """The type that holds a position among `codes` codes: 2 bytes for up to 65,536."""
    return np.dtype("<u2" if codes <= 1 << 16 else "<u4")


def _key(label: str) -> str:
    """One entry per kind of text, overwritten by each build that changes it (never pruned);
    it starts with the code's digest, and is not read under other code."""
    return digest(COMMON, label)
