"""Verify each record's own claims: receipts, revisions, derived numbers and invariants.

Receipts and revisions are checked built in, derived numbers and invariants by the rules in
content/rules.yaml (safe formula evaluator): a pure function of one record and the rules. A
derived number no rule covers is checked against a formula inferred from its neighbours (infer.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from fnmatch import fnmatchcase
from functools import lru_cache, partial
from itertools import pairwise
from typing import Any

from site_builder.cache.reuse import verification_key, verify_digest
from site_builder.cache.store import BuildCache
from site_builder.model.claims import ClaimCheck, Verification, agrees, rounded
from site_builder.model.formula import FormulaError, evaluate
from site_builder.model.models import Evidence, Page, Site
from site_builder.model.schema import DerivedRule, RuleFile, is_http_url
from site_builder.model.vocabulary import in_use
from site_builder.runtime.lending import lent
from site_builder.runtime.workers import run_each
from site_builder.verify.infer import NO_RULE, Node, infer
from site_builder.verify.kept_verifications import (
    Deferred,
    kept_or_deferred,
    kept_or_verified,
    received,
)
from site_builder.verify.measurements import uncaveated_measurements

_HEX = re.compile(r"^[0-9a-f]+$")
_COMMIT_KEY = re.compile(r"(commit|revision|head|sha)$", re.IGNORECASE)
_TAG = re.compile(r"^v?\d+(\.\d+){1,3}([.+-]?[0-9A-Za-z][0-9A-Za-z.-]*)?$")
_TIME_KEY = re.compile(r"[a-z](At|LastModified)$")


def verify_site(
    site: Site, jobs: int = 1, cache: BuildCache | None = None, *, hold: bool = False
) -> dict[str, Verification]:
    """Verify every guide's record (over `jobs` processes, or from `cache`); by operationId.
    A verification made now keeps its every check in memory if `hold`, else only what the
    checks and the report show (`kept_or_verified`)."""
    guides, rules = site.guides, site.rules
    tasks = [partial(verify, guide.evidence, rules) for guide in guides]
    if cache is None:
        checked = run_each(lambda index: tasks[index](), len(tasks), jobs)
        keys = [""] * len(guides)
    else:
        keys = _keys(site, cache)
        checked = kept_or_verified(cache, keys, tasks, jobs, hold=hold)
    return {
        guide.evidence.operation_id: replace(done, stored_as=key) if key else done
        for guide, done, key in zip(guides, checked, keys, strict=True)
    }


def kept_or_deferred_site(
    site: Site, cache: BuildCache
) -> tuple[dict[str, Verification], dict[str, Deferred]]:
    """Return the verifications `cache` has, by operationId, and the others `Deferred`: each
    record is verified by the worker rendering its page (`render.pages.guide_pages`), which
    reads it once; `settle_deferred` then has them all."""
    rules, keys = site.rules, _keys(site, cache)
    tasks = [partial(verify, guide.evidence, rules) for guide in site.guides]
    verifications: dict[str, Verification] = {}
    deferred: dict[str, Deferred] = {}
    for guide, done, key in zip(
        site.guides, kept_or_deferred(cache, keys, tasks), keys, strict=True
    ):
        if isinstance(done, Deferred):
            deferred[guide.evidence.operation_id] = done
        else:
            verifications[guide.evidence.operation_id] = replace(done, stored_as=key)
    return verifications, deferred


def _keys(site: Site, cache: BuildCache) -> list[str]:
    """Return the cache key of each guide's verification."""
    context = verify_digest(site)
    return [verification_key(guide, context, cache) for guide in site.guides]


def settle_deferred(
    site: Site,
    pages: Sequence[Page],
    verifications: Mapping[str, Verification],
    deferred: Mapping[str, Deferred],
    cache: BuildCache,
    jobs: int,
) -> tuple[list[Page], dict[str, Verification]]:
    """Return the pages without the verifications they carry, and every guide's verification
    (in the site's order, as `verify_site` returns them): each deferred one as the worker
    that rendered its guide's page sent it back with the page, or (that page came from the
    cache) verified now."""
    name_of = {guide.evidence.source: guide.evidence.operation_id for guide in site.guides}
    made: dict[str, Verification] = {}
    settled: list[Page] = []
    for page in pages:
        if page.verified is not None:
            verification = received(cache, page.verified, lambda s: deferred[name_of[s]])
            made[name_of[verification.source]] = verification
            page = replace(page, verified=None)
        settled.append(page)
    left = [name for name in deferred if name not in made]
    if left:  # their pages came from the cache
        keys = [deferred[name].key for name in left]
        tasks = [deferred[name].task for name in left]
        done = kept_or_verified(cache, keys, tasks, jobs)
        for name, key, verification in zip(left, keys, done, strict=True):
            made[name] = replace(verification, stored_as=key)
    every = {**verifications, **made}
    return settled, {
        guide.evidence.operation_id: every[guide.evidence.operation_id] for guide in site.guides
    }


