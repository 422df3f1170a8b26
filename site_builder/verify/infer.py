"""Infer the formula behind a derived number no rule covers, from the numbers and names beside it.

Candidates over the numbers and lists of the field's object and enclosing objects (differences,
ratios, percent changes, unit conversions, sums, maxima, ...; docs/verification.md) are ranked by
the words their inputs' names share with the field's name and the family its name asks for;
values are computed here, formulas written out in formula.py's language only when shown."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from site_builder.model.claims import ClaimCheck, agrees, precision, rounded
from site_builder.model.humanize import split_words
from site_builder.model.vocabulary import in_use

MAX_OPERANDS = 24
"""Numbers tried per derived field (the best-named): at most 24 x 23 ordered pairs."""
MAX_SERIES = 24
"""Lists and list columns tried per derived field (the best-named)."""
MAX_GATHERED = 2000
"""Numbers and lists looked at per derived field (breadth first) before the best are kept."""
NESTING = 3
"""How many objects deep below each enclosing object numbers are looked for."""
MIN_DIGITS = 3
"""Digits a value needs before any candidate may explain it; below, only the best-named may."""
NO_RULE = "no rule in content/rules.yaml"

# Words that say nothing of a derived field's inputs (nor do the vocabulary's derived prefixes).
STOP_WORDS = "per of the a an to from vs and in by for with at"
# Words of a derived field's name that ask for a family of formulas.
FAMILY_WORDS = {
    "percent": "percent pct percentage",
    "change": "change delta diff difference increase decrease reduction gain growth regression "
    "saving improvement drop loss overhead",
    "ratio": "ratio speedup slowdown factor fraction share multiple times",
    "total": "total sum combined overall aggregate",
    "max": "max maximum largest peak highest worst top biggest most",
    "min": "min minimum smallest lowest least fewest",
    "mean": "mean average avg",
    "count": "count number num",
    "product": "product",
}
# Unit words -> (quantity, power of the base, base; 0 = either 1,000 or 1,024).
UNITS = {
    "byte": ("size", 0, 0),
    **{u: ("size", p, 1024) for p, u in enumerate(["kib", "mib", "gib", "tib"], 1)},
    **{u: ("size", p, 0) for p, u in enumerate(["kb", "mb", "gb", "tb"], 1)},
    **{u: ("time", -p, 1000) for p, u in enumerate(["second", "ms", "us", "ns"])},
    "millisecond": ("time", -1, 1000),
    "microsecond": ("time", -2, 1000),
}
_STOP = frozenset(STOP_WORDS.split())
_HINTS = {family: frozenset(text.split()) for family, text in FAMILY_WORDS.items()}
_COMPARE = frozenset({"change", "ratio", "percent"})
_RESERVED = frozenset({"key", "siblings", "row", "true", "false", "null", *keyword.kwlist})
_IDENTIFIER = re.compile(r"^(?!.*__)[A-Za-z_][A-Za-z0-9_]*$")
_PLURAL = re.compile(r"(?<=\w{2}[^s])s$")


@dataclass(frozen=True)
class Candidate:
    """One formula that could have produced a derived value, with its value and its evidence."""

    formula: str
    value: float
    score: int
    """Words each input's name shares with the field's; +2 each for the family its name asks for,
    a conversion into its unit, parallel names (xOn, xOff), inputs in the field's own object."""
    complexity: int
    """Operations in the formula (x 10), plus how far out its inputs sit: simpler ranks first."""


@dataclass(frozen=True)
class _Input:
    """A number, or a list of numbers, a formula can name: its expression, words and distance."""

    name: str
    value: Any
    words: frozenset[str]
    depth: int


Node = tuple[str, str, Any, tuple[Mapping[str, Any], ...], list[Any]]
"""(JSON path, key, value, enclosing objects innermost first, rows beside it) of one field."""
_Raw = tuple[float, int, int, str, tuple[_Input, ...]]  # value, score, complexity, template, inputs


def words(name: str) -> frozenset[str]:
    """Return the words of a key or dotted path, lower case, plural -s dropped, no stop words."""
    vocabulary = in_use()
    stop = _STOP | frozenset(vocabulary.derived_prefixes if vocabulary else ())
    return frozenset(_PLURAL.sub("", word.lower()) for word in split_words(name)) - stop


