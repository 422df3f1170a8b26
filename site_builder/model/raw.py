"""The inputs as read from disk (`load`): decoded, not yet validated, with read problems."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from site_builder.errors import Problem
from site_builder.model.schema import JsonValue


@dataclass(frozen=True)
class RawRecord:
    """One decoded JSON record file; `source` is its path relative to the project root."""

    source: str
    data: dict[str, JsonValue]
    sha256: str = ""
    """The sha256 of the file's bytes ("" for a record not read from a file)."""


@dataclass(frozen=True)
class UnreadRecord:
    """A record file that could not be read or decoded."""

    problem: Problem
    operation_id: str | None = None
    """The operationId found in its text, so that its guide is not called an orphan."""


@dataclass(frozen=True)
class RawDoc:
    """One Markdown guide: its front matter mapping and the body text after it."""

    source: str
    front: dict[str, JsonValue]
    body: str
    body_line: int = 1
    """The file's line number of the body's first line (after the front matter)."""


@dataclass(frozen=True)
class Asset:
    """A static file shipped with the site, such as the stylesheet."""

    name: str
    content: bytes


@dataclass(frozen=True)
class RawImage:
    """An image file under content/ (or a symbolic link there): its bytes, or why not read."""

    source: str
    content: bytes = b""
    refused: str = ""
    """Why it was not read (a symbolic link, too large); "" when it was."""


@dataclass(frozen=True)
class Inputs:
    """Everything a build reads, plus the problems met while reading it."""

    records: Iterable[RawRecord | UnreadRecord]
    """Read as they are iterated, once (`load`): a build holds one record's raw data at a time."""
    docs: tuple[RawDoc, ...]
    settings: RawDoc
    assets: tuple[Asset, ...]
    registry: RawRecord | None = None
    rules: RawDoc | None = None
    static: tuple[Asset, ...] = ()
    """Files of static/, copied verbatim; `name` is the path inside static/."""
    acknowledged: RawDoc | None = None
    """content/acknowledged.yaml, the site's accepted warnings."""
    vocabulary: RawDoc | None = None
    """content/vocabulary.yaml, the names records use."""
    images: tuple[RawImage, ...] = ()
    """Image files under content/, for the prose to show."""
    problems: tuple[Problem, ...] = ()
    """Problems reading every file but the records (theirs come with them)."""
