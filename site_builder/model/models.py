"""Every type the stages share: raw inputs, the normalised guide, the site, pages, findings
(the file formats people write, and their pydantic schemas, live in `schema`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import Literal

from site_builder.errors import Problem
from site_builder.model.claims import Verification
from site_builder.model.declared import PageScan, Shingles
from site_builder.model.images import ContentImage
from site_builder.model.links import ProseLink
from site_builder.model.raw import Asset
from site_builder.model.record_model import Evidence
from site_builder.model.schema import (
    Acknowledgement,
    FrontMatter,
    RegistryEntry,
    RuleFile,
    SiteSettings,
)
from site_builder.model.vocabulary import Vocabulary

# --- the normalised guide (normalize.py, assemble.py) --------------------------------------


@dataclass(frozen=True)
class Normalized:
    """Validated inputs, before records and prose are joined."""

    evidence: tuple[Evidence, ...]
    docs: tuple[Doc, ...]
    settings: SiteSettings | None
    assets: tuple[Asset, ...]
    registry: tuple[RegistryEntry, ...] = ()
    rules: RuleFile = field(default_factory=RuleFile)
    static: tuple[Asset, ...] = ()
    acknowledged: tuple[Acknowledgement, ...] = ()
    vocabulary: Vocabulary | None = None
    images: tuple[ContentImage, ...] = ()
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
    body_line: int = 1


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
    aliases: tuple[str, ...] = ()
    """Old site paths that redirect here."""
    draft: str = ""
    """Why the guide is not published ("draft", "needs prose", "scheduled for ..."); "" if it is."""
    replaces: str | None = None
    """The live registry page this guide takes over on purpose (its own URL), if declared."""
    acknowledge: tuple[Acknowledgement, ...] = ()
    """Warnings about this guide the editor accepts, from its front matter."""
    body_line: int = 1
    """The prose file's line number of the body's first line, for locating prose findings."""

    @property
    def source(self) -> str:
        """The file an editor changes for this guide: its prose, else its record."""
        return self.doc_source or self.evidence.source

    @cached_property
    def url(self) -> str:
        """Site-relative URL of the guide (made once: every pass over the site asks)."""
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
    registry: tuple[RegistryEntry, ...] = ()
    registry_by_key: dict[str, RegistryEntry] = field(default_factory=dict)
    """Registry entries by normalised URL (the first of any duplicates)."""
    registry_source: str = "content/registry.json"
    rules: RuleFile = field(default_factory=RuleFile)
    static: tuple[Asset, ...] = ()
    """Files copied verbatim from static/; `name` is the path inside the site."""
    acknowledged: tuple[Acknowledgement, ...] = ()
    """The site's accepted warnings (content/acknowledged.yaml)."""
    production: bool = False
    """A production deploy build: a live page that would answer 404 is an error."""
    vocabulary: Vocabulary | None = None
    """The names records use (content/vocabulary.yaml); None only in hand-made test sites."""
    images: dict[str, ContentImage] = field(default_factory=dict)
    """The image files of content/ by path (`content/images/x.png`), for the prose to show."""

    def canonical(self, url: str) -> str:
        """Return the absolute canonical form of a site-relative URL."""
        return self.settings.base_url + url

    @property
    def drafts(self) -> tuple[Guide, ...]:
        """Guides that are audited and previewed but not deployed."""
        return tuple(guide for guide in self.guides if guide.draft)

    def without_drafts(self) -> Site:
        """Return the site a deploy publishes: the same, less every draft."""
        guides = tuple(guide for guide in self.guides if not guide.draft)
        return replace(self, guides=guides, by_url={guide.url: guide for guide in guides})


