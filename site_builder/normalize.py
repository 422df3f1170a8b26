"""Validate raw inputs into typed models and resolve every spelling variant, in one place.

Records vary by operation: the decision is `decision` or `rolloutDecision`, receipts are
named by `label`, `id`, `role` or `name`, nearest pages come in three spellings. After this
module nothing downstream knows those spellings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from site_builder.errors import Problem
from site_builder.formula import FormulaError, parse
from site_builder.models import Doc, Evidence, Inputs, NearbyPage, Normalized, RawRecord, Receipt
from site_builder.schema import (
    Acknowledgement,
    AcknowledgementFile,
    FrontMatter,
    JsonValue,
    RecordCore,
    RegistryEntry,
    RegistryFile,
    RuleFile,
    SiteSettings,
)
from site_builder.urls import page_key

DECISION_KEYS = ("decision", "rolloutDecision")
RECORD_BOUNDARY_KEYS = ("runtimeBoundary", "boundaries", "scope")
EDITORIAL_KEYS = frozenset({"aiHot", "aiHotCandidate", "serp", "discovery"})
"""Provenance for the audit trail (request ids, costs, internal paths): never published."""
RECEIPT_NAME_KEYS = ("label", "id", "role", "name")
OVERLAP_KEY = "overlapAudit"
CORE_KEYS = frozenset(
    {
        "schemaVersion",
        "operationId",
        "checkedAt",
        "status",
        "revisions",
        "sourceReceipts",
        "model",
        "invariants",
        OVERLAP_KEY,
        *DECISION_KEYS,
        *RECORD_BOUNDARY_KEYS,
    }
)

Model = TypeVar("Model", bound=BaseModel)


def normalize(inputs: Inputs) -> Normalized:
    """Validate every input, keeping the valid ones and every problem for `assemble` to report."""
    problems = list(inputs.problems)
    settings = _validate(SiteSettings, inputs.settings.front, inputs.settings.source, "", problems)
    evidence = [item for item in (record_evidence(raw, problems) for raw in inputs.records) if item]
    docs = []
    for raw in inputs.docs:
        front = _validate(FrontMatter, raw.front, raw.source, "front matter.", problems)
        if front is not None:
            docs.append(Doc(raw.source, front, raw.body))
    registry = _registry(inputs, settings, problems)
    rules = _rules(inputs, problems)
    acknowledged = _acknowledged(inputs, problems)
    valid = {item.source for item in evidence}
    invalid_ids = inputs.unreadable_ids | frozenset(
        raw.data["operationId"]
        for raw in inputs.records
        if raw.source not in valid and isinstance(raw.data.get("operationId"), str)
    )
    return Normalized(
        evidence=tuple(evidence),
        docs=tuple(docs),
        settings=settings,
        assets=inputs.assets,
        registry=registry,
        rules=rules,
        static=inputs.static,
        acknowledged=acknowledged,
        problems=tuple(problems),
        invalid_ids=invalid_ids,
    )


def _acknowledged(inputs: Inputs, problems: list[Problem]) -> tuple[Acknowledgement, ...]:
    """Validate the site's baseline of accepted warnings."""
    if inputs.acknowledged is None:
        return ()
    raw = inputs.acknowledged
    baseline = _validate(AcknowledgementFile, raw.front, raw.source, "", problems)
    return baseline.acknowledged if baseline is not None else ()


def _rules(inputs: Inputs, problems: list[Problem]) -> RuleFile:
    """Validate the verification rules and parse every formula once, up front."""
    if inputs.rules is None:
        return RuleFile()
    source = inputs.rules.source
    rules = _validate(RuleFile, inputs.rules.front, source, "", problems)
    if rules is None:
        return RuleFile()
    for kind, items in (("derived", rules.derived), ("invariants", rules.invariants)):
        for index, rule in enumerate(items):
            try:
                parse(rule.formula)
            except FormulaError as error:
                problems.append(Problem(source, f"{kind}.{index}.formula", str(error)))
    return rules


def _registry(
    inputs: Inputs, settings: SiteSettings | None, problems: list[Problem]
) -> tuple[RegistryEntry, ...]:
    """Validate the sitemap registry; every URL must be a page of this site."""
    if inputs.registry is None:
        return ()
    source = inputs.registry.source
    registry = _validate(RegistryFile, inputs.registry.data, source, "", problems)
    if registry is None:
        return ()
    if settings is not None:
        for index, entry in enumerate(registry.pages):
            if page_key(entry.url, settings.base_url) is None:
                message = f"'{entry.url}' is not a page of {settings.base_url}"
                problems.append(Problem(source, f"pages.{index}.url", message))
    return registry.pages


