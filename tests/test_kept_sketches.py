"""Each page's MinHash signature is kept in the build cache by what it is made from: an audit
after one change makes one signature, and finds exactly what an audit without the cache finds."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from site_builder.cache.store import VERSION, BuildCache
from site_builder.checks import sketches
from site_builder.checks.minhash import signature
from site_builder.checks.overlap import check_overlap
from site_builder.checks.sketches import SKETCHES, kept_sketches
from site_builder.model.declared import Shingles

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import audit_bench  # (the benchmark's synthetic site: guides, registry, prose)


def pages(count: int, seed: int = 3) -> list[np.ndarray]:
    """`count` pages of sorted, distinct int64 shingle codes."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(np.int64).max
    return [np.unique(rng.integers(-top, top, rng.integers(1, 300))) for _ in range(count)]


def made_from(arrays: list[np.ndarray]) -> list[bytes]:
    return [hashlib.sha256(array.tobytes()).digest() for array in arrays]


def counting(arrays: list[np.ndarray], made: list[int]) -> Callable[[int], np.ndarray]:
    """Return page n's shingles, noting that they were asked for (to make its signature)."""

    def shingles(n: int) -> np.ndarray:
        made.append(n)
        return arrays[n]

    return shingles


def with_one_more(codes: bytes) -> bytes:
    """Return the 3-gram codes (`words.gram_codes`) with one more, still sorted."""
    return np.union1d(np.frombuffer(codes, "<i8"), [12345]).astype("<i8").tobytes()


def test_signatures_are_kept_by_what_each_page_is_made_from(tmp_path: Path) -> None:
    arrays, made = pages(40), []
    first = kept_sketches(BuildCache(tmp_path), "text", made_from(arrays), counting(arrays, made))
    assert made == list(range(40))
    assert first.signatures.tolist() == [signature(array).tolist() for array in arrays]
    assert first.sizes.tolist() == [len(array) for array in arrays]

    made.clear()
    again = kept_sketches(BuildCache(tmp_path), "text", made_from(arrays), counting(arrays, made))
    assert made == []
    assert again.signatures.tolist() == first.signatures.tolist()
    assert again.sizes.tolist() == first.sizes.tolist()

    arrays[7] = pages(1, seed=9)[0]
    arrays.append(pages(1, seed=10)[0])
    changed = kept_sketches(BuildCache(tmp_path), "text", made_from(arrays), counting(arrays, made))
    assert made == [7, 40]
    assert changed.signatures.tolist() == [signature(array).tolist() for array in arrays]
    assert changed.sizes.tolist() == [len(array) for array in arrays]

    made.clear()
    kept_sketches(BuildCache(tmp_path), "evidence", made_from(arrays), counting(arrays, made))
    assert made == list(range(41)), "each kind of text keeps its own"


@pytest.mark.parametrize("damage", ["bytes", "code", "length"])
def test_a_damaged_entry_or_one_of_other_code_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    arrays, made = pages(12), []
    inputs = made_from(arrays)
    kept_sketches(BuildCache(tmp_path), "text", inputs, counting(arrays, made))
    (entry,) = (tmp_path / f"v{VERSION}" / SKETCHES).iterdir()
    data = entry.read_bytes()
    if damage == "bytes":  # a byte changed on disk: its checksum no longer matches
        entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "code":  # the builder changed since: its signatures may be made otherwise
        monkeypatch.setattr(sketches, "code_digest", lambda: "0" * 64)
    else:  # an entry that checks out but holds one signature fewer than it says
        BuildCache(tmp_path).write(SKETCHES, entry.name, data.partition(b"\n")[2][:-512])
    made.clear()
    found = kept_sketches(BuildCache(tmp_path), "text", inputs, counting(arrays, made))
    assert made == list(range(12))
    assert found.signatures.tolist() == [signature(array).tolist() for array in arrays]


def test_an_audit_with_kept_signatures_finds_what_one_without_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic = audit_bench.build_site(2500)
    site, shingled = synthetic.site, dict(synthetic.shingled)
    assert len(site.guides) * len(site.guides) > audit_bench.overlap.EXACT_PAIR_LIMIT  # LSH
    cold = check_overlap(site, shingled)
    assert check_overlap(site, shingled, BuildCache(tmp_path)) == cold

    made: list[int] = []
    original = sketches.signature
    monkeypatch.setattr(sketches, "signature", lambda codes: made.append(1) or original(codes))
    copy, source = site.guides[5].url, site.guides[9].url
    shingled[copy] = shingled[source]  # guide 5's page and record now read as guide 9's...
    copied = check_overlap(site, shingled, BuildCache(tmp_path))
    assert made == [], "...whose signatures are kept: the same shingles, the same signature"
    assert copied == check_overlap(site, shingled)
    made.clear()
    shingled[copy] = Shingles(*(with_one_more(codes) for codes in shingled[source]))
    found = check_overlap(site, shingled, BuildCache(tmp_path))
    assert len(made) == 2, "one signature for its visible text and one for its evidence"

    assert found == check_overlap(site, shingled)
    assert {(f.check, f.severity) for f in found if {f.page, *f.related} == {copy, source}} == {
        ("overlap", "error"),
        ("closest", "info"),
    }
    assert found != cold