def verify(evidence: Evidence, rules: RuleFile) -> Verification:
    """Return every claim check of one record (letting go of its body after, if read for it)."""
    with lent(evidence.body):
        record = evidence.record
        nodes = _walk(record)
        checks = [*_receipts(record), *_revisions(record, nodes), *_derived(nodes, rules)]
        checks += _invariants(evidence, rules)
        warnings = [*_duplicate_receipts(record), *uncaveated_measurements(record)]
    return Verification(evidence.source, tuple(checks), tuple(warnings))


def _walk(value: Any) -> list[Node]:
    """Return every field of every object, in document order, with its path, enclosing
    objects and sibling rows."""
    nodes: list[Node] = []
    _collect(value, "", (), None, nodes)
    return nodes


def _collect(
    value: Any,
    path: str,
    parents: tuple[Mapping[str, Any], ...],
    rows: list[Any] | None,
    nodes: list[Node],
) -> None:
    """Append the fields under `value` to `nodes` (records are decoded JSON: dicts, lists)."""
    if isinstance(value, dict):
        scopes = (value, *parents)
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            nodes.append((child_path, key, child, scopes, rows or []))
            if isinstance(child, dict | list):
                _collect(child, child_path, scopes, None, nodes)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            if isinstance(child, dict | list):
                _collect(child, f"{path}.{index}", parents, value, nodes)


def _check(
    path: str, kind: str, ok: bool, expected: str, found: Any, formula: str = ""
) -> ClaimCheck:
    """Return a verified or contradicted check (with the rule's formula, if one decided it)."""
    if ok:
        return ClaimCheck(path, kind, "verified", formula=formula)
    return ClaimCheck(path, kind, "contradicted", expected, _show(found), formula=formula)


def _show(value: Any) -> str:
    """Return a value as the report shows it."""
    return (
        repr(value)
        if isinstance(value, str)
        else str(value).lower()
        if isinstance(value, bool)
        else str(value)
    )


def _receipts(record: Mapping[str, Any]) -> Iterator[ClaimCheck]:
    """Every receipt has an http(s) URL, a 64-hex sha256 and a positive size."""
    for index, receipt in enumerate(record.get("sourceReceipts", [])):
        path = f"sourceReceipts.{index}"
        url, sha, size = receipt.get("url"), receipt.get("sha256"), receipt.get("bytes")
        yield _check(
            f"{path}.url",
            "receipt",
            isinstance(url, str) and is_http_url(url),
            "an http(s) URL",
            url,
        )
        ok = isinstance(sha, str) and len(sha) == 64 and bool(_HEX.match(sha))
        yield _check(f"{path}.sha256", "receipt", ok, "64 lower-case hex digits", sha)
        ok = isinstance(size, int) and not isinstance(size, bool) and size > 0
        yield _check(f"{path}.bytes", "receipt", ok, "a positive byte count", size)
    seen: dict[str, tuple[int, str]] = {}
    for index, receipt in enumerate(record.get("sourceReceipts", [])):
        url, sha = receipt.get("url"), receipt.get("sha256")
        first = seen.setdefault(url, (index, sha))
        if first[0] != index and first[1] != sha:
            expected = f"the sha256 of sourceReceipts.{first[0]} ({first[1]}) for the same URL"
            yield _check(f"sourceReceipts.{index}.sha256", "receipt", False, expected, sha)


