"""Turn any JSON value into a tree of blocks by its shape, so unseen record sections render.

list of objects -> Table; list of lists of scalars -> Table (columns by position, `grids`);
object of scalars -> KeyValue; list of scalars -> Items; object holding objects or lists ->
Group (recursive); lone scalar -> Fact. Caveat strings (the vocabulary's caveat keys) are
lifted out of cells into Callouts on their block (`caveats`). Templates draw blocks;
they never see a raw dict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from site_builder.model.humanize import anchor_for, humanize_key
from site_builder.model.schema import JsonValue
from site_builder.model.vocabulary import is_verdict_key
from site_builder.present.caveats import lift_boundaries
from site_builder.present.cells import Cell, format_cell, is_scalar
from site_builder.present.charts import Chart, build_charts
from site_builder.present.grids import is_grid, read_grid

MAX_DEPTH = 6


@dataclass(frozen=True)
class Callout:
    """A caveat that bounds the block it is attached to; `scope` says which rows."""

    label: str
    text: str
    scope: str = ""
    number: int = 0


@dataclass(frozen=True)
class Column:
    """A table column: its heading and whether it carries the row's verdict."""

    title: str
    verdict: bool
    numeric: bool

    @property
    def css(self) -> str:
        """The classes its heading and cells carry: `verdict`, `num`, both or none."""
        return " ".join(
            name for name, on in (("verdict", self.verdict), ("num", self.numeric)) if on
        )


class Row(NamedTuple):
    """A table row and the numbers of the callouts that bound it."""

    cells: tuple[Cell, ...]
    notes: tuple[int, ...]


class Pair(NamedTuple):
    """One labelled value of a key/value block."""

    label: str
    cell: Cell
    verdict: bool


@dataclass(frozen=True)
class Table:
    """Rows of objects sharing keys."""

    title: str
    anchor: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    callouts: tuple[Callout, ...]
    charts: tuple[Chart, ...] = ()
    kind: str = "table"


@dataclass(frozen=True)
class KeyValue:
    """An object of scalars, drawn as a two-column table."""

    title: str
    anchor: str
    pairs: tuple[Pair, ...]
    callouts: tuple[Callout, ...]
    kind: str = "keyvalue"


@dataclass(frozen=True)
class Items:
    """A list of scalars."""

    title: str
    anchor: str
    items: tuple[Cell, ...]
    callouts: tuple[Callout, ...] = ()
    kind: str = "items"


@dataclass(frozen=True)
class Fact:
    """One scalar value."""

    title: str
    anchor: str
    cell: Cell
    callouts: tuple[Callout, ...] = ()
    kind: str = "fact"


@dataclass(frozen=True)
class Group:
    """An object holding objects or lists: its own facts, its caveats, then sub-blocks."""

    title: str
    anchor: str
    children: tuple[Block, ...]
    callouts: tuple[Callout, ...]
    kind: str = "group"


Block = Table | KeyValue | Items | Fact | Group


def build_block(
    key: str, value: JsonValue, path: str = "", depth: int = 0, at: str | None = None
) -> Block:
    """Return the block for one keyed value, chosen by the value's shape.

    `path` builds the HTML anchor; `at` is the value's JSON path in the record, carried
    into every cell so the page can mark the values the build verified.
    """
    at = key if at is None else at
    path = f"{path}-{anchor_for(key)}" if path else anchor_for(key)
    title = humanize_key(key)
    if depth >= MAX_DEPTH and isinstance(value, list) and not _is_inline(value):
        # Past the depth limit nothing nests further: the rest is one line of JSON.
        return Fact(title, path, format_cell(json.dumps(value, ensure_ascii=False), key, at))
    if isinstance(value, list):
        if value and all(isinstance(item, dict) for item in value):
            return _table(title, path, [(None, item) for item in value], at)
        if is_grid(value):
            grid = read_grid(key, value)
            return _table(title, path, [(None, row) for row in grid.rows], at, grid.positions)
        if all(is_scalar(item) for item in value):
            if not value:
                return Fact(title, path, Cell("empty", "none"))
            cells = tuple(format_cell(item, key, f"{at}.{i}") for i, item in enumerate(value))
            return Items(title, path, cells)
        children = tuple(
            build_block(f"item {index}", item, path, depth + 1, f"{at}.{index - 1}")
            for index, item in enumerate(value, 1)
        )
        return Group(title, path, children, ())
    if isinstance(value, dict):
        return _object(title, path, value, depth, at)
    return Fact(title, path, format_cell(value, key, at))


