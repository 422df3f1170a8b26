"""What the overlap audit compares, one kind of text at a time: each page's intent, and each
guide's visible text and evidence less the shingles most guides share (the template's)."""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from site_builder.cache.store import BuildCache
from site_builder.checks.boilerplate import boilerplate
from site_builder.checks.seo import Doc, Shingled, shingles
from site_builder.model.models import Site
from site_builder.render.words import stopwords


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


def text_group(
    kind: str, docs: list[Doc], codes: list[bytes], cache: BuildCache | None = None
) -> Group:
    """Return the guides' texts of one kind from the 3-gram codes of each (`words.gram_codes`),
    as sorted int64 arrays of shingles less the template's (`boilerplate`, counted with
    `cache`): a text's shingles are made from its codes and those."""
    arrays = [np.frombuffer(code, "<i8") for code in codes]  # views: no copy of every code
    pages = [hashlib.sha256(code).digest() for code in codes]
    common = boilerplate(cache, kind, arrays, pages)
    last = len(common) - 1

    def inputs() -> list[bytes]:
        made_from = hashlib.sha256(common.tobytes())
        return [_digest(made_from, page) for page in pages]

    @functools.cache
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
