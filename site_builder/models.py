"""Every type the stages share: raw inputs, validated inputs, the assembled site, pages, findings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
)

from site_builder.errors import Problem

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
HTTP_URL_PATTERN = r"^https?://[^\s/?#]+[^\s]*$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

Tag = Annotated[StrictStr, StringConstraints(pattern=SLUG_PATTERN, max_length=40)]
"""A slug-like label on a guide: `vllm`, `kernel-fusion`."""

JsonValue = Any
"""A value decoded from JSON: dict, list, str, int, float, bool or None."""

Scalar = str | int | float | bool | None


# --- raw inputs, as read from disk (load.py) -------------------------------------------------


@dataclass(frozen=True)
class RawRecord:
    """One decoded JSON record file; `source` is its path relative to the project root."""

    source: str
    data: dict[str, JsonValue]


@dataclass(frozen=True)
class RawDoc:
    """One Markdown guide: its front matter mapping and the body text after it."""

    source: str
    front: dict[str, JsonValue]
    body: str


@dataclass(frozen=True)
class Asset:
    """A static file shipped with the site, such as the stylesheet."""

    name: str
    content: bytes


@dataclass(frozen=True)
class Inputs:
    """Everything a build reads, plus the problems met while reading it."""

    records: tuple[RawRecord, ...]
    docs: tuple[RawDoc, ...]
    settings: RawDoc
    assets: tuple[Asset, ...]
    problems: tuple[Problem, ...] = ()
    unreadable_ids: frozenset[str] = frozenset()
    """operationIds seen in record files that could not be decoded."""


# --- validated inputs (normalize.py) -------------------------------------------------------


class SiteSettings(BaseModel):
    """content/site.yaml: what the site is called and where it lives."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    title: StrictStr = Field(min_length=1, max_length=80)
    """Site name, shown in every page title and the header."""
    base_url: StrictStr = Field(pattern=r"^https://[a-z0-9.-]+$")
    """Scheme and host of the published site, without a trailing slash."""
    language: StrictStr = Field(default="en", pattern=r"^[a-z]{2}(-[A-Z]{2})?$")
    """The `lang` of every page."""
    description: StrictStr = Field(min_length=1, max_length=160)
    """Meta description of the home page and the guides index."""
    intro: StrictStr = ""
    """Markdown shown on the home page above the latest guides."""


class FrontMatter(BaseModel):
    """The YAML header of one guide in content/."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    title: StrictStr = Field(min_length=1, max_length=120)
    """The page title and <h1>."""
    description: StrictStr = Field(min_length=1, max_length=159)
    """Meta description for search results (under 160 characters)."""
    slug: StrictStr = Field(pattern=SLUG_PATTERN, max_length=120)
    """Fixes the guide's URL: /guides/<slug>/."""
    record: StrictStr = Field(min_length=1)
    """The operationId of the audit record this guide renders."""
    reader_job: StrictStr = Field(min_length=1, max_length=300)
    """One sentence: what the reader decides with this page."""
    tags: tuple[Tag, ...] = Field(default=(), strict=False, max_length=12)
    """Slug-like labels; the first names the engine."""
    published: date = Field(strict=False)
    """When the guide was first published."""
    updated: date | None = Field(default=None, strict=False)
    """When the prose last changed materially, if after `published`."""


class ReceiptIn(BaseModel):
    """One source receipt as a record states it; the name key varies by record."""

    model_config = ConfigDict(extra="allow", frozen=True)

    url: StrictStr = Field(pattern=HTTP_URL_PATTERN)
    bytes: StrictInt = Field(ge=0)
    sha256: StrictStr = Field(pattern=SHA256_PATTERN)


class RecordCore(BaseModel):
    """The fields every audit record has; any other section is kept and rendered by shape."""

    model_config = ConfigDict(extra="allow", frozen=True)

    schema_version: StrictInt = Field(alias="schemaVersion", ge=1)
    operation_id: StrictStr = Field(
        alias="operationId", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
    )
    checked_at: AwareDatetime = Field(alias="checkedAt")
    status: StrictStr = Field(alias="status", min_length=1, max_length=200)
    revisions: dict[str, Scalar] = Field(alias="revisions")
    source_receipts: list[ReceiptIn] = Field(alias="sourceReceipts")
    model_facts: dict[str, JsonValue] = Field(alias="model")
    invariants: dict[str, StrictBool] = Field(alias="invariants")


