"""MinHash signatures of shingle sets, and the pages that share a band of them (LSH).

The signatures are datasketch's (its "affine32" permutations, seed 1, of each shingle's low 32
bits), computed here on whole arrays, without the 1.2 s its import (of scipy) costs.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np

NUM_PERM = 128
BANDS, ROWS = 42, 3
"""MinHash LSH bands, of rows of the signature: what datasketch's MinHashLSH picks at a
threshold of 0.4 weighted (0.1, 0.9) towards few false negatives; ~97% of pairs at 0.4 share one."""
_LOW32 = 0xFFFFFFFF  # a shingle's low 32 bits: what MinHash hashes


def signature(codes: np.ndarray) -> np.ndarray:
    """Return the MinHash signature (NUM_PERM uint32) of an int64 array of shingle codes."""
    multiply, add = _permutations()
    mixed = (codes & _LOW32).astype(np.uint32)
    for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, 1)):  # MurmurHash3's fmix32
        mixed = (mixed ^ mixed >> shift) * np.uint32(factor)
    table = np.multiply.outer(multiply, mixed)  # a row per permutation: 7x faster
    table += add[:, None]
    return table.min(axis=1)  # type: ignore[no-any-return]


def neighbours(signatures: np.ndarray, asking: Iterable[int]) -> dict[int, set[int]]:
    """Return, for each row in `asking`, the rows (itself among them) that share at least one
    band of its signature with it, as datasketch's MinHashLSH finds them; rows sharing none
    are left out."""
    near: dict[int, set[int]] = {}
    asking = set(asking)
    for start in range(0, BANDS * ROWS, ROWS):
        band = signatures[:, start : start + ROWS]
        order = np.lexsort(band.T)
        firsts = np.flatnonzero(starts(band[order]))
        sizes = np.diff(firsts, append=len(signatures))
        for first, size in zip(firsts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
            for member in asking.intersection(members := order[first : first + size].tolist()):
                near.setdefault(member, set()).update(members)
    return near


def starts(ordered: np.ndarray) -> np.ndarray:
    """Return, for each row of a sorted array, whether it differs from the one before."""
    differ = ordered[1:] != ordered[:-1]
    return np.r_[True, differ if differ.ndim == 1 else differ.any(axis=1)][: len(ordered)]


@cache
def _permutations() -> tuple[np.ndarray, np.ndarray]:
    """Return the (multiplier, addend) of each of NUM_PERM permutations, drawn as datasketch's
    `MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32")` draws them (the tests check they
    are its `permutations`)."""
    generator = np.random.RandomState(1)
    multiply = generator.randint(0, 1 << 31, NUM_PERM, dtype=np.uint32) * np.uint32(2) + 1
    add = generator.randint(0, 1 << 32, NUM_PERM, dtype=np.uint32)
    for array in (multiply, add):
        array.setflags(write=False)  # shared by every call
    return multiply, add
