"""The file formats people write, as pydantic schemas: settings, front matter, registry, records.

Validation of these turns a typo into an error naming the file and field (extra="forbid"),
except records, which keep unknown sections (extra="allow") for rendering by shape.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
HTTP_URL_PATTERN = r"^https?://[^\s/?#]+[^\s]*$"
_HTTP_URL = re.compile(HTTP_URL_PATTERN)
SHA256_PATTERN = r"^[0-9a-f]{64}$"


def _written(value: Any) -> Any:
    """Refuse a number where a date or time is due: pydantic would read it as seconds since
    1970 (`published: 1787961600`, `"checkedAt": 20260824`)."""
    if isinstance(value, bool | int | float):
        raise ValueError("must be written as a date (2026-11-30) or time, not a number")
    return value


WrittenDate = Annotated[date, BeforeValidator(_written)]
"""A date the file writes as a date or as text, never as a number."""

_SITEMAP_TIME = re.compile(
    r"\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?", re.ASCII
)


def is_sitemap_time(text: str) -> bool:
    """Whether `text` is a sitemap `lastmod` as the sitemap protocol allows (W3C Datetime:
    `2026`, `2026-11`, `2026-11-30`, `2026-11-30T08:15Z`, `2026-11-30T08:15:00.5+01:00`) and
    a real day and time."""
    if not _SITEMAP_TIME.fullmatch(text):
        return False
    try:
        if "T" in text:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
        elif len(text) == 10:
            date.fromisoformat(text)
        elif len(text) == 7:
            date.fromisoformat(text + "-01")
    except ValueError:
        return False
    return True


def _sitemap_time(value: str) -> str:
    if value and not is_sitemap_time(value):
        raise ValueError(
            f"{value!r} is not a sitemap date or time (2026-11-30 or 2026-11-30T08:15:00+00:00)"
        )
    return value


SitemapTime = Annotated[StrictStr, AfterValidator(_sitemap_time)]
"""A sitemap `lastmod` (W3C Datetime), or "" where none is known."""
WrittenTime = Annotated[AwareDatetime, BeforeValidator(_written)]
"""A time with its UTC offset, written as text, never as a number."""

Alias = Annotated[
    StrictStr, StringConstraints(pattern=r"^/([\w~-][\w.~-]*/)*([\w~-][\w.~-]*)?$", max_length=300)
]
"""A site path a guide used to live at (`/guides/old-slug/`); it redirects to the guide."""
SitePath = Annotated[
    StrictStr, StringConstraints(pattern=r"^/([\w~-][\w.~-]*/)*([\w~-][\w.~-]*)?$", max_length=300)
]
"""A path on the site: `/guides/x/`, `/old.html`."""
LegacyFolder = Annotated[
    StrictStr, StringConstraints(pattern=r"^/([\w~-][\w.~-]*/)+\*$", max_length=300)
]
"""A folder of the old site whose files are proxied: `/css/*`."""
Tag = Annotated[StrictStr, StringConstraints(pattern=SLUG_PATTERN, max_length=40)]
"""A slug-like label on a guide: `vllm`, `kernel-fusion`."""

JsonValue = Any
"""A value decoded from JSON: dict, list, str, int, float, bool or None."""

Scalar = str | int | float | bool | None


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
    legacy_origin: StrictStr | None = Field(
        default=None, pattern=r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$", max_length=300
    )
    """Where live pages not built here are served from: each gets a Netlify 200 proxy rule."""
    legacy_paths: tuple[LegacyFolder, ...] = Field(default=(), strict=False, max_length=100)
    """Folders of files the proxied pages need (`/css/*`): proxied to legacy_origin too."""
    retired: dict[SitePath, SitePath] = Field(default_factory=dict, strict=False, max_length=10000)
    """Live pages retired on purpose: old path -> the page that replaces it (a 301)."""
    search_shard_pages: StrictInt = Field(default=100, ge=1, le=1_000_000)
    """Guide pages a search index shard holds: a bigger site is indexed in shards, one Pagefind
    run each, that the search page merges; an edit indexes its shard again. At most 10 shards,
    unless a shard would hold over 1,000 pages (`shards.shard_count`)."""
    publish_without_prose: StrictBool = False
    """Publish records that have no prose file (by default they are drafts: "needs prose")."""
    strict_derived_numbers: StrictBool = False
    """Fail the build on a derived number no rule covers and no inferred formula explains (by
    default a warning: "expected 108.5 from (a - b) / b * 100, found 118.5")."""

    @field_validator("legacy_origin")
    @classmethod
    def _not_this_site(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A legacy origin on the site's own host would proxy every page to itself."""
        base = info.data.get("base_url")
        hosts = {
            (urlsplit(url).hostname or "").removeprefix("www.") for url in (value, base) if url
        }
        if value and base and len(hosts) == 1:
            raise ValueError("must be another host than base_url (it would proxy to itself)")
        return value


class Acknowledgement(BaseModel):
    """A warning an editor accepts on purpose, so builds stop repeating it (`--audit` lists it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    check: StrictStr = Field(min_length=1, max_length=40)
    """The check that raised the warning: `sitemap-count`, `verify`, `deploy`, ..."""
    reason: StrictStr = Field(min_length=1, max_length=300)
    """Why the warning is fine as it is."""
    match: StrictStr = Field(default="", max_length=300)
    """A piece of the warning's message; empty matches every warning of the check."""
    page: StrictStr | None = Field(default=None, max_length=2048)
    """The page the warning is about (baseline file only; front matter means its own guide)."""
    source: StrictStr | None = Field(default=None, max_length=1000)
    """The file the warning names (baseline file only)."""