def _duplicate_receipts(record: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The same URL listed twice with the same hash is a warning: a duplicate receipt."""
    seen: dict[str, tuple[int, str]] = {}
    for index, receipt in enumerate(record.get("sourceReceipts", [])):
        first = seen.setdefault(receipt.get("url"), (index, receipt.get("sha256")))
        if first[0] != index and first[1] == receipt.get("sha256"):
            yield (
                f"sourceReceipts.{index}",
                f"repeats sourceReceipts.{first[0]} ({receipt.get('url')}); remove one",
            )


def _revisions(record: Mapping[str, Any], nodes: list[Node]) -> Iterator[ClaimCheck]:
    """Commits are 40-hex, tags look like tags, times are ISO with a zone and releases in order."""
    for path, key, value, _, _ in nodes:
        if not isinstance(value, str):
            continue
        if _COMMIT_KEY.search(key) and " " not in value:
            ok = len(value) == 40 and bool(_HEX.match(value))
            yield _check(path, "revision", ok, "a 40-hex commit", value)
        elif (key == "tag" or (path.startswith("revisions.") and key.endswith("Tag"))) and value:
            yield _check(
                path, "revision", bool(_TAG.match(value)), "a release tag like v1.2.3", value
            )
        elif _TIME_KEY.search(key):
            yield _check(path, "revision", _is_time(value), "an ISO 8601 time with a zone", value)
    yield from _release_order(record)


def _is_time(value: str) -> bool:
    """Return whether a string is an ISO 8601 time with a zone."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None
    except ValueError:
        return False


def _release_order(record: Mapping[str, Any]) -> Iterator[ClaimCheck]:
    """In a table of releases (rows with tag and publishedAt), dates ascend with the versions."""
    for key, rows in record.items():
        if not isinstance(rows, list):
            continue
        releases = [
            (index, row)
            for index, row in enumerate(rows)
            if isinstance(row, dict)
            and _TAG.match(str(row.get("tag", "")))
            and _is_time(str(row.get("publishedAt", "")))
        ]
        for (_, earlier), (index, later) in pairwise(releases):
            newer = _version(str(later["tag"])) > _version(str(earlier["tag"]))
            ok = newer == (_parse_time(later["publishedAt"]) > _parse_time(earlier["publishedAt"]))
            expected = (
                f"published after {earlier['tag']} ({earlier['publishedAt']})"
                if newer
                else "published before"
            )
            yield _check(
                f"{key}.{index}.publishedAt", "revision", ok, expected, later["publishedAt"]
            )


def _version(tag: str) -> tuple[int, ...]:
    """Return a tag as a comparable tuple: v0.5.18 -> (0, 5, 18, 0, 1, 0); an rc sorts first."""
    match = re.match(r"^v?(\d+(?:\.\d+){0,3})(.*)$", tag)
    if match is None:
        return ()
    numbers = [int(part) for part in match.group(1).split(".")]
    numbers += [0] * (4 - len(numbers))
    suffix = match.group(2)
    pre = re.search(r"(a|b|rc|dev)(\d*)", suffix)
    stage = (0, int(pre.group(2) or 0)) if pre else (1, 0)
    return (*numbers, *stage)


def _parse_time(value: str) -> datetime:
    """Parse an ISO 8601 time with a zone."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _derived(nodes: list[Node], rules: RuleFile) -> Iterator[ClaimCheck]:
    """Recompute every field a rule covers; check other derived numbers by inferred formulas."""
    by_last_key: dict[str, list[DerivedRule]] = {}
    wildcard: list[tuple[DerivedRule, list[str]]] = []  # with the keys they spell out
    cache: dict[Any, Any] = {}  # sums of the record's lists, shared by its inferences
    found: dict[tuple[str, tuple[str, ...]], DerivedRule | None] = {}  # rows share keys
    for rule in rules.derived:
        parts = rule.field.split(".")
        if _is_pattern(parts[-1]):
            wildcard.append((rule, [part for part in parts if not _is_pattern(part)]))
        else:
            by_last_key.setdefault(parts[-1], []).append(rule)
    # A path holding none of the wildcard rules' spelled-out keys is fitted by none of them.
    spelled = _any_of(tuple(keys[-1] if keys else "" for _, keys in wildcard))
    for node in nodes:
        path, key, value, scopes, rows = node
        candidates = by_last_key.get(key)
        if spelled is not None and spelled.search(path):  # whose every spelled-out key is in it
            fitting = [rule for rule, keys in wildcard if all(k in path for k in keys)]
            candidates = [*(candidates or ()), *fitting] if fitting else candidates
        rule = _rule_for(path, candidates, found, key) if candidates else None
        if rule is None:
            if not isinstance(value, int | float):  # only numbers are derived (`_derived_name`)
                continue
            name = _derived_name(path, key, value)
            if isinstance(value, bool) and name:
                reason = f"{NO_RULE} (formulas are inferred for numbers only)"
                yield ClaimCheck(path, "derived", "unverifiable", reason=reason)
            elif name:
                yield infer(node, name, cache)
            continue
        try:
            expected = evaluate(rule.formula, scopes, {"key": key, "siblings": rows})
        except FormulaError as error:
            # A rule written for another record's field of the same name: infer instead.
            reason = f"inputs missing: {error}"
            name = _derived_name(path, key, value)
            if name and not isinstance(value, bool):
                check = infer(node, name, cache)
                yield check._replace(
                    reason=f"the rule for {rule.field} has {reason}; {check.reason}"
                )
            else:
                yield ClaimCheck(path, "derived", "unverifiable", reason=reason)
            continue
        if agrees(expected, value, rule.tolerance):
            yield ClaimCheck(path, "derived", "verified", formula=rule.formula)
        else:
            shown = f"{_show(rounded(expected, value))} = {rule.formula}"
            yield ClaimCheck(path, "derived", "contradicted", shown, _show(value), "", rule.formula)


def _derived_name(path: str, key: str, value: Any) -> str:
    """Return what a derived field is called, or '' for other fields: a key with a derived
    prefix (`calculatedX`), or the path to a number in an object so named (`derived.x`)."""
    vocabulary = in_use()
    if vocabulary is None or not isinstance(value, int | float):
        return ""
    if vocabulary.is_derived_key(key):
        return key
    prefixes = vocabulary.derived_prefixes
    if not any(prefix in path for prefix in prefixes):  # no key of the path starts with one
        return ""
    keys = [part for part in path.split(".")[:-1] if not part.isdigit()]
    start = next((i for i, part in enumerate(keys) if part.startswith(prefixes)), None)
    if start is None or isinstance(value, bool):
        return ""
    return ".".join([*keys[start:], key])


@lru_cache(maxsize=16)
def _any_of(keys: tuple[str, ...]) -> re.Pattern[str] | None:
    """Return the expression finding any of `keys` in a path (one empty: every path), or None
    for no keys."""
    return re.compile("|".join(map(re.escape, keys))) if keys else None


def _rule_for(
    path: str,
    rules: list[DerivedRule],
    found: dict[tuple[str, tuple[str, ...]], DerivedRule | None],
    key: str,
) -> DerivedRule | None:
    """Return the first of `rules` (those for a field named `key`) whose dotted key pattern
    matches the end of a path (list positions skipped), or None; remembered in `found`."""
    keys = tuple(part for part in path.split(".") if not part.isdigit())
    known = (key, keys)
    if known not in found:
        found[known] = _first_rule(keys, rules)
    return found[known]


@lru_cache(maxsize=1024)
def _is_pattern(part: str) -> bool:
    """Whether a part of a rule's dotted key pattern matches more than its own spelling
    (remembered: each record's verification asks of every rule's parts)."""
    return any(character in part for character in "*?[")


def _first_rule(keys: tuple[str, ...], rules: list[DerivedRule]) -> DerivedRule | None:
    """Return the first rule whose dotted key pattern matches the end of `keys`, or None."""
    for rule in rules:
        wanted = rule.field.split(".")
        if len(keys) >= len(wanted) and all(
            key == want or fnmatchcase(key, want)
            for key, want in zip(keys[-len(wanted) :], wanted, strict=True)
        ):
            return rule
    return None


def _invariants(evidence: Evidence, rules: RuleFile) -> Iterator[ClaimCheck]:
    """Decide every invariant a rule covers; the others are asserted by the audit."""
    by_name = {rule.name: rule for rule in rules.invariants}
    for name, claimed in evidence.invariants:
        path = f"invariants.{name}"
        rule = by_name.get(name)
        if rule is None:
            reason = rules.undecidable.get(name, "no rule in content/rules.yaml")
            yield ClaimCheck(path, "invariant", "unverifiable", reason=reason)
            continue
        try:
            decided = evaluate(rule.formula, (evidence.record,), {})
        except FormulaError as error:
            yield ClaimCheck(path, "invariant", "unverifiable", reason=f"inputs missing: {error}")
            continue
        expected = f"{_show(decided)} = {rule.formula}"
        yield _check(path, "invariant", decided is claimed, expected, claimed, rule.formula)
