"""Build the view of one guide page from a Guide: the parts with known meaning, then the rest.

Known parts (decision, evidence boundary, revisions, model, invariants, receipts, nearby
pages) each get one home on the page; every other record section is drawn by shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from site_builder.model.claims import ClaimCheck, Verification
from site_builder.model.humanize import anchor_for, humanize_key, humanize_slug
from site_builder.model.models import Guide, Site
from site_builder.model.record_model import Evidence, Receipt
from site_builder.model.schema import JsonValue, is_http_url
from site_builder.present.blocks import Block, KeyValue, Pair, build_block
from site_builder.present.cells import format_cell, is_scalar
from site_builder.urls import canonical_url, page_key


@dataclass(frozen=True)
class DecisionItem:
    """One field of the decision box beside the verdict."""

    label: str
    block: Block


@dataclass(frozen=True)
class BoundaryView:
    """The whole-record evidence boundary: a one-line summary, notes and facts."""

    summary: str
    notes: tuple[str, ...]
    pairs: tuple[Pair, ...]


@dataclass(frozen=True)
class Invariant:
    """One invariant as a checklist line, with what the build could say about it."""

    label: str
    name: str
    holds: bool
    state: str
    """verified (decided by the build) | asserted (by the audit only) | contradicted"""
    reason: str = ""


@dataclass(frozen=True)
class ReceiptView:
    """One source with its link, size and hash."""

    name: str
    url: str
    size: str
    sha256: str
    extra: tuple[Pair, ...]


@dataclass(frozen=True)
class NearbyView:
    """A nearby page: where it is, what its reader does there, how this guide differs."""

    href: str
    label: str
    reader_job: str
    difference: str


@dataclass(frozen=True)
class Section:
    """A record section drawn by shape, with its heading and anchor."""

    title: str
    anchor: str
    block: Block


@dataclass(frozen=True)
class GuideView:
    """Everything the guide template draws, top to bottom."""

    guide: Guide
    verdict: str
    decision: tuple[DecisionItem, ...]
    boundary: BoundaryView | None
    sections: tuple[Section, ...]
    invariants: tuple[Invariant, ...]
    revisions: KeyValue
    model_facts: Block
    receipts: tuple[ReceiptView, ...]
    nearby: tuple[NearbyView, ...]
    nearby_note: str
    overlap_facts: KeyValue | None
    verified: dict[str, str]
    """JSON path of each derived value the build recomputed and found right -> the title of its
    mark, naming the formula ("Recomputed by the build (inferred): a - b")."""


def guide_view(guide: Guide, site: Site, verification: Verification | None = None) -> GuideView:
    """Return the view of one guide: a pure function of the guide, its verification and the site."""
    evidence = guide.evidence
    checks = {check.path: check for check in verification.checks} if verification else {}
    return GuideView(
        guide=guide,
        verdict=humanize_slug(evidence.verdict),
        decision=tuple(
            DecisionItem(
                humanize_key(key),
                build_block(key, value, "decision", at=f"{evidence.decision_at}.{key}"),
            )
            for key, value in evidence.decision
        ),
        boundary=_boundary(evidence),
        sections=tuple(
            Section(humanize_key(key), anchor_for(key), build_block(key, value))
            for key, value in evidence.sections
        ),
        invariants=tuple(
            _invariant(name, holds, checks.get(f"invariants.{name}"))
            for name, holds in evidence.invariants
        ),
        revisions=KeyValue("", "revisions", _pairs(evidence.revisions, "revisions"), ()),
        model_facts=build_block("model", dict(evidence.model_facts)),
        receipts=tuple(
            _receipt(receipt, f"sourceReceipts.{index}")
            for index, receipt in enumerate(evidence.receipts)
        ),
        nearby=tuple(
            _nearby(page.url, page.reader_job, page.difference, site) for page in evidence.nearby
        ),
        nearby_note=evidence.nearby_note,
        overlap_facts=(
            KeyValue("", "overlap-audit", _pairs(evidence.overlap_facts, evidence.overlap_at), ())
            if evidence.overlap_facts
            else None
        ),
        verified={
            path: f"Recomputed by the build{' (inferred)' if check.inferred else ''}: {check.formula}"
            if check.formula
            else "Recomputed by the build from the record's own inputs"
            for path, check in checks.items()
            if check.kind == "derived" and check.state == "verified"
        },
    )


def _invariant(name: str, holds: bool, check: ClaimCheck | None) -> Invariant:
    """Return one checklist line: verified by the build (the reason is its rule), contradicted
    by the record's data (what the build computes), or only asserted by the audit (why)."""
    label = humanize_key(name)
    if check is not None and check.state == "verified":
        return Invariant(label, name, holds, "verified", check.formula)
    if check is not None and check.state == "contradicted":
        return Invariant(label, name, holds, "contradicted", f"the build computes {check.expected}")
    return Invariant(label, name, holds, "asserted", check.reason if check else "")


def _pairs(fields: tuple[tuple[str, JsonValue], ...], at: str = "") -> tuple[Pair, ...]:
    """Return fields as labelled cells (with their JSON paths under `at`, if given)."""
    return tuple(
        Pair(humanize_key(key), format_cell(value, key, f"{at}.{key}" if at else ""), False)
        for key, value in fields
    )


def _boundary(evidence: Evidence) -> BoundaryView | None:
    """Summarise the record's runtime boundary: 'Source audit: 0 GPU runs, 0 model calls'."""
    facts, paths = evidence.boundary, evidence.boundary_at
    if not facts:
        return None
    parts = [_count(number, noun) for noun, number in evidence.runtime_counts]
    runtime = sum(number for _, number in evidence.runtime_counts)
    kind = "Source audit" if parts and runtime == 0 else "Evidence boundary"
    summary = f"{kind}: {', '.join(parts)}" if parts else kind
    notes = tuple(value for _, value in facts if isinstance(value, str))
    pairs = tuple(
        Pair(humanize_key(key), format_cell(value, key, at), False)
        for (key, value), at in zip(facts, paths or [""] * len(facts), strict=True)
        if not isinstance(value, str) and is_scalar(value)
    )
    return BoundaryView(summary, notes, pairs)


def _count(number: int, noun: str) -> str:
    """Return '0 GPU runs', '1 model call'."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _receipt(receipt: Receipt, at: str) -> ReceiptView:
    """Return a receipt for the sources table."""
    return ReceiptView(
        name=receipt.name,
        url=receipt.url if is_http_url(receipt.url) else "",
        size=f"{receipt.bytes:,} bytes",
        sha256=receipt.sha256,
        extra=_pairs(receipt.extra, at),
    )


def _nearby(url: str, reader_job: str, difference: str, site: Site) -> NearbyView:
    """Resolve a nearby page: site-relative when built here, absolute canonical otherwise."""
    key = page_key(url, site.settings.base_url)
    if key is None:
        href = url if is_http_url(url) else ""
        return NearbyView(href, url, reader_job, difference)
    guide = site.by_url.get(key)
    if guide is not None:
        return NearbyView(key, guide.title, reader_job or guide.reader_job, difference)
    entry = site.registry_by_key.get(key)
    label = entry.title if entry and entry.title else key
    job = reader_job or (entry.reader_job if entry else "")
    return NearbyView(canonical_url(key, site.settings.base_url), label, job, difference)
