"""The typed model of one audit record that every stage after validation reads: `Evidence`.

What the whole site needs of a record (its ids, verdict, nearest pages, dates) is held at
once; its body (facts, tables, receipts, the whole record) is what only its verification and
its own page read. A record unchanged since the last build can leave its body on disk until
one of them asks (`kept_records`): 10,000 records held about 900 MB.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from site_builder.model.schema import JsonValue, Scalar


class Receipt(BaseModel):
    """A pinned source: what it is, where it was fetched, its size and hash."""

    model_config = ConfigDict(frozen=True)

    name: str
    url: str
    bytes: int
    sha256: str
    extra: tuple[tuple[str, JsonValue], ...] = ()


class NearbyPage(BaseModel):
    """An existing page the overlap audit compares this guide with."""

    model_config = ConfigDict(frozen=True)

    url: str
    reader_job: str
    difference: str


@dataclass(frozen=True)
class RecordBody:
    """What a record's verification and its own page read of it."""

    decision: tuple[tuple[str, JsonValue], ...]
    boundary: tuple[tuple[str, JsonValue], ...]
    revisions: tuple[tuple[str, Scalar], ...]
    model_facts: tuple[tuple[str, JsonValue], ...]
    receipts: tuple[Receipt, ...]
    invariants: tuple[tuple[str, bool], ...]
    overlap_facts: tuple[tuple[str, JsonValue], ...]
    sections: tuple[tuple[str, JsonValue], ...]
    record: dict[str, JsonValue]
    """The whole record without its editorial sections: what the verification reads."""


class LaterBody:
    """A record's body, read from its file when first asked (see `kept_records`), and read
    again when asked after `release`."""

    def __init__(self, load: Callable[[], RecordBody], body: RecordBody | None = None) -> None:
        self._load = load
        self._body = body

    def get(self) -> RecordBody:
        """Return the body, reading it if it is not held."""
        if self._body is None:
            self._body = self._load()
        return self._body

    def release(self) -> None:
        """Let go of the body: the workers a build forks next read it from its file."""
        self._body = None

    @property
    def held(self) -> bool:
        """Whether the body is in memory."""
        return self._body is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LaterBody | RecordBody):
            mine = self.get()
            return mine == (other.get() if isinstance(other, LaterBody) else other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Evidence:
    """One audit record with its spelling variants resolved and its editorial parts removed.

    The one typed model of a record that every later stage reads, resolved by the record
    vocabulary (`evidence`); templates never see the raw keys or their spelling variants.
    """

    source: str
    operation_id: str
    checked_at: datetime
    status: str
    verdict: str
    nearby: tuple[NearbyPage, ...]
    nearby_note: str
    body: RecordBody | LaterBody
    decision_at: str = "decision"
    """The JSON path of the decision object, so its values carry their full paths."""
    boundary_at: tuple[str, ...] = ()
    """The JSON path of each `boundary` fact, in the same order."""
    overlap_at: str = ""
    """The JSON path of the overlap audit."""
    distinct_intent: bool | None = None
    """The overlap audit's claim that this guide's intent is distinct, if it makes one."""
    sitemap_count: int | None = None
    """The canonicals the live sitemap had when the record was checked, if counted."""
    runtime_counts: tuple[tuple[str, int], ...] = ()
    """The boundary's runtime counts by noun: (('GPU run', 0), ('model call', 0))."""
    pinned_release: str = ""
    """The release tag the audit pins, if its revisions name one."""
    digest: str = field(default="", compare=False)
    """The digest of `record`: of its file's bytes (`evidence.record_evidence`), or kept with
    its head (`kept_records`); "" when neither is known (`reuse.evidence_digest` makes it)."""

    def _body(self) -> RecordBody:
        body = self.body
        return body if isinstance(body, RecordBody) else body.get()

    @property
    def decision(self) -> tuple[tuple[str, JsonValue], ...]:
        return self._body().decision

    @property
    def boundary(self) -> tuple[tuple[str, JsonValue], ...]:
        return self._body().boundary

    @property
    def revisions(self) -> tuple[tuple[str, Scalar], ...]:
        return self._body().revisions

    @property
    def model_facts(self) -> tuple[tuple[str, JsonValue], ...]:
        return self._body().model_facts

    @property
    def receipts(self) -> tuple[Receipt, ...]:
        return self._body().receipts

    @property
    def invariants(self) -> tuple[tuple[str, bool], ...]:
        return self._body().invariants

    @property
    def overlap_facts(self) -> tuple[tuple[str, JsonValue], ...]:
        return self._body().overlap_facts

    @property
    def sections(self) -> tuple[tuple[str, JsonValue], ...]:
        return self._body().sections

    @property
    def record(self) -> dict[str, JsonValue]:
        return self._body().record
