"""The preview's site in memory: every file a build made, by path, and how a request maps to one.

The preview never writes its site to disk: a rebuild is served the moment its pages are
rendered, from the bytes the build holds. Only what a build made can be answered, so no request
path (`..`, encoded dots, backslashes, NUL, links on disk) can reach any other file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from http import HTTPStatus
from urllib.parse import unquote

from site_builder.model.models import Page

INDEX = "index.html"


class ServedSite:
    """The files of one build, by their path in the site (`guides/x/index.html`).

    A top-level folder may be served by another site (`parts`): a rebuild serves the last
    search index's `pagefind/` as it is, without copying its files (tens of thousands at
    10,000 guides) into the new site.
    """

    def __init__(self, pages: Iterable[Page], parts: Mapping[str, ServedSite] | None = None):
        self.parts: dict[str, ServedSite] = dict(parts or {})
        self.own: dict[str, bytes] = {
            page.path: page.content
            for page in pages
            if not self.parts or _top(page.path) not in self.parts
        }

    @property
    def files(self) -> dict[str, bytes]:
        """Every file, its own and its parts' (a new dict)."""
        merged = dict(self.own)
        for part in self.parts.values():
            merged.update(part.files)
        return merged

    def file(self, path: str) -> bytes | None:
        """Return the bytes of the file at `path`, or None."""
        part = self.parts.get(_top(path))
        return part.file(path) if part is not None else self.own.get(path)

    @cached_property
    def folders(self) -> frozenset[str]:
        """Every folder of its own that holds a file, as a path without slashes at either end."""
        found = {""}
        for path in self.own:
            parts = path.split("/")[:-1]
            found.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        return frozenset(found)

    def is_folder(self, path: str) -> bool:
        """Whether `path` (no slashes at either end) is a folder holding a file."""
        part = self.parts.get(path.partition("/")[0])
        return part.is_folder(path) if part is not None else path in self.folders

    def under(self, folder: str) -> ServedSite:
        """Return the files under the top-level `folder` alone (what a replaced site keeps)."""
        if folder in self.parts:
            return self.parts[folder]
        prefix = f"{folder}/"
        return ServedSite(
            Page(path, body) for path, body in self.own.items() if path.startswith(prefix)
        )

    def with_files(self, pages: Iterable[Page], replacing: str) -> ServedSite:
        """Return this site with the files under the top-level folder `replacing` replaced by
        `pages` (a new search index for the same pages)."""
        kept = (Page(path, body) for path, body in self.own.items())
        return ServedSite(kept, {**self.parts, replacing: ServedSite(pages)})

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
        if self.is_folder(key):
            if not path.endswith("/"):
                return None, HTTPStatus.MOVED_PERMANENTLY
            key = f"{key}/{INDEX}" if key else INDEX
        if self.file(key) is not None:
            return key, HTTPStatus.OK
        return None, HTTPStatus.NOT_FOUND


def _top(path: str) -> str:
    """Return the top-level folder of a file's path ("" for a file at the top)."""
    top, slash, _ = path.partition("/")
    return top if slash else ""