def _object(title: str, path: str, value: dict[str, Any], depth: int, at: str) -> Block:
    """Return a KeyValue, keyed Table or Group for an object."""
    flatten = depth >= MAX_DEPTH
    fields, lifted = lift_boundaries(value, deep=flatten)
    callouts = tuple(Callout(humanize_key(k), text) for k, text in lifted)
    if flatten:
        fields = dict(_flatten(fields))
    inline = {k: v for k, v in fields.items() if _is_inline(v)}
    nested = {k: v for k, v in fields.items() if k not in inline}
    if not nested:
        return KeyValue(title, path, _pairs(inline, at), callouts)
    if not inline and not callouts and _is_keyed_table(nested):
        return _table(title, path, list(nested.items()), at)
    children: list[Block] = []
    if inline:
        children.append(KeyValue("", f"{path}-facts", _pairs(inline, at), ()))
    children.extend(build_block(k, v, path, depth + 1, f"{at}.{k}") for k, v in nested.items())
    return Group(title, path, tuple(children), callouts)


def _pairs(fields: dict[str, JsonValue], at: str) -> tuple[Pair, ...]:
    """Return an object's inline fields as labelled cells."""
    return tuple(
        Pair(humanize_key(k), format_cell(v, k, f"{at}.{k}"), is_verdict_key(k))
        for k, v in fields.items()
    )


def _is_inline(value: JsonValue) -> bool:
    """Return whether a value fits in one table cell: a scalar or a short list of scalars."""
    return is_scalar(value) or (isinstance(value, list) and all(is_scalar(item) for item in value))


def _is_keyed_table(nested: dict[str, JsonValue]) -> bool:
    """Return whether an object maps names to flat objects with the same keys (n1: {off, on})."""
    shapes = {
        tuple(v) if isinstance(v, dict) and all(_is_inline(x) for x in v.values()) else None
        for v in nested.values()
    }
    return len(nested) >= 2 and len(shapes) == 1 and None not in shapes


def _flatten(fields: dict[str, JsonValue], prefix: str = "") -> list[tuple[str, JsonValue]]:
    """Flatten nesting past the depth limit into dotted keys so the page stays readable."""
    flat: list[tuple[str, JsonValue]] = []
    for key, value in fields.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            flat.extend(_flatten(value, name))
        elif isinstance(value, list) and not all(is_scalar(item) for item in value):
            flat.append((name, json.dumps(value, ensure_ascii=False)))
        else:
            flat.append((name, value))
    return flat


def _table(
    title: str,
    path: str,
    rows: list[tuple[str | None, dict[str, Any]]],
    at: str,
    positions: dict[str, str] | None = None,
) -> Table:
    """Return a Table from (row label, object) pairs; boundary strings become numbered callouts.

    `positions` gives a column's JSON path segment where it is not its key (list of lists).
    """
    positions = positions or {}
    lifted = [lift_boundaries(item, deep=True) for _, item in rows]
    rows = [(label, fields) for (label, _), (fields, _) in zip(rows, lifted, strict=True)]
    keys: dict[str, None] = {}
    for _, item in rows:
        keys.update(dict.fromkeys(item))
    labelled = any(label is not None for label, _ in rows)
    columns = [Column("Case", False, False)] if labelled else []
    columns += [Column(humanize_key(k), is_verdict_key(k), _is_numeric(k, rows)) for k in keys]
    notes: dict[tuple[str, str], list[int]] = {}
    for number, (_, row_notes) in enumerate(lifted, 1):
        for note in row_notes:
            notes.setdefault(note, []).append(number)
    numbering = {note: index for index, note in enumerate(notes, 1)}
    built = []
    for number, (label, item) in enumerate(rows, 1):
        row_at = f"{at}.{label if label is not None else number - 1}"
        cells = [Cell("text", humanize_key(label))] if label is not None else []
        cells += [
            format_cell(item[k], k, f"{row_at}.{positions.get(k, k)}")
            if k in item
            else Cell("empty", "—")
            for k in keys
        ]
        own = tuple(numbering[note] for note, members in notes.items() if number in members)
        built.append(Row(tuple(cells), own))
    callouts = tuple(
        Callout(humanize_key(k), text, _row_scope(members, len(rows)), numbering[(k, text)])
        for (k, text), members in notes.items()
    )
    charts = build_charts(title, path, rows, [row.notes for row in built])
    return Table(title, path, tuple(columns), tuple(built), callouts, charts)


def _is_numeric(key: str, rows: list[tuple[str | None, dict[str, Any]]]) -> bool:
    """Return whether every present value of a column is a number (for right alignment)."""
    values = [item[key] for _, item in rows if key in item and item[key] is not None]
    return bool(values) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values
    )


def _row_scope(members: list[int], total: int) -> str:
    """Describe which rows a caveat bounds: 'all rows', 'row 2', 'rows 1, 3'."""
    if len(members) == total and total > 1:
        return "all rows"
    if len(members) == 1:
        return f"row {members[0]}"
    return "rows " + ", ".join(str(member) for member in members)
