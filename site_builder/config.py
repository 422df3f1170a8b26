"""Where a build reads its inputs and writes its output, and what kind of build it is."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

CACHE_FOLDER = ".cache"
"""The build cache's folder in the project root (git ignores it)."""
SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"
"""The reproducible-builds variable: when set, "today" is its UTC date, not the clock's."""


@dataclass(frozen=True)
class BuildConfig:
    """Paths of one project checkout, the output folder, and what the build publishes."""

    root: Path
    out_dir: Path
    today: date | None = None
    """The build's date, for scheduled guides; None means today's UTC date, read when used."""
    include_drafts: bool = False
    """Write drafts too (`--drafts`, the preview); a deploy never does."""
    production: bool = False
    """A production deploy: a live page that would answer 404 is an error, not a warning."""
    jobs: int = 1
    """Worker processes for per-guide work (`--jobs`); 1 renders here, in this process."""
    cache_dir: Path | None = None
    """Where verified records and rendered guides are kept for the next build; None: nowhere."""

    @classmethod
    def for_root(
        cls,
        root: Path,
        out_dir: Path | None = None,
        *,
        today: date | None = None,
        include_drafts: bool = False,
        production: bool = False,
        jobs: int = 1,
        cache: bool = True,
    ) -> BuildConfig:
        """Return the standard layout of the project at `root` (cache in `.cache/`)."""
        root = root.resolve()
        out = (out_dir or root / "_site").resolve()
        cache_dir = root / CACHE_FOLDER if cache else None
        return cls(root, out, today, include_drafts, production, jobs, cache_dir)

    @property
    def build_date(self) -> date:
        """The date that decides whether a scheduled guide is published yet."""
        return self.today or today_from(os.environ)

    @property
    def records_dir(self) -> Path:
        """Audit records, one JSON file each."""
        return self.root / "records"

    @property
    def content_dir(self) -> Path:
        """Guide prose (Markdown with front matter) and the site settings."""
        return self.root / "content"

    @property
    def templates_dir(self) -> Path:
        """Jinja templates; `assets/` beside them holds the stylesheet."""
        return self.root / "templates"

    @property
    def assets_dir(self) -> Path:
        """Static files copied to the site with a content hash in their name."""
        return self.templates_dir / "assets"

    @property
    def static_dir(self) -> Path:
        """Files copied into the site verbatim, at the same path (like Hugo's `static/`)."""
        return self.root / "static"

    @property
    def settings_file(self) -> Path:
        """Site-wide settings: title, base URL, language, home page text."""
        return self.content_dir / "site.yaml"

    @property
    def input_dirs(self) -> tuple[Path, ...]:
        """Folders the build reads and must never overwrite."""
        return (self.records_dir, self.content_dir, self.templates_dir, self.static_dir)


def today_from(environ: Mapping[str, str]) -> date:
    """Return the UTC date of SOURCE_DATE_EPOCH when set, else of the clock.

    Raise ValueError naming the variable when it is set but not a Unix time.
    """
    epoch = environ.get(SOURCE_DATE_EPOCH, "").strip()
    if not epoch:
        return datetime.now(UTC).date()
    if not epoch.isdigit() or len(epoch) > 12:
        raise ValueError(f"{SOURCE_DATE_EPOCH}={epoch!r} is not a Unix time in seconds")
    return datetime.fromtimestamp(int(epoch), UTC).date()
