"""Read a list of lists of scalars (`[[2048, 0.41], [4096, 0.63]]`) as table rows.

Rows are the inner lists and columns go by position; a short row leaves its last cells empty.
Columns are headed from the section's key when it names them: the key split on By, Vs, And
or Per into exactly as many parts as the widest row has cells. `tokensVsSeconds` -> Tokens,
Seconds; a key with a single By or Per names the column the rows are keyed by last, so that
column comes first: `latencyByChunkSize` -> Chunk size, Latency. Any other key gives Column 1,
Column 2, ... Each column's key is only a name: the JSON path of a cell is `key.row.column`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from site_builder.model.schema import JsonValue
from site_builder.model.vocabulary import caveat_keys
from site_builder.present.cells import is_scalar

_SEPARATOR = re.compile(r"(?<=[a-z0-9])(By|Vs|And|Per)(?=[A-Z0-9])|[_-](by|vs|and|per)[_-]")
"""The words between column names in a key: latencyByChunkSize, tokens_vs_seconds."""  # vocabulary
_KEYED_BY = frozenset({"by", "per"})


@dataclass(frozen=True)
class Grid:
    """A list of lists as rows of named fields, with the JSON path segment of each name."""

    rows: tuple[dict[str, JsonValue], ...]
    positions: dict[str, str]
    """Column key -> its position in the inner lists ('0', '1', ...), for the cells' paths."""


def is_grid(value: JsonValue) -> bool:
    """Return whether a value is a list of lists of scalars with at least one cell."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(row, list) for row in value)
        and any(value)
        and all(is_scalar(cell) for row in value for cell in row)
    )


def read_grid(key: str, value: list[list[JsonValue]]) -> Grid:
    """Return the rows of a list of lists, their columns named from `key`."""
    names = column_keys(key, max(len(row) for row in value))
    rows = tuple(dict(zip(names, row, strict=False)) for row in value)
    return Grid(rows, {name: str(index) for index, name in enumerate(names)})


def column_keys(key: str, count: int) -> list[str]:
    """Return a key per column: the parts of `key` if it names `count` columns, else column_N."""
    parts = _SEPARATOR.split(key)
    names, separators = parts[::3], [a or b for a, b in zip(parts[1::3], parts[2::3], strict=True)]
    usable = (
        len(names) == count
        and all(names)
        and len({name.lower() for name in names}) == count
        and not caveat_keys().intersection(names)
    )
    if not usable:
        return [f"column_{index}" for index in range(1, count + 1)]
    if len(separators) == 1 and separators[0].lower() in _KEYED_BY:
        return names[::-1]
    return names
