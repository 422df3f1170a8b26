"""Format one JSON value for reading: yes/no badges, grouped digits, full hashes, safe links,
and times in the one human format the whole site uses (`format_time`, `machine_time`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import NamedTuple

from site_builder.model.humanize import humanize_key
from site_builder.model.schema import JsonValue, is_http_url

_IDENTIFIER_SUFFIX = re.compile(r"(pr|issue|pullrequest|id|number|year|port)$")
_HASH = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?"
)
"""ISO 8601 / RFC 3339 in the extended form: `2026-08-24`, `2026-08-24T11:09:48Z`, `...+02:00`."""


class Cell(NamedTuple):
    """One value formatted for reading: kind picks the drawing, text is what is shown.

    A named tuple, not a frozen dataclass: a data-heavy page makes thousands, and a tuple is
    made in a fifth of the time."""

    kind: str  # text | number | bool | null | hash | link | list | empty | time
    text: str
    items: tuple[Cell, ...] = ()
    path: str = ""
    """The value's JSON path in its record, when it has one."""
    datetime: str = ""
    """A time cell's machine-readable value, for `<time datetime>`."""
    label: str = ""
    """The field name shown before a time inside a cell ('Published at: <time>')."""

    @property
    def href(self) -> str:
        """Link target of a link cell (only ever an http(s) URL)."""
        return self.text if self.kind == "link" else ""


def is_scalar(value: JsonValue) -> bool:
    """Return whether a JSON value is a string, number, boolean or null."""
    return value is None or isinstance(value, str | int | float | bool)


def format_cell(value: JsonValue, key: str = "", path: str = "") -> Cell:
    """Return a value as a Cell: yes/no, grouped digits, shortened hashes, safe links."""
    return _format(value, key, path)


def format_time(value: datetime | date) -> str:
    """Return a time as readers see it, everywhere on the site: 2026-08-24 11:09 UTC.

    A date reads 2026-08-24; a time without an offset keeps its wall clock and claims no zone.
    """
    if not isinstance(value, datetime):
        return value.isoformat()
    if value.tzinfo is None:
        return value.strftime("%Y-%m-%d %H:%M")
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def machine_time(value: datetime | date) -> str:
    """Return a time in W3C format, in UTC (2026-08-24T11:09:48+00:00); a date as 2026-08-24."""
    if not isinstance(value, datetime):
        return value.isoformat()
    if value.tzinfo is None:
        return value.isoformat(timespec="seconds")
    return value.astimezone(UTC).isoformat(timespec="seconds")


def parse_time(text: str) -> datetime | date | None:
    """Return the time or date an ISO 8601 string names, or None if it names none."""
    if len(text) < 10 or text[4] != "-":  # `dddd-`: most strings are not, and fail here
        return None
    try:
        if _DATE.fullmatch(text):
            return date.fromisoformat(text)
        if _TIME.fullmatch(text):
            return datetime.fromisoformat(text.upper())
    except ValueError:  # 2026-02-30, 25:00: looks like a time, is not one
        return None
    return None


def _format(value: JsonValue, key: str, path: str = "") -> Cell:
    """Format one value by its type (strings first: most values of a record are)."""
    if isinstance(value, str):
        if _HASH.match(value):
            return Cell("hash", value, path=path)
        if is_http_url(value):
            return Cell("link", value, path=path)
        return _time_cell(value, path) or Cell("text", value, path=path)
    if value is None:
        return Cell("null", "none", path=path)
    if isinstance(value, bool):
        return Cell("bool", "yes" if value else "no", path=path)
    if isinstance(value, int | float):
        if _names_identifier(key):
            return Cell("number", str(value), path=path)
        return Cell("number", format(value, ","), path=path)
    if isinstance(value, list):
        if not value:
            return Cell("empty", "none", path=path)
        return Cell("list", "", tuple(format_cell(item, key) for item in value), path=path)
    if isinstance(value, dict):
        if not value:
            return Cell("empty", "none", path=path)
        return Cell("list", "", tuple(_labelled(k, v) for k, v in value.items()), path=path)
    return Cell("text", str(value), path=path)


@lru_cache(maxsize=4096)
def _names_identifier(key: str) -> bool:
    """Whether a number under `key` is an identifier, shown without grouped digits (a PR, a
    port, a year); remembered, as every row of a table asks it of the same keys."""
    return _IDENTIFIER_SUFFIX.search(key.lower()) is not None


def _time_cell(text: str, path: str = "") -> Cell | None:
    """Return a time cell for an ISO 8601 string, or None if it is not a time we can show."""
    moment = parse_time(text)
    if moment is None:
        return None
    try:
        return Cell("time", format_time(moment), path=path, datetime=machine_time(moment))
    except (OverflowError, ValueError):  # year 1 with an offset: no UTC equivalent
        return None


def _labelled(key: str, value: JsonValue) -> Cell:
    """Return a nested object's field as one text line inside a cell."""
    shown = value if is_scalar(value) else json.dumps(value, ensure_ascii=False, sort_keys=False)
    cell = format_cell(shown, key)
    if cell.kind == "time":
        return cell._replace(label=humanize_key(key))
    return Cell("text", f"{humanize_key(key)}: {cell.text}")
