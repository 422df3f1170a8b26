"""Leave the records that did not change since the last build on disk.

What the whole site needs of a record (its head: ids, dates, verdict, nearest pages, the
digest its cache keys use) is kept in the build cache, one entry for every record, under
the builder's code and the record vocabulary. A build that knows each input file's sha256
(`unchanged.input_digests`) does not read a record whose bytes have a kept head: its
`Evidence` is made from the head, and its body is read from the file only if its
verification or its page is not in the cache. The body must come from the same bytes; a
record saved since the build began is an input error (build again).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, TypeAdapter, ValidationError

from site_builder.cache.store import BuildCache, digest
from site_builder.errors import InputError, Problem
from site_builder.inputs.decode import ReadError, decode_record
from site_builder.inputs.evidence import record_evidence
from site_builder.model.raw import RawRecord
from site_builder.model.record_model import Evidence, LaterBody, NearbyPage, RecordBody
from site_builder.model.vocabulary import Vocabulary
from site_builder.runtime import files

HEADS = "record heads"
"""The cache kind of the records' heads, one entry by code and vocabulary."""
HELD_RECORD_BYTES = 64 << 20
"""A build holds every record it reads, with its checks, while the record files total at
most this: about 4.6 bytes held for each byte of file (at 1,000 guides, 24 MB of records
held 110 MB), so some 300 MB at most. The workers it forks to verify and render then read
no record and no check from disk again. A bigger site lets go of each as it is read (at
10,000 guides the builder stays under 1 GiB), and its workers read their own."""
_TIME = TypeAdapter(AwareDatetime)
DigestOf = Callable[[Evidence], str]


class KeptHeads:
    """The heads the last build kept, for the records whose bytes are those they were made
    from (by each input file's sha256, `digests`), under the builder's code and the record
    vocabulary file's sha256."""

    def __init__(
        self, cache: BuildCache, code: str, digests: Mapping[str, str], vocabulary: str
    ) -> None:
        self._cache, self._digests = cache, digests
        self._key = digest(HEADS, code, digests.get(vocabulary, ""))
        self._read = cache.read(HEADS, self._key)
        self.kept: dict[str, tuple[str, Evidence]] = {}
        """The sha256 and Evidence (without its body: `evidence`) of each kept record."""
        try:
            heads = json.loads(self._read) if self._read is not None else {}
            items = heads.items()
        except (ValueError, AttributeError):
            return
        for source, head in items:
            if isinstance(head, list) and head and digests.get(source) == head[0] != "unreadable":
                try:
                    self.kept[source] = (head[0], _evidence(source, head[1:]))
                except (ValueError, TypeError, ValidationError):
                    continue  # a damaged head: the record is read

    def evidence(self, root: Path, vocabulary: Vocabulary) -> list[Evidence]:
        """Return the Evidence of each kept record, its body read from its file when asked."""
        return [
            replace(evidence, body=LaterBody(partial(_body, root / name, name, sha, vocabulary)))
            for name, (sha, evidence) in self.kept.items()
        ]

    def hold(
        self,
        root: Path,
        digest_of: DigestOf,
        release: bool,
        evidence: Evidence,
        vocabulary: Vocabulary,
    ) -> Evidence:
        """Return a record this build read carrying its digest, and with a body that can be
        read again from its file (its sha256 known): let go of at once if `release` (the
        workers that verify and render it read it), else held until `release_bodies`. A
        record validated in another process comes `sent`: its digest made, its body left."""
        sha256, name = self._digests.get(evidence.source, ""), evidence.source
        if not isinstance(evidence.body, RecordBody | LaterBody) or len(sha256) != 64:
            return evidence
        load = partial(_body, root / name, name, sha256, vocabulary)
        held = evidence.body if isinstance(evidence.body, RecordBody) and not release else None
        return replace(evidence, body=LaterBody(load, held), digest=digest_of(evidence))

    def sent(self, digest_of: DigestOf, evidence: Evidence) -> Evidence:
        """Return a record validated in another process as it goes back to `hold`, which
        lets go of its body: with its digest made there, and without its body (at 10,000
        guides, none of them travels)."""
        sha256 = self._digests.get(evidence.source, "")
        if not isinstance(evidence.body, RecordBody) or len(sha256) != 64:
            return evidence
        left = LaterBody(_left_where_validated)
        return replace(evidence, body=left, digest=digest_of(evidence))

    def keep(self, records: Iterable[tuple[Evidence, str]]) -> None:
        """Keep the head of each (record, digest of its record) whose file's sha256 is known;
        write the entry only if it changed."""
        heads = {
            evidence.source: [sha256, *_head(evidence, record_digest)]
            for evidence, record_digest in records
            if len(sha256 := self._digests.get(evidence.source, "")) == 64  # not "unreadable"
        }
        data = json.dumps(heads, ensure_ascii=False).encode("utf-8")
        if data != self._read:
            self._cache.write(HEADS, self._key, data)