def infer(node: Node, name: str = "", cache: dict[Any, Any] | None = None) -> ClaimCheck:
    """Check a derived number no rule covers against the formulas its neighbours suggest.

    `name` (its key, or path from a derived object) has the words that rank the candidates;
    `cache` (one per record) keeps each list's sums from one field to the next."""
    path, _, value, _, _ = node
    raw = list(_raw(node, name, {} if cache is None else cache)) if _is_number(value) else []
    top = max((item[1] for item in raw), default=0)
    why = "no numbers beside it to infer a formula from"
    if raw and len(Decimal(repr(value)).as_tuple().digits) < MIN_DIGITS:
        # At one or two digits (19, -20) some formula among thousands matches by chance: only
        # the best-named may explain it, named better than by their place or family alone.
        raw, why = [item for item in raw if item[1] == top > 2], "no number beside it named like it"
    if not raw:
        return ClaimCheck(path, "derived", "unverifiable", reason=f"{NO_RULE}, and {why}")
    tolerance = precision(value)  # computed once: thousands of candidates compare with it
    matches = sorted((_candidate(i) for i in raw if agrees(i[0], value, tolerance)), key=_rank)
    if matches:
        best = matches[0]
        alike = [c.formula for c in matches[1:] if c.score == best.score]
        reason = f"inferred: {best.formula}"
        if alike:
            reason += f"; {len(alike)} other(s) as well named give it too, e.g. {alike[0]}"
        return ClaimCheck(path, "derived", "verified", "", "", reason, best.formula, True)
    closest = _candidate(
        min(
            (item for item in raw if item[1] == top),
            key=lambda item: (abs(item[0] - value) / max(abs(item[0]), abs(value)), item[2]),
        )
    )
    expected = str(rounded(closest.value, value))
    reason = (
        f"{NO_RULE}, and no formula over the numbers beside it gives it; "
        f"closest: {closest.formula} = {expected}"
    )
    return ClaimCheck(
        path, "derived", "unexplained", expected, str(value), reason, closest.formula, True
    )


def candidates(node: Node, name: str = "") -> list[Candidate]:
    """Return every candidate formula for one field, best ranked first."""
    return sorted((_candidate(item) for item in _raw(node, name, {})), key=_rank)


def _rank(candidate: Candidate) -> tuple[int, int, str]:
    """Best shared-word score first, then the simplest, then string order."""
    return (-candidate.score, candidate.complexity, candidate.formula)


def _candidate(item: _Raw) -> Candidate:
    """Write out one raw candidate's formula in the rules' language."""
    formula = item[3].format(*(entry.name for entry in item[4]))
    return Candidate(formula, item[0], item[1], item[2])


def _raw(node: Node, name: str, cache: dict[Any, Any]) -> Iterator[_Raw]:
    """Yield every candidate with its value and evidence, formulas not yet written out."""
    target = words(name or node[1])
    asked = {family for family, hints in _HINTS.items() if hints & target}
    bonus = {family: 2 * _asked(family, asked) for family in ("convert", "share", *FAMILY_WORDS)}
    numbers, series = _inputs(node, target, cache)
    for item in numbers + series:
        share, local = len(item.words & target), 2 * (item.depth == 0)
        for template, family, steps, value, unit in _one_values(item):
            if family != "copy" or share:  # a copy counts only between fields named alike
                score = share + local + bonus.get(family, 0) + _unit_bonus(target, item, unit)
                yield value, score, steps * 10 + item.depth, template, (item,)
    shares = [len(item.words & target) for item in numbers]
    for i, left in enumerate(numbers):
        for j, right in enumerate(numbers):
            if i == j or not left.value or not right.value:
                continue  # a pair with a zero is a copy of the other number (or undefined)
            pair = (left, right)
            shared = shares[i] + shares[j] + 2 * (left.depth == right.depth == 0)
            # Two names that differ in a word or two on each side (fusionOnX, fusionOffX) are
            # one quantity measured twice: what differences, ratios and changes compare.
            parallel = 2 * (len(left.words ^ right.words) <= 3 and bool(left.words & right.words))
            for template, family, steps, value in _pair_values(left.value, right.value, i < j):
                score = shared + bonus[family] + (parallel if family in _COMPARE else 0)
                if abs(value) < 1e300:  # not a division by a tiny number (nor NaN)
                    yield value, score, steps * 10 + left.depth + right.depth, template, pair


def _one_values(item: _Input) -> Iterator[tuple[str, str, int, float, tuple[int, int] | None]]:
    """Yield (template, family, operations, value, unit step) of every formula of one input."""
    values = item.value
    if item.name.startswith("len("):
        yield "{0}", "count", 1, values, None
    elif isinstance(values, tuple):  # (sum, max, min, length) of a list
        listed = item.name.rsplit(" in ", 1)[-1]
        yield "sum({0})", "total", 1, values[0], None
        yield "max({0})", "max", 1, values[1], None
        yield "min({0})", "min", 1, values[2], None
        yield "sum({0}) / len(" + listed + ")", "mean", 2, values[0] / values[3], None
    else:
        yield "{0}", "copy", 0, values, None
        for base in (1000, 1024):
            for power in (1, 2, 3):
                shown = f"{base} ** {power}" if power > 1 else str(base)
                yield "{0} / " + shown, "convert", 1, values / base**power, (base, power)
                yield "{0} * " + shown, "convert", 1, values * base**power, (base, -power)


