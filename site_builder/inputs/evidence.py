"""Resolve one raw record into Evidence, by the record vocabulary: the only reader of raw keys.

Records vary by operation: the decision object has more than one name, receipts are named
by one of several fields, nearest pages come in three spellings, counts and claims sit under
names of the research's choosing. `content/vocabulary.yaml` names them all; after this
module nothing downstream reads a record key by name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from site_builder.cache.store import digest
from site_builder.errors import Problem
from site_builder.model.raw import RawRecord
from site_builder.model.record_model import Evidence, NearbyPage, Receipt, RecordBody
from site_builder.model.schema import JsonValue, RecordCore
from site_builder.model.vocabulary import Vocabulary

_SCHEMA_KEYS = frozenset(field.alias or name for name, field in RecordCore.model_fields.items())


def record_evidence(
    raw: RawRecord, vocabulary: Vocabulary, problems: list[Problem]
) -> Evidence | None:
    """Turn one raw record into Evidence, or add its problems and return None."""
    before = len(problems)
    words = vocabulary
    left_out = frozenset(words.editorial_keys)
    raw = RawRecord(raw.source, _without(raw.data, left_out), raw.sha256)
    core = _core(raw, problems)
    decision = _decision(raw, words, problems)
    overlap = raw.data.get(words.overlap.key, {})
    if not isinstance(overlap, dict):
        problems.append(Problem(raw.source, words.overlap.key, "must be an object"))
        overlap = {}
    nearby, note, overlap_facts = _nearby(raw.source, overlap, words, problems)
    if core is None or decision is None or len(problems) > before:
        return None
    verdict, details, decision_at = decision
    boundary = _record_boundary(raw.data, words)
    known = _SCHEMA_KEYS | {words.overlap.key, *words.decision_keys, *words.record_boundary_keys}
    claims = dict(overlap_facts)
    distinct = claims.get(words.overlap.distinct_intent)
    count = claims.get(words.overlap.sitemap_count)
    body = RecordBody(
        decision=details,
        boundary=tuple(fact for fact, _ in boundary),
        revisions=tuple(core.revisions.items()),
        model_facts=tuple(core.model_facts.items()),
        receipts=tuple(_receipt(r.model_dump(), words) for r in core.source_receipts),
        invariants=tuple(core.invariants.items()),
        overlap_facts=overlap_facts,
        sections=tuple((key, value) for key, value in raw.data.items() if key not in known),
        record=raw.data,
    )
    return Evidence(
        source=raw.source,
        operation_id=core.operation_id,
        checked_at=core.checked_at,
        status=core.status,
        verdict=verdict,
        nearby=nearby,
        nearby_note=note,
        body=body,
        decision_at=decision_at,
        boundary_at=tuple(at for _, at in boundary),
        overlap_at=words.overlap.key,
        distinct_intent=distinct if isinstance(distinct, bool) else None,
        sitemap_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
        runtime_counts=_runtime_counts(boundary, words),
        pinned_release=_pinned_release(core.revisions, words),
        digest=_file_digest(raw.sha256, left_out),
    )


def _file_digest(sha256: str, left_out: frozenset[str]) -> str:
    """Return the digest of a record read from a file: of the file's bytes and the editorial
    keys left out of it (the record is made of the two), so the record is not serialised
    again to be digested ("" for a record not read from a file: see `reuse.evidence_digest`)."""
    return digest("record file", sha256, *sorted(left_out)) if sha256 else ""


def _core(raw: RawRecord, problems: list[Problem]) -> RecordCore | None:
    """Validate the fields every record has; one problem per pydantic error."""
    try:
        return RecordCore.model_validate(raw.data)
    except ValidationError as error:
        for item in error.errors(include_url=False):
            location = ".".join(str(part) for part in item["loc"]) or "<root>"
            problems.append(Problem(raw.source, location, item["msg"]))
        return None


def _without(value: Any, keys: frozenset[str]) -> Any:
    """Return a JSON value with editorial keys removed at every depth, never to be published.

    Objects and lists without any are returned as they are, shared (a record is never
    changed once read): only the containers on the way to a removed key are copied.
    """
    if isinstance(value, dict) and not keys.isdisjoint(value):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if not isinstance(value, dict | list):
        return value
    copy: Any = None
    for at, item in value.items() if isinstance(value, dict) else enumerate(value):
        if isinstance(item, dict | list) and (kept := _without(item, keys)) is not item:
            if copy is None:
                copy = dict(value) if isinstance(value, dict) else list(value)
            copy[at] = kept
    return value if copy is None else copy


def _decision(
    raw: RawRecord, words: Vocabulary, problems: list[Problem]
) -> tuple[str, tuple[tuple[str, Any], ...], str] | None:
    """Return (classification, other fields, key) of the record's decision object."""
    present = [key for key in words.decision_keys if key in raw.data]
    if len(present) != 1:
        names = " or ".join(f"'{key}'" for key in words.decision_keys)
        problems.append(
            Problem(raw.source, words.decision_keys[0], f"needs exactly one of {names}")
        )
        return None
    key = present[0]
    decision = raw.data[key]
    if not isinstance(decision, dict):
        problems.append(Problem(raw.source, key, "must be an object"))
        return None
    verdict_key = words.classification_key
    classification = decision.get(verdict_key)
    if not isinstance(classification, str) or not classification.strip():
        message = "a non-empty string is required"
        problems.append(Problem(raw.source, f"{key}.{verdict_key}", message))
        return None
    details = tuple((name, value) for name, value in decision.items() if name != verdict_key)
    return classification, details, key


