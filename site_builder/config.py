"""Where a build reads its inputs and writes its output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildConfig:
    """Paths of one project checkout and the folder the site is written to."""

    root: Path
    out_dir: Path

    @classmethod
    def for_root(cls, root: Path, out_dir: Path | None = None) -> BuildConfig:
        """Return the standard layout of the project at `root`."""
        root = root.resolve()
        return cls(root=root, out_dir=(out_dir or root / "_site").resolve())

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
    def settings_file(self) -> Path:
        """Site-wide settings: title, base URL, language, home page text."""
        return self.content_dir / "site.yaml"

    @property
    def input_dirs(self) -> tuple[Path, ...]:
        """Folders the build reads and must never overwrite."""
        return (self.records_dir, self.content_dir, self.templates_dir)