# --- output --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """One output file: its path inside the site folder and its bytes."""

    path: str
    content: bytes
    links: tuple[ProseLink, ...] = ()
    """The prose links of a guide page, so link findings name the line the editor wrote."""
    scan: PageScan | None = field(default=None, compare=False, repr=False)
    """What the page declares, read where it was rendered (a worker process)."""
    shingles: Shingles | None = field(default=None, compare=False, repr=False)
    """A guide page's word 3-grams for the overlap audit, made where it was rendered."""
    lookups: tuple[tuple[str, bool], ...] = field(default=(), compare=False, repr=False)
    """The site paths a guide page's prose links to, each with whether a guide of the site
    had it when the page was rendered: its cached page is reused only while each still is."""
    search: bytes = field(default=b"", compare=False, repr=False)
    """What Pagefind reads of a guide page (`scan._search_page`), made where it was rendered;
    b"" once stored in the build cache (`stored_pages.search_page`) or for other pages."""
    search_sha256: str = field(default="", compare=False, repr=False)
    """The sha256 of `search`, kept when `search` is let go: a search shard is indexed again
    only when what Pagefind reads of one of its pages changed."""
    finish: Callable[[Page], Page] | None = field(default=None, compare=False, repr=False)
    """What is left to do to a page rendered for the preview, once its site is shown: scan
    it and store it in the build cache (`stored_pages.finished`)."""
    stored: Path | None = None
    """The file holding its bytes when `content` is left empty (see `stored_pages`)."""
    sha256: str = ""
    """The sha256 of its bytes, when they are `stored`."""
    linkable: Path | None = field(default=None, compare=False, repr=False)
    """A file that held exactly its bytes when the page was made (a search bundle's file in
    the build cache): the site is given a link to it, if it still holds them, not a new file."""
    verified: bytes | Verification | None = field(default=None, compare=False, repr=False)
    """What the worker that rendered a guide page verified of its record, on its way to the
    builder (`kept_verifications.verified_here`): the head of the cache entry it wrote, or
    the whole verification if it could not write it."""
    cached: bool = field(default=False, compare=False, repr=False)
    """Whether this build took the page from the build cache instead of rendering it."""

    def read(self) -> bytes:
        """Return the page's bytes, from `stored` when the page does not hold them."""
        return self.content if self.stored is None else self.stored.read_bytes()


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """One result of a site check: which check, how bad, which file and pages, what is wrong."""

    check: str
    severity: Severity
    source: str
    """The input file to change to fix it (a record, a guide, the registry)."""
    message: str
    page: str = ""
    """The site URL the finding is about; the report groups findings by it."""
    related: tuple[str, ...] = ()
    """Other pages involved (the near-duplicate, the unresolved link target, ...)."""
    score: float | None = None
    """Similarity score of overlap findings, 0 to 1."""
    reviewed: bool = False
    """An overlap the record's own overlap audit already names with a stated difference."""
    acknowledged: str = ""
    """The editor's reason for accepting this warning; acknowledged warnings are not repeated."""

    def __str__(self) -> str:
        """Return the one-line form `source: check: message`."""
        return f"{self.source}: {self.check}: {self.message}"


@dataclass(frozen=True)
class BuildReport:
    """What a build produced: the pages (written unless auditing) and the findings."""

    pages: tuple[Page, ...]
    """The site's files (with no bytes if `unchanged`: they are in the output folder)."""
    findings: tuple[Finding, ...]
    guides: int
    """Guides written (or, for an audit, that a deploy would write)."""
    verifications: Sequence[Verification] = ()
    drafts: tuple[str, ...] = ()
    """URLs of the drafts: audited, but written only with --drafts."""
    timings: tuple[tuple[str, float], ...] = ()
    """Wall seconds per stage (load, validate, verify, render, search index, check, write)."""
    written: bool = False
    """Whether the site was written (a build, not an audit, and no check error)."""
    unchanged: bool = False
    """Whether nothing changed since this output folder was written, so nothing was done."""
    language: str = "en"
    """The site's language (what its search index is built for)."""
    search_shard_pages: int = 100
    """Pages a shard of its search index holds (the site's setting; see `shards.shard_count`)."""
    guide_pages: tuple[int, int] = (0, 0)
    """Guide pages (drafts included) this build took from the build cache, and all it made."""
