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
    for path, key, row, parents in _objects(record, "", "", ()):
        numbers = any(isinstance(v, int | float) and not isinstance(v, bool) for v in row.values())
        sourced = isinstance(row.get("source"), str) or bool(measurement.search(key))
        caveated = any(name in caveats for scope in (row, *parents) for name in scope)
        if path and numbers and sourced and not caveated:
            names = ", ".join(vocabulary.caveat_keys[:2])
            yield path, f"measurement has no boundary caveat ({names}, ...); {_ADD}"


def _objects(
    value: Any, path: str, key: str, parents: tuple[Mapping[str, Any], ...]
) -> Iterator[tuple[str, str, Mapping[str, Any], tuple[Mapping[str, Any], ...]]]:
    """Yield every object (list rows included) with its path, its key and enclosing objects."""
    if isinstance(value, Mapping):
        yield path, key, value, parents
        for child_key, child in value.items():
            child_path = f"{path}.{child_key}" if path else child_key
            yield from _objects(child, child_path, child_key, (value, *parents))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _objects(child, f"{path}.{index}", key, parents)