def _left_where_validated() -> RecordBody:
    """The body of a record `sent` without it; `hold` gives it a way to read it again."""
    raise RuntimeError("a record's body was left where it was validated")


def holds_records(sizes: Iterable[int]) -> bool:
    """Whether a build whose record files are of these sizes (bytes) holds every record it
    reads, and their checks (HELD_RECORD_BYTES)."""
    return sum(sizes) <= HELD_RECORD_BYTES


def release_bodies(records: Iterable[Evidence]) -> None:
    """Let go of the bodies held by records that can read theirs again (`KeptHeads.held`)."""
    for evidence in records:
        if isinstance(evidence.body, LaterBody):
            evidence.body.release()


def _head(evidence: Evidence, record_digest: str) -> list[Any]:
    """Return what the site needs of a record, as JSON can hold it."""
    return [
        evidence.operation_id,
        evidence.checked_at.isoformat(),
        evidence.status,
        evidence.verdict,
        [[page.url, page.reader_job, page.difference] for page in evidence.nearby],
        evidence.nearby_note,
        evidence.decision_at,
        list(evidence.boundary_at),
        evidence.overlap_at,
        evidence.distinct_intent,
        evidence.sitemap_count,
        [list(count) for count in evidence.runtime_counts],
        evidence.pinned_release,
        record_digest,
    ]


def _evidence(source: str, fields: list[Any]) -> Evidence:
    """Return the Evidence `_head` described, without a body yet."""
    (operation_id, checked_at, status, verdict, nearby, note, decision_at, boundary_at) = fields[:8]
    (overlap_at, distinct, count, runtime_counts, release, record_digest) = fields[8:]
    pages = (NearbyPage(url=url, reader_job=job, difference=diff) for url, job, diff in nearby)
    when: datetime = _TIME.validate_python(checked_at)
    return Evidence(
        source=source,
        operation_id=str(operation_id),
        checked_at=when,
        status=str(status),
        verdict=str(verdict),
        nearby=tuple(pages),
        nearby_note=str(note),
        body=LaterBody(_no_body),
        decision_at=str(decision_at),
        boundary_at=tuple(map(str, boundary_at)),
        overlap_at=str(overlap_at),
        distinct_intent=distinct,
        sitemap_count=count,
        runtime_counts=tuple((str(noun), int(n)) for noun, n in runtime_counts),
        pinned_release=str(release),
        digest=str(record_digest),
    )


def _no_body() -> RecordBody:
    raise AssertionError("a kept record's body is set by later_evidence")


def _body(path: Path, source: str, sha256: str, vocabulary: Vocabulary) -> RecordBody:
    """Read a kept record's body from its file, which must hold the bytes its head was made
    from."""
    try:
        data = files.regular_bytes(path)
    except OSError as error:
        problem = error.strerror or str(error)
        if isinstance(error, files.NotRegular):
            problem = "no longer a regular file; build again"
        raise _changed(source, f"cannot be read: {problem}") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise _changed(source, "changed while the build ran; build again")
    try:
        raw = RawRecord(source, decode_record(data), sha256)
    except ReadError as error:  # the same bytes decoded before: only a changed decoder
        raise _changed(source, error.message) from None
    problems: list[Problem] = []
    evidence = record_evidence(raw, vocabulary, problems)
    if evidence is None or problems:
        raise InputError(problems or [Problem(source, "file", "no longer valid; build again")])
    assert isinstance(evidence.body, RecordBody)
    return evidence.body


def _changed(source: str, message: str) -> InputError:
    return InputError([Problem(source, "file", message)])
