"""What the preview server shows: the current site, its version and findings, and the open
tabs waiting for the next one (`PreviewState`, shared by the rebuilds and the server)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from site_builder.preview.served import ServedSite

ASSETS = "assets"
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
    """The assets of the sites served before the current one, newest first, each with the
    time (`time.monotonic`) it was replaced; only those replaced within ASSET_GRACE_SECONDS."""
    tabs: int = 0
    """Open tabs: live-reload streams opened by a page (it names its version), not yet told
    to reload."""
    awaited: int = 0
    """How many tabs the last reload told to reload."""
    returned: int = 0
    """How many tabs came back (a page of the current version opened its stream) since."""
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
        without `reload`, switch to a site whose pages are the same (a new search index)."""
        with self.changed:
            if site is not None and self.site is not None and site is not self.site:
                now = time.monotonic()
                kept = [(old, at) for old, at in self.retired if now - at < ASSET_GRACE_SECONDS]
                self.retired = ((self.site.under(ASSETS), now), *kept)
            if site is not None:
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

    def wait(self, version: int, timeout: float) -> int:
        """Block until the version differs from `version` or the timeout passes; return it."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version, timeout=timeout)
            return self.version

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
