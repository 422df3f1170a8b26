"""Guides' front matter kept decoded in the build cache: read back exactly as decoded (dates,
times and their zones, nesting, text), decoded again when JSON cannot hold it, when the
entry is damaged, and never kept for a file that does not decode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from site_builder.cache.store import VERSION, BuildCache
from site_builder.inputs import kept_fronts
from site_builder.inputs.decode import ReadError, decode_doc
from site_builder.inputs.kept_fronts import FRONTS, KeptFronts

PLAIN = """---
title: "GLM-5.2 on vLLM: a guide — with “quotes” and ünïcode"
published: 2026-11-02
updated: 2026-11-20T08:30:00+02:00
noted: 2026-11-21 10:00:00
tags: [vllm, moe]
nested: {a: [1, 2.5, true, null], b: {c: "$date"}}
big: 123456789012345678901234567890
---
# Body

Text with --- inside.
"""
NOT_PLAIN = [
    "---\ntitle: t\n1: a number as a key\n---\nbody\n",
    "---\ntitle: t\nodd: {$date: 2026-11-02}\n---\nbody\n",
    "---\ntitle: t\ntrue: a boolean as a key\n---\nbody\n",
    "---\ntitle: t\n2026-11-02: a date as a key\n---\nbody\n",
]


def counting(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Count the files `kept_fronts` decodes itself."""
    decoded: list[bytes] = []
    original = kept_fronts.decode_doc

    def decode(raw: bytes) -> Any:
        decoded.append(raw)
        return original(raw)

    monkeypatch.setattr(kept_fronts, "decode_doc", decode)
    return decoded


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, times in the same zone."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if hasattr(a, "utcoffset") and a.utcoffset() != b.utcoffset():
        return False
    return bool(a == b)


def test_front_matter_read_back_is_what_decoding_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = PLAIN.encode()
    decoded = counting(monkeypatch)
    first = KeptFronts(BuildCache(tmp_path))
    assert same(first.decode(raw), decode_doc(raw))
    first.keep()
    again = KeptFronts(BuildCache(tmp_path))
    read_back = again.decode(raw)
    assert decoded == [raw], "read back, not decoded again"
    assert same(read_back, decode_doc(raw))
    assert read_back[0] is not again.decode(raw)[0], "each guide gets its own mapping"


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_front_matter_json_cannot_hold_is_decoded_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    raw = text.encode()
    decoded = counting(monkeypatch)
    for _ in range(2):
        fronts = KeptFronts(BuildCache(tmp_path))
        assert same(fronts.decode(raw), decode_doc(raw))
        fronts.keep()
    assert decoded == [raw, raw]


def test_a_file_that_does_not_decode_is_never_kept(tmp_path: Path) -> None:
    fronts = KeptFronts(BuildCache(tmp_path))
    with pytest.raises(ReadError):
        fronts.decode(b"---\ntitle: [unclosed\n---\nbody\n")
    assert fronts.shown == {}


@pytest.mark.parametrize(
    "entry", [b"not json", b"[]", b'{"ab": ["{}", "2"]}', b'{"ab": ["{}"]}', b'{"ab": [1, 2]}']
)
def test_a_damaged_entry_decodes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: bytes
) -> None:
    raw = PLAIN.encode()
    first = KeptFronts(BuildCache(tmp_path))
    first.decode(raw)
    first.keep()
    (kept,) = (tmp_path / f"v{VERSION}" / FRONTS).iterdir()
    BuildCache(tmp_path).write(FRONTS, kept.name, entry)
    decoded = counting(monkeypatch)
    assert same(KeptFronts(BuildCache(tmp_path)).decode(raw), decode_doc(raw))
    assert decoded == [raw]


def test_the_preview_keeps_nothing_on_disk(tmp_path: Path) -> None:
    fronts = KeptFronts(BuildCache(tmp_path, memory=True))
    fronts.decode(PLAIN.encode())
    fronts.keep()
    assert not (tmp_path / f"v{VERSION}" / FRONTS).exists()
