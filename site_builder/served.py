"""The preview's site in memory: every file a build made, by path, and how a request maps to one.

The preview never writes its site to disk: a rebuild is served the moment its pages are
rendered, from the bytes the build holds. Only what a build made can be answered, so no request
path (`..`, encoded dots, backslashes, NUL, links on disk) can reach any other file.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from http import HTTPStatus
from urllib.parse import unquote

from site_builder.models import Page

INDEX = "index.html"


class ServedSite:
    """The files of one build, by their path in the site (`guides/x/index.html`)."""

    def __init__(self, pages: Iterable[Page]) -> None:
        self.files: dict[str, bytes] = {page.path: page.content for page in pages}

    @cached_property
    def folders(self) -> frozenset[str]:
        """Every folder that holds a file, as a path without slashes at either end."""
        found = {""}
        for path in self.files:
            parts = path.split("/")[:-1]
            found.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        return frozenset(found)

    def pages(self) -> list[Page]:
        """Return the files as pages, sorted by path."""
        return [Page(path, self.files[path]) for path in sorted(self.files)]

    def under(self, folder: str) -> ServedSite:
        """Return the files under the top-level `folder` alone (what a replaced site keeps)."""
        prefix = f"{folder}/"
        return ServedSite(
            Page(path, body) for path, body in self.files.items() if path.startswith(prefix)
        )

    def with_files(self, pages: Iterable[Page], replacing: str) -> ServedSite:
        """Return this site with the files under the top-level folder `replacing` replaced by
        `pages` (a new search index for the same pages)."""
        kept = (Page(path, body) for path, body in self.files.items())
        prefix = f"{replacing}/"
        return ServedSite([*(page for page in kept if not page.path.startswith(prefix)), *pages])

    def resolve(self, raw_path: str) -> tuple[str | None, HTTPStatus]:
        """Map a request path to a file's path, or say why not (400, 403, 404 or 301, the
        last for a folder asked for without its trailing slash)."""
        try:
            path = unquote(raw_path, errors="strict")
        except UnicodeDecodeError:
            return None, HTTPStatus.BAD_REQUEST
        if "\x00" in path or "\\" in path or not path.startswith("/"):
            return None, HTTPStatus.BAD_REQUEST
        segments = [segment for segment in path.split("/") if segment]
        if any(segment in {".", ".."} for segment in segments):
            return None, HTTPStatus.FORBIDDEN
        key = "/".join(segments)
        if key in self.folders:
            if not path.endswith("/"):
                return None, HTTPStatus.MOVED_PERMANENTLY
            key = f"{key}/{INDEX}" if key else INDEX
        if key in self.files:
            return key, HTTPStatus.OK
        return None, HTTPStatus.NOT_FOUND