def _record_boundary(
    data: Mapping[str, JsonValue], words: Vocabulary
) -> list[tuple[tuple[str, JsonValue], str]]:
    """Merge the whole-record boundary objects into one list of (fact, JSON path), in order."""
    facts: list[tuple[tuple[str, JsonValue], str]] = []
    for key in words.record_boundary_keys:
        value = data.get(key)
        if isinstance(value, dict):
            facts.extend(((name, item), f"{key}.{name}") for name, item in value.items())
        elif value is not None:
            facts.append(((key, value), key))
    return facts


def _runtime_counts(
    boundary: list[tuple[tuple[str, JsonValue], str]], words: Vocabulary
) -> tuple[tuple[str, int], ...]:
    """Sum the boundary's whole-number counts by the vocabulary's patterns: ('GPU run', 0)."""
    counts = []
    for noun, pattern in words.runtime_counts.items():
        found = [
            value
            for (key, value), _ in boundary
            if isinstance(value, int) and not isinstance(value, bool) and re.search(pattern, key)
        ]
        if found:
            counts.append((noun, sum(found)))
    return tuple(counts)


def _pinned_release(revisions: Mapping[str, Any], words: Vocabulary) -> str:
    """Return the release the audit pins (the first preferred key holding a release tag), or ''."""
    tags = [
        (key, value)
        for key, value in revisions.items()
        if isinstance(value, str) and re.fullmatch(words.release_tag, value)
    ]
    for pattern in words.release_keys:
        for key, value in tags:
            if re.search(pattern, key):
                return value
    return ""


def _receipt(fields: dict[str, Any], words: Vocabulary) -> Receipt:
    """Build a Receipt, taking its name from whichever name key the record uses."""
    name_key = next((k for k in words.receipt_name_keys if isinstance(fields.get(k), str)), None)
    name = fields[name_key] if name_key else fields["url"]
    shown = {"url", "bytes", "sha256", name_key}
    extra = tuple((key, value) for key, value in fields.items() if key not in shown)
    return Receipt(
        name=name, url=fields["url"], bytes=fields["bytes"], sha256=fields["sha256"], extra=extra
    )


def _nearby(
    source: str, overlap: Mapping[str, Any], words: Vocabulary, problems: list[Problem]
) -> tuple[tuple[NearbyPage, ...], str, tuple[tuple[str, Any], ...]]:
    """Return the nearest pages, a note shared by all of them, and the other overlap facts."""
    keys = words.overlap
    pages: list[NearbyPage] = []
    used = {
        keys.nearest_pages,
        keys.closest_pages,
        keys.distinction,
        keys.nearest_page,
        keys.nearest_page_intent,
        keys.new_page_intent,
    }
    for index, item in enumerate(_list(overlap.get(keys.nearest_pages))):
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            where = f"{keys.key}.{keys.nearest_pages}.{index}"
            problems.append(Problem(source, where, "needs a 'url' string"))
            continue
        pages.append(
            NearbyPage(
                url=item["url"],
                reader_job=_text(item.get(keys.reader_job)),
                difference=_text(item.get(keys.difference)),
            )
        )
    for index, url in enumerate(_list(overlap.get(keys.closest_pages))):
        if not isinstance(url, str):
            where = f"{keys.key}.{keys.closest_pages}.{index}"
            problems.append(Problem(source, where, "must be a URL string"))
            continue
        pages.append(NearbyPage(url=url, reader_job="", difference=""))
    if isinstance(overlap.get(keys.nearest_page), str):
        pages.append(
            NearbyPage(
                url=overlap[keys.nearest_page],
                reader_job=_text(overlap.get(keys.nearest_page_intent)),
                difference=_text(overlap.get(keys.new_page_intent)),
            )
        )
    note = _text(overlap.get(keys.distinction))
    facts = tuple((key, value) for key, value in overlap.items() if key not in used)
    return tuple(pages), note, facts


def _list(value: Any) -> Sequence[Any]:
    """Return `value` if it is a list, else an empty list."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    """Return `value` if it is a string, else an empty string."""
    return value if isinstance(value, str) else ""
