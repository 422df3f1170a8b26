"""Each guide's front matter kept decoded in the build cache, by the sha256 of its file.

Decoding 10,000 guides' front matter (YAML) takes about 0.9 s; a build without the preview's
memory reads every guide's file, and decodes only those whose bytes no build decoded before.
Front matter is kept as JSON, its dates and times tagged (`{"$date": "2026-11-02"}`); one
that JSON cannot hold so (a mapping with keys that are not text) is decoded every time
(`decode` refuses sets and binary).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from datetime import date, datetime
from typing import Any

from site_builder.cache.store import BuildCache, digest
from site_builder.inputs.decode import decode_doc, decoder_digest, doc_body

FRONTS = "fronts"
"""The build cache's kind of entry holding every guide's decoded front matter."""
_TAGS = {"$date": date.fromisoformat, "$datetime": datetime.fromisoformat}


class _NotPlain(Exception):
    """A value JSON cannot hold as it is, nor as a tagged date or time."""


class KeptFronts:
    """`decode_doc` for a build with a cache on disk, reusing the front matter it kept."""

    def __init__(self, cache: BuildCache | None) -> None:
        self.cache = cache if cache is not None and cache.memory is None else None
        self.kept = _read(self.cache) if self.cache is not None else {}
        self.shown: dict[str, list[Any]] = {}

    def decode(self, raw: bytes) -> tuple[dict[str, Any], str, int]:
        """Split a guide into its front matter, its Markdown body and the body's line."""
        if self.cache is None:
            return decode_doc(raw)
        sha256 = hashlib.sha256(raw).hexdigest()
        held = self.kept.get(sha256)
        if held is not None:
            self.shown[sha256] = held
            text, body_line = held
            return json.loads(text, object_hook=_untagged), doc_body(raw, body_line), body_line
        front, body, body_line = decode_doc(raw)
        with contextlib.suppress(_NotPlain):  # one JSON cannot hold is decoded every time
            self.shown[sha256] = [json.dumps(_tagged(front), ensure_ascii=False), body_line]
        return front, body, body_line

    def keep(self) -> None:
        """Keep the front matter of the guides this build read, for the next build."""
        if self.cache is None:
            return
        if self.shown.keys() == self.kept.keys():
            self.cache.keep(FRONTS, _key())
            return
        data = json.dumps(self.shown, ensure_ascii=False, sort_keys=True).encode("utf-8")
        self.cache.write(FRONTS, _key(), data)


def _tagged(value: Any) -> Any:
    """Return `value` as JSON holds it, dates and times tagged; raise _NotPlain if it cannot."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, list):
        return [_tagged(item) for item in value]
    if isinstance(value, dict) and all(
        isinstance(key, str) and not key.startswith("$") for key in value
    ):
        return {key: _tagged(item) for key, item in value.items()}
    raise _NotPlain


def _untagged(value: dict[str, Any]) -> Any:
    """Return a tagged date or time as one, any other mapping as it is."""
    if len(value) == 1:
        ((tag, text),) = value.items()
        if tag in _TAGS and isinstance(text, str):
            return _TAGS[tag](text)
    return value


def _read(cache: BuildCache) -> dict[str, list[Any]]:
    """Return the kept front matter by file sha256 (none for an entry of another shape)."""
    data = cache.read(FRONTS, _key())
    try:
        kept = json.loads(data) if data is not None else {}
    except ValueError:
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        sha256: held
        for sha256, held in kept.items()
        if isinstance(held, list)
        and len(held) == 2
        and isinstance(held[0], str)
        and type(held[1]) is int
    }


def _key() -> str:
    """One entry per version of the decoder (`decode.py` and the YAML library)."""
    return digest(FRONTS, decoder_digest())
