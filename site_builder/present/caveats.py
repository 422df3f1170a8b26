"""Lift caveat strings (the vocabulary's caveat keys) out of JSON objects, so a page
draws them as callouts on their block instead of as table cells or key/value rows.
"""

from __future__ import annotations

from typing import Any

from site_builder.model.schema import JsonValue
from site_builder.model.vocabulary import caveat_keys


def lift_boundaries(
    value: dict[str, Any], deep: bool
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Split caveat strings from an object: (fields without them, [(key, text)]).

    With `deep`, caveats inside nested objects and lists are lifted too, for places that
    cannot carry callouts of their own (table cells, flattened nesting). A null caveat
    carries no text and is dropped rather than drawn as an empty column.
    """
    fields: dict[str, Any] = {}
    lifted: list[tuple[str, str]] = []
    caveats = caveat_keys()
    for key, item in value.items():
        if key in caveats and (item is None or isinstance(item, str)):
            if item:
                lifted.append((key, item))
        elif deep and isinstance(item, dict | list):
            fields[key], inner = _lift_nested(item)
            lifted.extend(inner)
        else:
            fields[key] = item
    return fields, lifted


def _lift_nested(value: JsonValue) -> tuple[JsonValue, list[tuple[str, str]]]:
    """Lift caveats out of any nested JSON value."""
    if isinstance(value, dict):
        return lift_boundaries(value, deep=True)
    if isinstance(value, list):
        pairs = [_lift_nested(item) for item in value]
        return [item for item, _ in pairs], [note for _, notes in pairs for note in notes]
    return value, []
