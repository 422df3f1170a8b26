"""Find the measurements in a table's rows by their shape: paired columns and categories.

Two shapes are measured, whatever the keys are called:
- paired columns: two numeric columns whose keys differ only by one word of an opposite pair
  (fusionOffX/fusionOnX, before/after, baseline/candidate) -> one plan with two series;
- a category column: the first column holds distinct, strictly ascending integers (DCP size,
  batch size) -> one plan per other numeric column holding at least two distinct numbers.
A column is numeric when most of its present values are numbers (booleans never are);
identifier columns (…Id, …Rank, …Year, PR numbers) holding integers are never measured.
`charts` turns each plan into a drawing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from site_builder.model.humanize import humanize_key, split_words
from site_builder.present.cells import format_cell

Rows = Sequence[tuple[str | None, Mapping[str, Any]]]
"""A table's rows as blocks receives them: (case name of a keyed row or None, fields)."""
OPPOSITES = (
    ("off", "on"),
    ("before", "after"),
    ("baseline", "candidate"),
    ("old", "new"),
    ("without", "with"),
    ("disabled", "enabled"),
    ("control", "treatment"),
)
"""Word pairs naming two conditions of one measurement; the first is drawn first."""
ID_WORDS = frozenset(
    {"id", "ids", "rank", "index", "number", "year", "pr", "issue", "commit", "port", "seed"}
)
UNITS = {
    unit.lower(): unit
    for unit in ("GB", "GiB", "MiB", "KiB", "TiB", "MB", "KB", "TB", "ms", "%", "tokens", "bytes")
} | {"seconds": "seconds", "requests": "requests"}
"""Words that end a measure's name as its unit, by lower-case form: 'Target memory GB'."""
MAX_LABEL_COLUMNS = 2
_PARTNERS = {word: pair for pair in OPPOSITES for word in pair}


@dataclass(frozen=True)
class Plan:
    """One chart's data: title, measure heading and unit, and (key, name) of each series."""

    title: str
    measure: str
    unit: str
    series: tuple[tuple[str, str], ...]
    label_keys: tuple[str, ...]
    """Columns whose values name a row in the chart (none for keyed rows: their case names)."""


@dataclass(frozen=True)
class Entry:
    """One row as a chart shows it: row number, label, values (None if missing) and texts."""

    number: int
    label: str
    values: tuple[float | None, ...]
    texts: tuple[str, ...]


def plan_charts(title: str, rows: Rows) -> list[Plan]:
    """Return a plan per paired measure, then per measure of a category column, in column order."""
    keys = list(dict.fromkeys(key for _, item in rows for key in item))
    measures = [key for key in keys if _is_measure(key, rows)]
    pairs = _pairs(measures)
    plans = [_paired_plan(title, a, b, keys, rows) for a, b in pairs]
    if keys and _is_category(keys[0], rows):
        used = {keys[0], *(key for pair in pairs for key in pair)}
        plans += [
            _single_plan(key, keys[0])
            for key in measures
            if key not in used and len({number_of(item.get(key)) for _, item in rows} - {None}) > 1
        ]
    return plans


def entries_of(plan: Plan, rows: Rows) -> list[Entry]:
    """Return the rows of a plan that hold at least one of its numbers, in table order."""
    entries = []
    for number, (label, item) in enumerate(rows, 1):
        values = tuple(number_of(item.get(key)) for key, _ in plan.series)
        if any(value is not None for value in values):
            texts = tuple(
                "no value" if value is None else _value_text(item[key], key, plan.unit)
                for value, (key, _) in zip(values, plan.series, strict=True)
            )
            label_text = _row_label(label, item, plan.label_keys, number)
            entries.append(Entry(number, label_text, values, texts))
    return entries


def describe(plan: Plan, entries: Sequence[Entry]) -> str:
    """Return a chart's data in words, one clause per row: 'Fusion off 97.72 tokens/s vs …'."""
    if len(plan.series) == 1:
        clauses = [f"{entry.label}: {entry.texts[0]}" for entry in entries]
    else:
        names = [lower(name) for _, name in plan.series]
        clauses = [
            " vs ".join(f"{name} {text}" for name, text in zip(names, entry.texts, strict=True))
            + f" for {lower(entry.label)}"
            for entry in entries
        ]
    said = "; ".join(clauses)
    return f"{said[:1].upper()}{said[1:]}."


def number_of(value: Any) -> float | None:
    """Return a JSON value as a finite float, or None for anything that is not a number."""
    if type(value) is float:  # most numbers of a record's tables: no conversion to try
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def lower(text: str) -> str:
    """Lower a leading capital for use mid-sentence: 'Fusion on' -> 'fusion on'; 'KV' stays."""
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first[:1].isupper() and first[1:].islower() else text


def _is_measure(key: str, rows: Rows) -> bool:
    """Return whether most present values of a column are numbers and it names no identifier."""
    values = [item[key] for _, item in rows if item.get(key) is not None]
    found = [number for number in map(number_of, values) if number is not None]
    if not found or len(found) * 2 < len(values):
        return False
    words = [word.lower() for word in split_words(key)]
    named_id = bool(words) and words[-1] in ID_WORDS and words[-2:-1] != ["per"]
    return not (named_id and all(number.is_integer() for number in found))


