"""Build the view of one guide page from a Guide: the parts with known meaning, then the rest.

Known parts (decision, evidence boundary, revisions, model, invariants, receipts, nearby
pages) each get one home on the page; every other record section is drawn by shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from site_builder.blocks import Block, KeyValue, Pair, build_block
from site_builder.cells import format_cell, is_scalar
from site_builder.claims import ClaimCheck, Verification
from site_builder.humanize import anchor_for, humanize_key, humanize_slug
from site_builder.models import Guide, Receipt, Site
from site_builder.schema import JsonValue, is_http_url
from site_builder.urls import canonical_url, page_key

_GPU_RUNS = re.compile(r"gpu.*runs?$", re.IGNORECASE)
_MODEL_CALLS = re.compile(r"model.*calls?$", re.IGNORECASE)


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
    verified: frozenset[str]
    """JSON paths of the derived values the build recomputed and found right."""


def guide_view(guide: Guide, site: Site, verification: Verification | None = None) -> GuideView:
    """Return the view of one guide: a pure function of the guide, its verification and the site."""
    evidence = guide.evidence
    checks = {check.path: check for check in verification.checks} if verification else {}
    return GuideView(
        guide=guide,
        verdict=humanize_slug(evidence.verdict),
        decision=tuple(
            DecisionItem(humanize_key(key), build_block(key, value, "decision"))
            for key, value in evidence.decision
        ),
        boundary=_boundary(evidence.boundary),
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
        receipts=tuple(_receipt(receipt) for receipt in evidence.receipts),
        nearby=tuple(
            _nearby(page.url, page.reader_job, page.difference, site) for page in evidence.nearby
        ),
        nearby_note=evidence.nearby_note,
        overlap_facts=(
            KeyValue("", "overlap-audit", _pairs(evidence.overlap_facts), ())
            if evidence.overlap_facts
            else None
        ),
        verified=frozenset(
            path
            for path, check in checks.items()
            if check.kind == "derived" and check.state == "verified"
        ),
    )


def _invariant(name: str, holds: bool, check: ClaimCheck | None) -> Invariant:
    """Return one checklist line: verified by the build, or only asserted by the audit."""
    if check is None or check.state == "unverifiable":
        reason = check.reason if check else ""
        return Invariant(humanize_key(name), name, holds, "asserted", reason)
    return Invariant(humanize_key(name), name, holds, check.state)


def _pairs(fields: tuple[tuple[str, JsonValue], ...], at: str = "") -> tuple[Pair, ...]:
    """Return fields as labelled cells (with their JSON paths under `at`, if given)."""
    return tuple(
        Pair(humanize_key(key), format_cell(value, key, f"{at}.{key}" if at else ""), False)
        for key, value in fields
    )


def _boundary(facts: tuple[tuple[str, JsonValue], ...]) -> BoundaryView | None:
    """Summarise the record's runtime boundary: 'Source audit: 0 GPU runs, 0 model calls'."""
    if not facts:
        return None
    counts = [
        (key, value)
        for key, value in facts
        if isinstance(value, int) and not isinstance(value, bool)
    ]
    gpu_runs = [value for key, value in counts if _GPU_RUNS.search(key)]
    model_calls = [value for key, value in counts if _MODEL_CALLS.search(key)]
    parts = []
    if gpu_runs:
        parts.append(_count(sum(gpu_runs), "GPU run"))
    if model_calls:
        parts.append(_count(sum(model_calls), "model call"))
    runtime = sum(gpu_runs) + sum(model_calls)
    kind = "Source audit" if parts and runtime == 0 else "Evidence boundary"
    summary = f"{kind}: {', '.join(parts)}" if parts else kind
    notes = tuple(value for _, value in facts if isinstance(value, str))
    pairs = tuple(
        Pair(humanize_key(key), format_cell(value, key), False)
        for key, value in facts
        if not isinstance(value, str) and is_scalar(value)
    )
    return BoundaryView(summary, notes, pairs)


def _count(number: int, noun: str) -> str:
    """Return '0 GPU runs', '1 model call'."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _receipt(receipt: Receipt) -> ReceiptView:
    """Return a receipt for the sources table."""
    return ReceiptView(
        name=receipt.name,
        url=receipt.url if is_http_url(receipt.url) else "",
        size=f"{receipt.bytes:,} bytes",
        sha256=receipt.sha256,
        extra=_pairs(receipt.extra),
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


def pinned_release(guide: Guide) -> str:
    """Return the release the audit pins (an audit tag, else the stable or release tag), or ''."""
    tags = [
        (key, value)
        for key, value in guide.evidence.revisions
        if isinstance(value, str) and re.fullmatch(r"v\d+(\.\d+)*\S*", value)
    ]
    for pattern in (r"audit", r"stable|release"):
        for key, value in tags:
            if re.search(pattern, key, re.IGNORECASE):
                return value
    return ""
