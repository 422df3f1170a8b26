"""Each page's MinHash signature and shingle count, kept in the build cache by what they were
made from: after one changed guide, the overlap audit of 10,000 makes one signature, not
30,000 (about 3 s with the shingles they need)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from site_builder.cache.reuse import code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.checks.minhash import NUM_PERM, signature

SKETCHES = "sketches"
"""The build cache's kind of entry holding one kind of text's signatures (`kept_sketches`)."""
_DIGEST = 32  # bytes of each page's input digest
_ROW = _DIGEST + 8 + 4 * NUM_PERM  # a page's digest, shingle count and signature


class Sketches(NamedTuple):
    """The pages' MinHash signatures (a row each) and how many shingles each has."""

    signatures: np.ndarray
    sizes: np.ndarray


def kept_sketches(
    cache: BuildCache | None,
    label: str,
    inputs: Sequence[bytes],
    shingles: Callable[[int], np.ndarray],
) -> Sketches:
    """Return the sketches of pages whose shingles are `shingles(n)` (sorted, distinct int64
    codes) and depend on nothing but `inputs[n]` (a 32-byte digest), reusing those `cache`
    holds for `label` by input and keeping them there for the next build."""
    count = len(inputs)
    signatures = np.empty((count, NUM_PERM), np.uint32)
    sizes = np.empty(count, np.int64)
    kept = _read(cache, label) if cache is not None else {}
    for n, made_from in enumerate(inputs):
        row = kept.get(made_from)
        if row is None:
            codes = shingles(n)
            sizes[n], signatures[n] = len(codes), signature(codes)
        else:
            sizes[n], signatures[n] = row
    if cache is not None and kept.keys() != set(inputs):
        head = code_digest().encode("ascii") + count.to_bytes(8, "little")
        rows = sizes.astype("<i8").tobytes() + signatures.astype("<u4").tobytes()
        cache.write(SKETCHES, _key(label), head + b"".join(inputs) + rows)
    return Sketches(signatures, sizes)


def _read(cache: BuildCache, label: str) -> dict[bytes, tuple[int, np.ndarray]]:
    """Return the kept (shingle count, signature) of each input digest; none for a damaged entry."""
    data = cache.read(SKETCHES, _key(label))
    code = code_digest().encode("ascii")
    if data is None or not data.startswith(code):
        return {}
    count = int.from_bytes(data[len(code) : len(code) + 8], "little")
    body = memoryview(data)[len(code) + 8 :]
    if len(body) != count * _ROW:
        return {}
    sizes = np.frombuffer(body, "<i8", count, count * _DIGEST)
    signatures = np.frombuffer(body, "<u4", count * NUM_PERM, count * (_DIGEST + 8))
    signatures = signatures.reshape(count, NUM_PERM)
    digests = (bytes(body[n * _DIGEST : (n + 1) * _DIGEST]) for n in range(count))
    return {made_from: (int(sizes[n]), signatures[n]) for n, made_from in enumerate(digests)}


def _key(label: str) -> str:
    """One entry per kind of text, overwritten by each build that changes it (so never pruned);
    it starts with the code's digest, and is not read under other code."""
    return digest(SKETCHES, label)
