"""What the overlap audit compares, one kind of text at a time: each page's intent, and each
guide's visible text and evidence less the shingles most guides share (the template's)."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from site_builder.minhash import starts
from site_builder.models import Site
from site_builder.seo import Doc, Shingled, shingles
from site_builder.words import stopwords

BOILERPLATE_SHARE = 0.1
BOILERPLATE_MIN = 10
"""A shingle of visible text or evidence found on more than a tenth of the guides (and on more
than ten) is the template's or the record shape's, not one page's content: it is left out, so
shared headings and captions neither make unrelated guides look alike nor cost time."""
BUCKETS = 8  # value ranges the codes are counted in, one after the other (less memory)


@dataclass(frozen=True)
class Group:
    """One kind of text of some pages, compared pair by pair."""

    kind: str
    docs: list[Doc]
    inputs: Callable[[], list[bytes]]
    """Each page's 32-byte digest of all its shingles are made from (`sketches`)."""
    shingles: Callable[[int], Shingled]
    """Page n's shingles, made when first asked for."""


def page_docs(site: Site) -> tuple[list[Doc], list[str]]:
    """Return the intent document of every guide, then of every registry page not built here,
    each distinct shingle as one int: a number of its own, and the crc32 of its text in the
    low 32 bits (what MinHash hashes); and each one's intent text."""
    docs, intents = [], []
    for g in site.guides:
        intents.append(f"{g.title} {g.reader_job} {g.description}")
        docs.append(Doc(g.url, g.reader_job, g.source, g, shingles(intents[-1])))
    built = {guide.url for guide in site.guides}
    # One entry per page: a page listed twice is compared once (check_canonical_uniqueness).
    for key, entry in sorted(site.registry_by_key.items()):
        if key not in built:
            words = key.strip("/").split("/")[-1].replace("-", " ")
            intents.append(f"{entry.title} {entry.reader_job} {words}")
            docs.append(
                Doc(key, entry.reader_job, site.registry_source, None, shingles(intents[-1]))
            )
    spelled = frozenset[str]().union(*(doc.shingles for doc in docs))  # type: ignore[arg-type]
    number = {text: n << 32 | zlib.crc32(text.encode()) for n, text in enumerate(spelled)}
    docs = [replace(doc, shingles=frozenset(map(number.__getitem__, doc.shingles))) for doc in docs]
    return docs, intents


def intent_group(docs: list[Doc], intents: list[str]) -> Group:
    """Return the pages' intents: their shingles are made from their text and the stopwords."""
    vocabulary = hashlib.sha256(" ".join(sorted(stopwords())).encode())

    def inputs() -> list[bytes]:
        return [_digest(vocabulary, intent.encode()) for intent in intents]

    return Group("intent", docs, inputs, lambda n: docs[n].shingles)


def text_group(kind: str, docs: list[Doc], codes: list[bytes]) -> Group:
    """Return the guides' texts of one kind from the 3-gram codes of each (`words.gram_codes`),
    as sorted int64 arrays of shingles less the codes more than BOILERPLATE_SHARE of the texts
    (and BOILERPLATE_MIN) have: a text's shingles are made from its codes and those."""
    arrays = [np.frombuffer(code, "<i8") for code in codes]  # views: no copy of every code
    common = common_codes(arrays, max(BOILERPLATE_MIN, BOILERPLATE_SHARE * len(codes)))
    last = len(common) - 1

    def inputs() -> list[bytes]:
        made_from = hashlib.sha256(common.tobytes())
        return [_digest(made_from, code) for code in codes]

    @cache
    def kept(n: int) -> np.ndarray:  # the page's codes less the common ones (both sorted)
        array = arrays[n]
        return (
            array[common[np.searchsorted(common, array).clip(max=last)] != array]
            if last >= 0
            else array
        )

    return Group(kind, docs, inputs, kept)


def _digest(base: hashlib._Hash, data: bytes) -> bytes:
    hasher = base.copy()
    hasher.update(data)
    return hasher.digest()


def common_codes(arrays: list[np.ndarray], more_than: float) -> np.ndarray:
    """Return the codes more than `more_than` pages have, sorted (each page's codes are sorted
    and distinct). They are counted a value range at a time (BUCKETS): at 10,000 guides every
    code at once, and its sorted copy, are hundreds of MB each."""
    if not arrays:
        return np.empty(0, np.int64)
    step = (1 << 64) // BUCKETS
    bounds = np.array([-(1 << 63) + step * n for n in range(1, BUCKETS)], np.int64)
    cuts = [[0, *np.searchsorted(array, bounds).tolist(), len(array)] for array in arrays]
    found = [np.empty(0, np.int64)]
    for bucket in range(BUCKETS):
        part = [a[cut[bucket] : cut[bucket + 1]] for a, cut in zip(arrays, cuts, strict=True)]
        ordered = np.sort(np.concatenate(part), kind="stable")  # timsort merges sorted runs
        firsts = np.flatnonzero(starts(ordered))
        counts = np.diff(firsts, append=len(ordered))
        found.append(ordered[firsts[counts > more_than]])
    return np.concatenate(found)