def _validate(
    model: type[Model], data: Mapping[str, Any], source: str, prefix: str, problems: list[Problem]
) -> Model | None:
    """Validate `data` against `model`; on failure add one problem per pydantic error."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        for item in error.errors(include_url=False):
            location = ".".join(str(part) for part in item["loc"]) or "<root>"
            problems.append(Problem(source, prefix + location, item["msg"]))
        return None


def record_evidence(raw: RawRecord, problems: list[Problem]) -> Evidence | None:
    """Turn one raw record into Evidence, or add its problems and return None."""
    before = len(problems)
    raw = RawRecord(raw.source, _without_editorial(raw.data))
    core = _validate(RecordCore, raw.data, raw.source, "", problems)
    decision = _decision(raw, problems)
    overlap = raw.data.get(OVERLAP_KEY, {})
    if not isinstance(overlap, dict):
        problems.append(Problem(raw.source, OVERLAP_KEY, "must be an object"))
        overlap = {}
    nearby, note, overlap_facts = _nearby(raw.source, overlap, problems)
    if core is None or decision is None or len(problems) > before:
        return None
    verdict, details = decision
    return Evidence(
        source=raw.source,
        operation_id=core.operation_id,
        checked_at=core.checked_at,
        status=core.status,
        verdict=verdict,
        decision=details,
        boundary=_record_boundary(raw.data),
        revisions=tuple(core.revisions.items()),
        model_facts=tuple(core.model_facts.items()),
        receipts=tuple(_receipt(receipt.model_dump()) for receipt in core.source_receipts),
        invariants=tuple(core.invariants.items()),
        nearby=nearby,
        nearby_note=note,
        overlap_facts=overlap_facts,
        sections=tuple((key, value) for key, value in raw.data.items() if key not in CORE_KEYS),
        record=raw.data,
    )


def _without_editorial(value: Any) -> Any:
    """Return a JSON value with editorial keys removed at every depth, never to be published."""
    if isinstance(value, dict):
        return {k: _without_editorial(v) for k, v in value.items() if k not in EDITORIAL_KEYS}
    if isinstance(value, list):
        return [_without_editorial(item) for item in value]
    return value


def _decision(
    raw: RawRecord, problems: list[Problem]
) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    """Return (classification, other fields) of the record's decision object."""
    present = [key for key in DECISION_KEYS if key in raw.data]
    if len(present) != 1:
        message = "needs exactly one of 'decision' or 'rolloutDecision'"
        problems.append(Problem(raw.source, "decision", message))
        return None
    key = present[0]
    decision = raw.data[key]
    if not isinstance(decision, dict):
        problems.append(Problem(raw.source, key, "must be an object"))
        return None
    classification = decision.get("classification")
    if not isinstance(classification, str) or not classification.strip():
        problems.append(
            Problem(raw.source, f"{key}.classification", "a non-empty string is required")
        )
        return None
    details = tuple((name, value) for name, value in decision.items() if name != "classification")
    return classification, details


def _record_boundary(data: Mapping[str, JsonValue]) -> tuple[tuple[str, JsonValue], ...]:
    """Merge the whole-record boundary objects into one list of facts, in record order."""
    facts: list[tuple[str, JsonValue]] = []
    for key in RECORD_BOUNDARY_KEYS:
        value = data.get(key)
        if isinstance(value, dict):
            facts.extend(value.items())
        elif value is not None:
            facts.append((key, value))
    return tuple(facts)


def _receipt(fields: dict[str, Any]) -> Receipt:
    """Build a Receipt, taking its name from whichever name key the record uses."""
    name_key = next((key for key in RECEIPT_NAME_KEYS if isinstance(fields.get(key), str)), None)
    name = fields[name_key] if name_key else fields["url"]
    extra = tuple(
        (key, value)
        for key, value in fields.items()
        if key not in {"url", "bytes", "sha256", name_key}
    )
    return Receipt(
        name=name, url=fields["url"], bytes=fields["bytes"], sha256=fields["sha256"], extra=extra
    )


def _nearby(
    source: str, overlap: Mapping[str, Any], problems: list[Problem]
) -> tuple[tuple[NearbyPage, ...], str, tuple[tuple[str, Any], ...]]:
    """Return the nearest pages, a note shared by all of them, and the other overlap facts."""
    pages: list[NearbyPage] = []
    used = {
        "nearestPages",
        "closestPages",
        "distinction",
        "nearestPage",
        "nearestPageIntent",
        "newPageIntent",
    }
    for index, item in enumerate(_list(overlap.get("nearestPages"))):
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            problems.append(
                Problem(source, f"{OVERLAP_KEY}.nearestPages.{index}", "needs a 'url' string")
            )
            continue
        pages.append(
            NearbyPage(
                url=item["url"],
                reader_job=_text(item.get("readerJob")),
                difference=_text(item.get("difference")),
            )
        )
    for index, url in enumerate(_list(overlap.get("closestPages"))):
        if not isinstance(url, str):
            problems.append(
                Problem(source, f"{OVERLAP_KEY}.closestPages.{index}", "must be a URL string")
            )
            continue
        pages.append(NearbyPage(url=url, reader_job="", difference=""))
    if isinstance(overlap.get("nearestPage"), str):
        pages.append(
            NearbyPage(
                url=overlap["nearestPage"],
                reader_job=_text(overlap.get("nearestPageIntent")),
                difference=_text(overlap.get("newPageIntent")),
            )
        )
    note = _text(overlap.get("distinction"))
    facts = tuple((key, value) for key, value in overlap.items() if key not in used)
    return tuple(pages), note, facts


def _list(value: Any) -> Sequence[Any]:
    """Return `value` if it is a list, else an empty list."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    """Return `value` if it is a string, else an empty string."""
    return value if isinstance(value, str) else ""