def _pair_values(a: float, b: float, first: bool) -> Iterator[tuple[str, str, int, float]]:
    """Yield (template, family, operations, value) of every formula of two non-zero numbers."""
    yield "{0} - {1}", "change", 1, a - b
    yield "({0} - {1}) / {1} * 100", "percent", 3, (a - b) / b * 100
    yield "({0} - {1}) / {0} * 100", "percent", 3, (a - b) / a * 100
    yield "{0} / {1} * 100", "share", 2, a / b * 100
    if b != 1:
        yield "{0} / {1}", "ratio", 1, a / b
    if first:  # sums and products once per unordered pair
        yield "{0} + {1}", "total", 1, a + b
        if a != 1 and b != 1:
            yield "{0} * {1}", "product", 1, a * b


def _asked(family: str, asked: set[str]) -> bool:
    """Return whether the field's name asks for this family: "delta" a difference, and so on."""
    if "percent" not in asked:
        return family in asked
    if "ratio" in asked or "change" in asked:
        return family == ("share" if "ratio" in asked else "percent")
    return family in ("percent", "share")


def _unit_bonus(target: frozenset[str], item: _Input, unit: tuple[int, int] | None) -> int:
    """Return 2 when dividing by base ** step turns the input's unit into the field's (B -> MiB)."""
    source = [UNITS[word] for word in item.words if word in UNITS]
    wanted = [UNITS[word] for word in target if word in UNITS]
    if unit is None or len(source) != 1 or len(wanted) != 1 or source[0][0] != wanted[0][0]:
        return 0
    base, step = unit
    fits = {source[0][2], wanted[0][2]} <= {0, base}
    return 2 if fits and wanted[0][1] - source[0][1] == step else 0


def _inputs(node: Node, target: frozenset[str], cache: dict[Any, Any]) -> tuple[list[_Input], ...]:
    """Return the best-named numbers and lists a formula for the field can reach by name."""
    _, key, _, scopes, rows = node
    numbers: list[_Input] = []
    series: list[_Input] = []
    held, lists, shadowed = {id(scope) for scope in scopes}, set(), set()
    for depth, scope in enumerate(scopes):
        queue = [(name, value, 0) for name, value in scope.items() if name not in shadowed]
        shadowed |= set(scope)  # an outer name hidden by an inner one cannot be reached
        for name, value, level in queue:  # grows while it is read: breadth first
            if len(numbers) + len(series) >= MAX_GATHERED:
                break
            if not _usable(name.rsplit(".", 1)[-1]) or (depth == 0 and name == key):
                continue
            if _is_number(value):
                numbers.append(_Input(name, value, words(name), depth * 4 + level))
            elif isinstance(value, list) and id(value) not in lists:
                lists.add(id(value))
                series += _series(name, value, depth * 4 + level, scopes[0], key, cache)
            elif isinstance(value, Mapping) and id(value) not in held and level < NESTING:
                queue += [(f"{name}.{inner}", item, level + 1) for inner, item in value.items()]
    if rows and id(rows) not in lists:
        series += _series("siblings", rows, 0, scopes[0], key, cache)
    return _best(numbers, target, MAX_OPERANDS), _best(series, target, MAX_SERIES)


def _series(
    name: str, value: list[Any], depth: int, own: Any, key: str, cache: dict[Any, Any]
) -> list[_Input]:
    """Return a list's length, and (sum, max, min, length) of its numbers or numeric columns."""
    if id(value) not in cache:  # a long table is summed once per record, not once per field
        table = value if value and all(isinstance(row, Mapping) for row in value) else []
        cells = {"": value} | {c: [row.get(c) for row in table] for c in (table or [{}])[0]}
        numeric = [(c, v) for c, v in cells.items() if v and all(map(_is_number, v))]
        stats = {c: (sum(v), max(v), min(v), len(v)) for c, v in numeric}
        cache[id(value)] = {id(row) for row in value}, stats
    owned, stats = cache[id(value)]
    named = words(name)
    found = [_Input(f"len({name})", len(value), named, depth)]
    for column, numbers in stats.items():
        if column and (not _usable(column) or (column == key and id(own) in owned)):
            continue  # the field's own column would explain it by itself
        expression = f"row.{column} for row in {name}" if column else name
        found.append(_Input(expression, numbers, named | words(column), depth))
    return found


def _best(inputs: list[_Input], target: frozenset[str], cap: int) -> list[_Input]:
    """Keep the `cap` inputs whose names share most words with the field's, nearest first."""
    order = sorted(
        range(len(inputs)), key=lambda i: (-len(inputs[i].words & target), inputs[i].depth, i)
    )
    return [inputs[i] for i in order[:cap]]


def _usable(name: str) -> bool:
    """Return whether a key can be named in a formula as is."""
    return bool(_IDENTIFIER.match(name)) and name not in _RESERVED


def _is_number(value: Any) -> bool:
    """Return whether a JSON value is a number (not a boolean) small enough to compute with."""
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e150
