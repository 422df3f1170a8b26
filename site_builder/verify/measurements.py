"""Measurements from outside sources must carry a caveat saying what they do not prove.

A pure function of one record and the caveat keys and measurement pattern of the record
vocabulary in use.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from site_builder.model.vocabulary import in_use

_ADD = "add one to it or around it saying what the number does not prove"


def uncaveated_measurements(record: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """A measurement from an outside source with no caveat on it or around it is a warning."""
    vocabulary = in_use()
    if vocabulary is None:
        return
    caveats = vocabulary.caveat_set
    measurement = re.compile(vocabulary.measurement_pattern)
    for path, key, row, parents in _objects(record):
        if not path or not (isinstance(row.get("source"), str) or measurement.search(key)):
            continue
        if not any(isinstance(v, int | float) and not isinstance(v, bool) for v in row.values()):
            continue
        if not any(name in caveats for scope in (row, *parents) for name in scope):
            names = ", ".join(vocabulary.caveat_keys[:2])
            yield path, f"measurement has no boundary caveat ({names}, ...); {_ADD}"


Row = tuple[str, str, dict[str, Any], tuple[dict[str, Any], ...]]


def _objects(record: dict[str, Any]) -> list[Row]:
    """Return every object (list rows included), in document order, with its path, its key
    and enclosing objects (records are decoded JSON: dicts and lists)."""
    rows: list[Row] = []
    _collect(record, "", "", (), rows)
    return rows


def _collect(
    value: Any, path: str, key: str, parents: tuple[dict[str, Any], ...], rows: list[Row]
) -> None:
    """Append the objects under `value` to `rows`."""
    if isinstance(value, dict):
        rows.append((path, key, value, parents))
        scopes = (value, *parents)
        for child_key, child in value.items():
            if isinstance(child, dict | list):
                child_path = f"{path}.{child_key}" if path else child_key
                _collect(child, child_path, child_key, scopes, rows)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            if isinstance(child, dict | list):
                _collect(child, f"{path}.{index}", key, parents, rows)