# --- the normalised guide (normalize.py, assemble.py) --------------------------------------


class Receipt(BaseModel):
    """A pinned source: what it is, where it was fetched, its size and hash."""

    model_config = ConfigDict(frozen=True)

    name: str
    url: str
    bytes: int
    sha256: str
    extra: tuple[tuple[str, JsonValue], ...] = ()


class NearbyPage(BaseModel):
    """An existing page the overlap audit compares this guide with."""

    model_config = ConfigDict(frozen=True)

    url: str
    reader_job: str
    difference: str


class Evidence(BaseModel):
    """One audit record with its spelling variants resolved and its editorial parts removed.

    The one typed model of a record that every later stage reads; templates never see the
    raw keys (`label` vs `id`, `nearestPages` vs `closestPages`, `decision` vs `rolloutDecision`).
    """

    model_config = ConfigDict(frozen=True)

    source: str
    operation_id: str
    checked_at: datetime
    status: str
    verdict: str
    decision: tuple[tuple[str, JsonValue], ...]
    boundary: tuple[tuple[str, JsonValue], ...]
    revisions: tuple[tuple[str, Scalar], ...]
    model_facts: tuple[tuple[str, JsonValue], ...]
    receipts: tuple[Receipt, ...]
    invariants: tuple[tuple[str, bool], ...]
    nearby: tuple[NearbyPage, ...]
    nearby_note: str
    overlap_facts: tuple[tuple[str, JsonValue], ...]
    sections: tuple[tuple[str, JsonValue], ...]


@dataclass(frozen=True)
class Normalized:
    """Validated inputs, before records and prose are joined."""

    evidence: tuple[Evidence, ...]
    docs: tuple[Doc, ...]
    settings: SiteSettings | None
    assets: tuple[Asset, ...]
    problems: tuple[Problem, ...] = ()
    """Every problem found so far; assembling adds its own, then the build stops once."""
    invalid_ids: frozenset[str] = frozenset()
    """operationIds of records that failed validation, so prose naming them is not an orphan."""


@dataclass(frozen=True)
class Doc:
    """A validated prose file."""

    source: str
    front: FrontMatter
    body: str


@dataclass(frozen=True)
class Guide:
    """One page to publish: a record, its prose (if any) and its place on the site."""

    slug: str
    title: str
    description: str
    reader_job: str
    tags: tuple[str, ...]
    published: date
    updated: date | None
    body: str
    doc_source: str | None
    evidence: Evidence

    @property
    def url(self) -> str:
        """Site-relative URL of the guide."""
        return f"/guides/{self.slug}/"

    @property
    def lastmod(self) -> datetime:
        """When the evidence was last checked; drives the sitemap's lastmod."""
        return self.evidence.checked_at


@dataclass(frozen=True)
class Site:
    """Everything to render: settings and guides, newest evidence first."""

    settings: SiteSettings
    guides: tuple[Guide, ...]
    assets: tuple[Asset, ...]
    by_url: dict[str, Guide] = field(default_factory=dict)

    def canonical(self, url: str) -> str:
        """Return the absolute canonical form of a site-relative URL."""
        return self.settings.base_url + url


# --- output --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """One output file: its path inside the site folder and its bytes."""

    path: str
    content: bytes


@dataclass(frozen=True)
class Finding:
    """One result of a site check; the CLI decides how loudly to report it."""

    check: str
    severity: Literal["error", "warning"]
    source: str
    message: str

    def __str__(self) -> str:
        """Return the one-line form `source: check: message`."""
        return f"{self.source}: {self.check}: {self.message}"


@dataclass(frozen=True)
class BuildReport:
    """What a build produced: the pages (written unless auditing) and the findings."""

    pages: tuple[Page, ...]
    findings: tuple[Finding, ...]
    guides: int


def is_http_url(value: str) -> bool:
    """Return whether `value` is an absolute http(s) URL, the only kind we ever link to."""
    return re.match(HTTP_URL_PATTERN, value) is not None