class AcknowledgementFile(BaseModel):
    """content/acknowledged.yaml: accepted warnings of the whole site, one baseline file."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    acknowledged: tuple[Acknowledgement, ...] = Field(default=(), strict=False)


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
    published: WrittenDate = Field(strict=False)
    """When the guide was first published."""
    updated: WrittenDate | None = Field(default=None, strict=False)
    """When the prose last changed materially, if after `published`."""
    aliases: tuple[Alias, ...] = Field(default=(), strict=False, max_length=20)
    """Old site paths of this guide; each becomes a permanent redirect to it."""
    draft: StrictBool = False
    """A draft is audited and previewed but never deployed (`--drafts` writes it)."""
    replaces: StrictStr | None = Field(default=None, max_length=2048)
    """The live registry page at this guide's URL that the guide takes over, said on purpose."""
    acknowledge: tuple[Acknowledgement, ...] = Field(default=(), strict=False, max_length=50)
    """Warnings about this guide the editor has read and accepts, each with a reason."""


class RegistryEntry(BaseModel):
    """One canonical URL the live site already has (content/registry.json)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    url: StrictStr = Field(min_length=1, max_length=2048)
    """The page's canonical, absolute (`https://glm52.ai/guides/x/`) or site-relative."""
    title: StrictStr = ""
    """The page title, where known."""
    reader_job: StrictStr = ""
    """The intent the page serves: what its reader decides or does there."""
    published: WrittenDate | None = Field(default=None, strict=False)
    """When the page was first published, where known."""
    lastmod: SitemapTime = ""
    """The `lastmod` the live sitemap gives, as written there (a build copies it into its own
    sitemap for the pages it serves from elsewhere, so it must be one a crawler reads)."""


class RegistryFile(BaseModel):
    """The registry file: every page of the live site, sorted by URL."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    pages: tuple[RegistryEntry, ...] = Field(strict=False)


class ReceiptIn(BaseModel):
    """One source receipt as a record states it; the name key varies by record.

    Only types are checked here: whether the URL, size and hash are sound is a claim the
    verification step checks and reports with the expected and found values.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    url: StrictStr
    bytes: StrictInt
    sha256: StrictStr


class DerivedRule(BaseModel):
    """A derived number the build recomputes: which fields, from which formula, how exactly."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    field: StrictStr = Field(min_length=1)
    """Dotted key pattern matched against the end of a field's path (list positions skipped);
    `*` matches any one key: `calculatedThroughputChangePercent`, `tokensPerSecondPercent.*`."""
    formula: StrictStr = Field(min_length=1)
    """Expression over the field's object and its enclosing objects (see formula.py)."""
    tolerance: float | None = Field(default=None, strict=False, ge=0)
    """Absolute tolerance; by default half a unit in the recorded value's last decimal place."""
    note: StrictStr = ""


class InvariantRule(BaseModel):
    """How the build decides one named invariant from the record's own data."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: StrictStr = Field(min_length=1)
    formula: StrictStr = Field(min_length=1)
    note: StrictStr = ""


class RuleFile(BaseModel):
    """content/rules.yaml: the verification rules, declared as data."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    derived: tuple[DerivedRule, ...] = Field(default=(), strict=False)
    invariants: tuple[InvariantRule, ...] = Field(default=(), strict=False)
    undecidable: dict[str, StrictStr] = {}
    """Invariants the data cannot decide, with the reason shown on the page and in the report."""


class RecordCore(BaseModel):
    """The fields every audit record has; any other section is kept and rendered by shape."""

    model_config = ConfigDict(extra="allow", frozen=True)

    schema_version: StrictInt = Field(alias="schemaVersion", ge=1)
    operation_id: StrictStr = Field(
        alias="operationId", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
    )
    checked_at: WrittenTime = Field(alias="checkedAt")
    status: StrictStr = Field(alias="status", min_length=1, max_length=200)
    revisions: dict[str, Scalar] = Field(alias="revisions")
    source_receipts: list[ReceiptIn] = Field(alias="sourceReceipts")
    model_facts: dict[str, JsonValue] = Field(alias="model")
    invariants: dict[str, StrictBool] = Field(alias="invariants")

    @field_validator("checked_at")
    @classmethod
    def _in_range(cls, value: datetime) -> datetime:
        """Refuse times that cannot be converted to UTC (year 1 or 9999 at the edges)."""
        if not 1970 <= value.year <= 9998:
            raise ValueError("must be a time between 1970 and 9998")
        return value


@lru_cache(maxsize=4096)
def is_http_url(value: str) -> bool:
    """Return whether `value` is an absolute http(s) URL, the only kind we ever link to
    (remembered: a page and its record's verification ask of the same source URLs)."""
    if not value.startswith(("http://", "https://")) or _HTTP_URL.match(value) is None:
        return False  # the prefix first: most values a table cell holds are not URLs
    try:
        return bool(urlsplit(value).hostname)
    except ValueError:  # e.g. http://[abc: not a URL a browser could follow
        return False
