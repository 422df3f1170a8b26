"""Format one JSON value for reading: yes/no badges, grouped digits, full hashes, safe links."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from site_builder.humanize import humanize_key
from site_builder.schema import JsonValue, is_http_url

_IDENTIFIER_SUFFIX = re.compile(r"(pr|issue|pullrequest|id|number|year|port)$")
_HASH = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Cell:
    """One value formatted for reading: kind picks the drawing, text is what is shown."""

    kind: str  # text | number | bool | null | hash | link | list | empty
    text: str
    items: tuple[Cell, ...] = ()
    path: str = ""
    """The value's JSON path in its record, when it has one."""

    @property
    def href(self) -> str:
        """Link target of a link cell (only ever an http(s) URL)."""
        return self.text if self.kind == "link" else ""


def is_scalar(value: JsonValue) -> bool:
    """Return whether a JSON value is a string, number, boolean or null."""
    return value is None or isinstance(value, str | int | float | bool)


def format_cell(value: JsonValue, key: str = "", path: str = "") -> Cell:
    """Return a value as a Cell: yes/no, grouped digits, shortened hashes, safe links."""
    cell = _format(value, key)
    return Cell(cell.kind, cell.text, cell.items, path) if path else cell


def _format(value: JsonValue, key: str) -> Cell:
    """Format one value by its type."""
    if value is None:
        return Cell("null", "none")
    if isinstance(value, bool):
        return Cell("bool", "yes" if value else "no")
    if isinstance(value, int | float):
        if _IDENTIFIER_SUFFIX.search(key.lower()):
            return Cell("number", str(value))
        return Cell("number", format(value, ","))
    if isinstance(value, str):
        if _HASH.match(value):
            return Cell("hash", value)
        if is_http_url(value):
            return Cell("link", value)
        return Cell("text", value)
    if isinstance(value, list):
        if not value:
            return Cell("empty", "none")
        return Cell("list", "", tuple(format_cell(item, key) for item in value))
    if isinstance(value, dict):
        if not value:
            return Cell("empty", "none")
        return Cell("list", "", tuple(_labelled(k, v) for k, v in value.items()))
    return Cell("text", str(value))


def _labelled(key: str, value: JsonValue) -> Cell:
    """Return a nested object's field as one text line inside a cell."""
    shown = value if is_scalar(value) else json.dumps(value, ensure_ascii=False, sort_keys=False)
    cell = format_cell(shown, key)
    return Cell("text", f"{humanize_key(key)}: {cell.text}")
