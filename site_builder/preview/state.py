"""What the preview server shows: the current site, its version and findings, and the open
tabs waiting for the next one (`PreviewState`, shared by the rebuilds and the server)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from site_builder.output.search import BUNDLE
from site_builder.preview.served import ServedSite

ASSETS = "assets"
KEPT = (ASSETS, BUNDLE)
"""The folders of a replaced site still served for a while: the stylesheets and scripts its
pages load, and the search index they may be reading (Pagefind's files are named by their
contents, so an old one never stands for a new one)."""
ASSET_GRACE_SECONDS = 60.0
"""Keep a replaced site this long, so pages of it still loading can fetch its assets."""


@dataclass
class PreviewState:
    """What the server shows: the current site, its version, and the last build error."""

    site: ServedSite | None = None
    version: int = 0
    errors: tuple[str, ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()
    """Unacknowledged warnings of the site being served: (the page each is about, its line)."""
    retired: tuple[tuple[ServedSite, float], ...] = ()
    """The KEPT folders of the sites served before the current one, newest first, each with the
    time (`time.monotonic`) it was replaced; only those replaced within ASSET_GRACE_SECONDS."""
    tabs: int = 0
    """Open tabs: live-reload streams opened by a page (it names its version), not yet told
    to reload."""
    awaited: int = 0
    """How many tabs the last reload told to reload."""
    returned: int = 0
    """How many tabs came back (a page of the current version opened its stream) since."""
    indexed: int = 0
    """How many search indexes the preview has served in place of the one before, each for
    the pages being shown (a tab's search follows them: the `search` event)."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def publish(
        self,
        site: ServedSite | None,
        errors: tuple[str, ...],
        warnings: tuple[tuple[str, str], ...] = (),
        *,
        reload: bool = True,
    ) -> None:
        """Switch to a new site (or keep the old one with errors) and wake every waiting tab;
        without `reload`, switch to a site whose pages are the same (its findings changed)."""
        with self.changed:
            if site is not None:
                self._retire(site)
                self.site = site
                self.warnings = warnings
            if not reload:
                return
            if site is None and errors == self.errors:
                return
            self.errors = errors
            self.version += 1
            self.awaited, self.returned = self.tabs, 0
            self.changed.notify_all()

    def publish_search(self, site: ServedSite) -> None:
        """Switch to a site whose pages are the same but whose search index is new, and tell
        every tab's stream (a search page starts its search over on the new index)."""
        with self.changed:
            self._retire(site)
            self.site = site
            self.indexed += 1
            self.changed.notify_all()

    def _retire(self, site: ServedSite) -> None:
        """Keep the KEPT folders of the site `site` replaces, for pages of it still loading
        their files."""
        if self.site is not None and site is not self.site:
            now = time.monotonic()
            kept = [(old, at) for old, at in self.retired if now - at < ASSET_GRACE_SECONDS]
            folders = ServedSite((), {folder: self.site.under(folder) for folder in KEPT})
            self.retired = ((folders, now), *kept)

    def wait(self, version: int, indexed: int, timeout: float) -> tuple[int, int]:
        """Block until the version differs from `version`, or the search index from
        `indexed`, or the timeout passes; return both as they are then."""
        with self.changed:
            self.changed.wait_for(
                lambda: self.version != version or self.indexed != indexed, timeout=timeout
            )
            return self.version, self.indexed

    def tab_opened(self, version: int) -> None:
        """Count a tab's live-reload stream, showing `version`."""
        with self.changed:
            self.tabs += 1
            if version == self.version:
                self.returned += 1
                self.changed.notify_all()

    def tab_told(self) -> None:
        """Stop counting a tab's stream once it was told to reload (or closed)."""
        with self.changed:
            self.tabs -= 1

    def wait_for_tabs(self, timeout: float) -> bool:
        """Block until every tab the last reload told to reload came back with the current
        version, or the timeout passes; return whether they all did."""
        with self.changed:
            return self.changed.wait_for(lambda: self.returned >= self.awaited, timeout=timeout)

    def recent(self) -> tuple[ServedSite, ...]:
        """Return the sites replaced within the last ASSET_GRACE_SECONDS, newest first."""
        now = time.monotonic()
        return tuple(site for site, at in self.retired if now - at < ASSET_GRACE_SECONDS)
