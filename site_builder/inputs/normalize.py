"""Validate raw inputs into typed models: settings, vocabulary, records, prose, registry, rules.

Every problem is collected with its file and field; `assemble` reports them all at once.
Records are resolved by the record vocabulary (`evidence`), validated first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from site_builder.cache.store import BuildCache
from site_builder.errors import Problem
from site_builder.inputs.evidence import record_evidence
from site_builder.inputs.load import RecordFiles
from site_builder.model.formula import FormulaError, parse
from site_builder.model.images import inspect_image
from site_builder.model.models import Doc, Normalized
from site_builder.model.raw import Inputs, RawDoc, RawRecord, UnreadRecord
from site_builder.model.record_model import Evidence
from site_builder.model.schema import (
    Acknowledgement,
    AcknowledgementFile,
    FrontMatter,
    RegistryEntry,
    RegistryFile,
    RuleFile,
    SiteSettings,
)
from site_builder.model.vocabulary import Vocabulary
from site_builder.runtime.workers import run_each
from site_builder.urls import page_key

Model = TypeVar("Model", bound=BaseModel)
T = TypeVar("T")


def normalize(
    inputs: Inputs,
    cache: BuildCache | None = None,
    kept: Callable[[Vocabulary], list[Evidence]] | None = None,
    hold: Callable[[Evidence, Vocabulary], Evidence] | None = None,
    spread: Callable[[Evidence], Evidence] | None = None,
    jobs: int = 1,
) -> Normalized:
    """Validate every input, keeping the valid ones and every problem for `assemble` to report;
    a `cache` in memory (the preview's) validates only records and front matter that changed.
    `kept` gives the Evidence of the records that were valid and have not changed since
    (`kept_records`), which were not read; `hold` decides what of each record read is kept
    (`KeptHeads.hold`), as it is read, so the raw records are never all in memory at once.
    With `spread` the records are read and validated over `jobs` processes, and `spread`
    makes each valid one ready to come back (`KeptHeads.sent`: without its body)."""
    problems = list(inputs.problems)
    settings = _validate(SiteSettings, inputs.settings.front, inputs.settings.source, "", problems)
    # The same object while the file is unchanged: its spelling remembers the headings it made.
    raw_words = inputs.vocabulary
    check_words = partial(vocabulary_of, raw_words)
    vocabulary = _once(cache, ("vocabulary",), raw_words and raw_words.front, problems, check_words)
    validated = _validated(inputs, vocabulary, cache, spread, jobs)
    evidence, read, invalid_ids = _records(validated, vocabulary, problems, hold)
    if kept is not None and vocabulary is not None:
        evidence += (item for item in kept(vocabulary) if item.source not in read)
        evidence.sort(key=lambda item: item.source)
    docs = []
    for raw in inputs.docs:
        check = partial(_validate, FrontMatter, raw.front, raw.source, "front matter.")
        front = _once(cache, ("front", raw.source), raw.front, problems, check)
        if front is not None:
            docs.append(Doc(raw.source, front, raw.body, raw.body_line))
    registry = _registry(inputs, settings, problems)
    rules = _rules(inputs, problems)
    acknowledged = _acknowledged(inputs, problems)
    return Normalized(
        evidence=tuple(evidence),
        docs=tuple(docs),
        settings=settings,
        assets=inputs.assets,
        registry=registry,
        rules=rules,
        static=inputs.static,
        acknowledged=acknowledged,
        vocabulary=vocabulary,
        images=tuple(inspect_image(raw) for raw in inputs.images),
        problems=tuple(problems),
        invalid_ids=invalid_ids,
    )


class Refused(NamedTuple):
    """A record read but not valid: its problems, and its operationId if it names one."""

    source: str
    problems: tuple[Problem, ...]
    operation_id: str | None


Outcome = UnreadRecord | Refused | Evidence
"""What reading and validating one record gave."""
SPREAD_FROM = 16
"""Below this many record files, validating them in other processes costs more than it saves."""


def _validated(
    inputs: Inputs,
    vocabulary: Vocabulary | None,
    cache: BuildCache | None,
    spread: Callable[[Evidence], Evidence] | None,
    jobs: int,
) -> Iterable[Outcome]:
    """Return what reading and validating each record gave, in order: as they are iterated
    here, or with `spread` (a big site's build) read and validated over `jobs` forked
    processes, each valid one made ready by `spread` to come back."""
    files = inputs.records
    few = not isinstance(files, RecordFiles) or len(files) < SPREAD_FROM
    if spread is None or vocabulary is None or jobs <= 1 or few:
        words = vocabulary.model_dump_json() if cache is not None and vocabulary else ""
        return (_outcome(record, vocabulary, cache, words) for record in files)

    def validated(index: int) -> Outcome | None:
        record = files.read(index)
        if record is None:
            return None
        outcome = _outcome(record, vocabulary, None, "")
        return spread(outcome) if isinstance(outcome, Evidence) else outcome

    return (outcome for outcome in run_each(validated, len(files), jobs) if outcome is not None)


def _outcome(
    record: RawRecord | UnreadRecord,
    vocabulary: Vocabulary | None,
    cache: BuildCache | None,
    words: str,
) -> Outcome:
    """Validate one record read (the preview's `cache` validates it once while it and the
    vocabulary, `words`, are the same)."""
    if isinstance(record, UnreadRecord):
        return record
    operation_id = record.data.get("operationId")
    refused = Refused(record.source, (), operation_id if isinstance(operation_id, str) else None)
    if vocabulary is None:
        return refused
    found: list[Problem] = []
    validate = partial(record_evidence, record, vocabulary)
    item = _once(cache, ("evidence", record.source, words), record.data, found, validate)
    return item if item is not None else refused._replace(problems=tuple(found))


def _records(
    outcomes: Iterable[Outcome],
    vocabulary: Vocabulary | None,
    problems: list[Problem],
    hold: Callable[[Evidence, Vocabulary], Evidence] | None,
) -> tuple[list[Evidence], set[str], frozenset[str]]:
    """Take each record's outcome as it comes; return the valid ones (as `hold` keeps them),
    the sources read, and the operationIds of the records that are not valid. A problem
    reading a record goes before every other problem, as it was met first."""
    evidence: list[Evidence] = []
    read: set[str] = set()
    invalid_ids: set[str] = set()
    read_problems: list[Problem] = []
    for outcome in outcomes:
        if isinstance(outcome, UnreadRecord):
            read_problems.append(outcome.problem)
            invalid_ids.update([outcome.operation_id] if outcome.operation_id else [])
            continue
        read.add(outcome.source)
        if isinstance(outcome, Refused):
            problems.extend(outcome.problems)
            invalid_ids.update([outcome.operation_id] if outcome.operation_id else [])
        elif vocabulary is not None:
            evidence.append(hold(outcome, vocabulary) if hold is not None else outcome)
    problems[:0] = read_problems
    return evidence, read, frozenset(invalid_ids)


def _once(
    cache: BuildCache | None,
    key: tuple[str, ...],
    data: object,
    problems: list[Problem],
    validate: Callable[[list[Problem]], T],
) -> T:
    """Validate `data` once while it is the same object: the cache's decoding hands out the
    same object for unchanged bytes, so the result and its problems are reused. The memo
    keeps `data` alive, so its identity cannot pass to another object meanwhile."""
    if cache is None:
        return validate(problems)

    def fresh() -> tuple[object, T, list[Problem]]:
        found: list[Problem] = []
        return data, validate(found), found

    _, result, found = cache.reused((*key, id(data)), fresh)
    problems.extend(found)
    return result


def vocabulary_of(raw: RawDoc | None, problems: list[Problem]) -> Vocabulary | None:
    """Validate the record vocabulary (its absence is already a problem of loading)."""
    if raw is None:
        return None
    return _validate(Vocabulary, raw.front, raw.source, "", problems)


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