def _is_category(key: str, rows: Rows) -> bool:
    """Return whether a column holds distinct integers in strictly ascending order."""
    values = [item.get(key) for _, item in rows]
    if len(values) < 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return False
    return all(a < b for a, b in itertools.pairwise(values))


def _pairs(measures: list[str]) -> list[tuple[str, str]]:
    """Return (first, second) column pairs whose keys differ only by opposite words."""
    found: list[tuple[str, str]] = []
    taken: set[str] = set()
    for index, a in enumerate(measures):
        for b in measures[index + 1 :]:
            at = None if a in taken or b in taken else _opposite_at(a, b)
            if at is not None:
                word = split_words(a)[at].lower()
                found.append((a, b) if word == _PARTNERS[word][0] else (b, a))
                taken.update((a, b))
    return found


def _opposite_at(a: str, b: str) -> int | None:
    """Return the position of the one word where two keys differ, if the two are opposites."""
    words_a, words_b = split_words(a), split_words(b)
    if len(words_a) != len(words_b):
        return None
    pairs = zip(words_a, words_b, strict=True)
    diff = [i for i, (x, y) in enumerate(pairs) if x.lower() != y.lower()]
    if len(diff) != 1:
        return None
    x, y = words_a[diff[0]].lower(), words_b[diff[0]].lower()
    return diff[0] if x in _PARTNERS and _PARTNERS[x] == _PARTNERS.get(y) else None


def _paired_plan(title: str, a: str, b: str, keys: list[str], rows: Rows) -> Plan:
    """Plan two series named by the differing word; the measure is the rest of the key.

    fusionOffTokensPerSecond -> 'Fusion off' of 'Tokens/s'; kvCacheTokensOff -> 'Off' of
    'KV cache (tokens)'; latencyBeforeMs -> 'Before' of 'Latency (ms)'; off -> the table title.
    """
    at = _opposite_at(a, b) or 0  # found: the pair was chosen by it
    words = split_words(a)
    prefix, suffix = words[:at], words[at + 1 :]
    bare = len(suffix) == 1 and _unit(suffix[0]) != ""
    named = prefix if suffix and not bare else []
    measured = suffix if named else prefix + suffix
    text = humanize_key("_".join(measured)) if measured else ""
    if not measured or (bare and not prefix):
        text = f"{title} {text}".strip()
    measure, unit = _measure(text)
    names = [humanize_key("_".join([*named, split_words(key)[at]])) for key in (a, b)]
    shown = f"{measure}: {lower(names[0])} vs {lower(names[1])}"
    ahead = keys[: min(keys.index(a), keys.index(b))]
    return Plan(shown, measure, unit, ((a, names[0]), (b, names[1])), _label_keys(ahead, rows))


def _single_plan(key: str, category: str) -> Plan:
    """Plan one series: a measure for each value of the category column."""
    measure, unit = _measure(humanize_key(key))
    shown = f"{measure} by {lower(humanize_key(category))}"
    return Plan(shown, measure, unit, ((key, measure),), (category,))


def _label_keys(keys: list[str], rows: Rows) -> tuple[str, ...]:
    """Return the first columns (before the measures) whose strings or integers vary by row."""
    found = []
    for key in keys:
        values = [item.get(key) for _, item in rows]
        plain = all(isinstance(v, str | int) and not isinstance(v, bool) for v in values)
        if plain and len({str(v) for v in values}) > 1:
            found.append(key)
    return tuple(found[:MAX_LABEL_COLUMNS])


def _measure(text: str) -> tuple[str, str]:
    """Return (heading, unit) of a humanised measure: 'Target memory GB' -> '… (GB)', 'GB'."""
    words = text.split()
    unit = _unit(words[-1]) if words else ""
    if unit:
        rest = " ".join(words[:-1])
        return (f"{rest} ({unit})" if rest else text), unit
    return text or "Value", "%" if "%" in words else ""


def _unit(word: str) -> str:
    """Return the unit a word names, or '': 'Gb' -> 'GB', 'Tokens/s' -> 'tokens/s'."""
    if word.endswith("/s") and len(word) > 2:
        return word.lower()
    return UNITS.get(word.lower(), "")


def _row_label(label: str | None, item: Mapping[str, Any], keys: Sequence[str], number: int) -> str:
    """Return a row's label: its case name, its telling columns, or 'Row N'."""
    if label is not None:
        return humanize_key(label)
    parts = []
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(" ".join(format_cell(value, key).text.split()))  # a time reads as one
        elif isinstance(value, int) and not isinstance(value, bool):
            parts.append(f"{humanize_key(key)} {format_cell(value, key).text}")
    return ", ".join(parts[:1] + [lower(part) for part in parts[1:]]) or f"Row {number}"


def _value_text(value: Any, key: str, unit: str) -> str:
    """Return a value as the table prints it (grouped digits), followed by its unit."""
    text = format_cell(value, key).text
    return f"{text}%" if unit == "%" else f"{text} {unit}" if unit else text
