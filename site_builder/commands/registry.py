"""Merge a standard sitemap.xml (a urlset, or a sitemap index of them) into the registry.

New URLs are added; existing entries keep their titles, intents and dates; nothing is
removed; the result is sorted and stable, so importing the same sitemap twice changes nothing.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from site_builder.config import BuildConfig
from site_builder.errors import InputError, Problem
from site_builder.inputs.load import REGISTRY_NAME, load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.schema import RegistryEntry, is_sitemap_time
from site_builder.output.write import write_file_atomic
from site_builder.urls import canonical_url, page_key

MAX_INDEX_DEPTH = 5
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
"""The sitemaps.org limit on one file, uncompressed; a .gz is stopped as it passes it."""
MAX_URLS = 100_000
"""The most URLs one import reads, over every file: two full sitemap files (sitemaps.org allows
50,000 a file), a thousand times this site; a million would take gigabytes to merge."""
MAX_URL_LENGTH = 2048
"""The sitemaps.org limit on a <loc>."""
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SitemapUrl:
    """One <url> of a sitemap: its location and, if given, its lastmod."""

    loc: str
    lastmod: str


@dataclass(frozen=True)
class ImportReport:
    """What an import did to the registry."""

    read: int
    added: int
    updated: int
    foreign: int
    total: int
    merged: tuple[tuple[str, str], ...] = ()
    """(URL as the sitemap spells it, registry URL it was merged into), for every URL spelled
    otherwise than the registry (`www.`, `http:`, case, a missing trailing slash), in order."""
    unreadable: tuple[tuple[str, str], ...] = ()
    """(URL, lastmod) of every URL whose lastmod is no sitemap date or time (`yesterday`,
    `2026-02-30`): imported without it, as crawlers ignore it."""


def import_sitemap(config: BuildConfig, sitemap: Path) -> ImportReport:
    """Merge `sitemap` into content/registry.json; on any error the registry is untouched."""
    normalized = normalize(load_inputs(config))
    registry_path = config.content_dir / REGISTRY_NAME
    relevant = {
        f"content/{REGISTRY_NAME}",
        config.settings_file.relative_to(config.root).as_posix(),
    }
    problems = [problem for problem in normalized.problems if problem.source in relevant]
    if problems or normalized.settings is None:
        raise InputError(problems)
    urls = read_sitemap(sitemap)
    entries, report = merge(normalized.registry, urls, normalized.settings.base_url)
    write_file_atomic(registry_path, dump_registry(entries))
    return report


def read_sitemap(path: Path) -> list[SitemapUrl]:
    """Return every URL of a sitemap file, following a sitemap index to files beside it.

    Each file is read once however often indexes name it; an index that leads back to itself,
    and passing MAX_SITEMAP_BYTES, MAX_INDEX_DEPTH or MAX_URLS, is an error naming the file.
    """
    urls: list[SitemapUrl] = []
    _read(path.resolve(), urls, set(), ())
    return urls


def _read(path: Path, urls: list[SitemapUrl], done: set[Path], trail: tuple[Path, ...]) -> None:
    """Append the URLs of one sitemap file and of the files its index names, each file once."""
    done.add(path)
    sitemap = _parse(path, urls)
    if sitemap.kind == "urlset":
        return
    if len(trail) >= MAX_INDEX_DEPTH:
        raise _error(
            path, "<sitemapindex>", f"sitemap indexes nested deeper than {MAX_INDEX_DEPTH}"
        )
    trail = (*trail, path)
    names: set[str] = set()
    for loc in sitemap.children:
        try:
            name = PurePosixPath(urlsplit(loc).path).name
        except ValueError:
            name = ""
        if name in names:
            continue  # the same file named again: read once
        names.add(name)
        target = (path.parent / name).resolve()
        if not name or not target.is_file():
            message = f"the index names {loc}; expected the file {name or '?'} beside it"
            raise _error(path, "<sitemap>", message)
        if target in trail:
            raise _error(path, "<sitemap>", f"{loc} is part of a loop of sitemap indexes")
        if target not in done:
            _read(target, urls, done, trail)


def merge(
    entries: tuple[RegistryEntry, ...], urls: list[SitemapUrl], base_url: str
) -> tuple[list[RegistryEntry], ImportReport]:
    """Add new URLs, refresh lastmod of known ones, keep everything else; sort by page key."""
    by_key: dict[str, RegistryEntry] = {}
    for entry in entries:
        by_key.setdefault(page_key(entry.url, base_url) or entry.url, entry)
    kept = [
        entry for entry in entries if by_key.get(page_key(entry.url, base_url) or "") is not entry
    ]
    added = updated = foreign = 0
    imported: set[str] = set()
    merged_spellings: dict[str, str] = {}
    unreadable: list[tuple[str, str]] = []
    for url in urls:
        key = page_key(url.loc, base_url)
        if key is None:
            foreign += 1
            continue
        known = by_key.get(key)
        spelled = canonical_url(known.url, base_url) if known and known.url.startswith("/") else ""
        if known is not None and url.loc.strip() not in {known.url, spelled}:
            merged_spellings.setdefault(url.loc.strip(), known.url)
        if key in imported:
            continue  # the first mention of a page in the sitemap wins
        imported.add(key)
        if url.lastmod and not is_sitemap_time(url.lastmod):
            unreadable.append((url.loc.strip(), url.lastmod))
            url = replace(url, lastmod="")
        if known is None:
            by_key[key] = RegistryEntry(url=url.loc.strip(), lastmod=url.lastmod)
            added += 1
        elif url.lastmod and url.lastmod != known.lastmod:
            by_key[key] = known.model_copy(update={"lastmod": url.lastmod})
            updated += 1
    merged = sorted(
        [*by_key.values(), *kept], key=lambda e: (page_key(e.url, base_url) or "", e.url)
    )
    spellings = tuple(merged_spellings.items())
    report = ImportReport(
        len(urls), added, updated, foreign, len(merged), spellings, tuple(unreadable)
    )
    return merged, report


def dump_registry(entries: list[RegistryEntry]) -> str:
    """Return the registry file's text: stable key order, two-space indent, final newline."""
    pages = [entry.model_dump(mode="json") for entry in entries]
    return json.dumps({"pages": pages}, indent=2, ensure_ascii=False) + "\n"


def _parse(path: Path, urls: list[SitemapUrl]) -> _Sitemap:
    """Parse one sitemap file (optionally gzipped) as it is read, safely: no DTDs, no entities.

    Its URLs are appended to `urls` as the parser reaches them, so a file is never held whole,
    decompressed or as a tree (a 2 MB gzip bomb expands to gigabytes).
    """
    sitemap = _Sitemap(path, urls)
    parser = DefusedXMLParser(target=sitemap, forbid_dtd=True)
    gzipped = path.suffix == ".gz"
    size = 0
    try:
        with gzip.open(path, "rb") if gzipped else path.open("rb") as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > MAX_SITEMAP_BYTES:
                    grows = "decompresses to more" if gzipped else "is larger"
                    raise _error(path, "file", f"{grows} than {MAX_SITEMAP_BYTES:,} bytes")
                parser.feed(chunk)
            parser.close()
    except (OSError, EOFError, zlib.error) as error:
        raise _error(
            path, "file", f"cannot be read: {getattr(error, 'strerror', None) or error}"
        ) from None
    except ParseError as error:
        line, column = error.position
        raise _error(
            path, f"line {line} column {column + 1}", f"malformed XML: {error.msg}"
        ) from None
    except DefusedXmlException as error:
        raise _error(path, "XML", f"refused: {error}") from None
    return sitemap


class _Sitemap:
    """Parser target: keep each <url> of a urlset, or each <sitemap> of an index, as it ends.

    Nothing else is kept: no tree is built, so memory does not grow with the file.
    """

    def __init__(self, path: Path, urls: list[SitemapUrl]) -> None:
        self.path = path
        self.urls = urls
        self.kind = ""
        self.children: dict[str, None] = {}
        """The <loc> of each <sitemap> of an index, each once, in order."""
        self._depth = 0
        self._fields: dict[str, str] = {}
        self._field = ""
        self._text: list[str] = []
        self._open = False

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        """Note the root's kind; start collecting a <loc> or <lastmod> of an entry."""
        self._depth += 1
        self._open = False  # like Element.text: only the text before a nested element counts
        name = _local(tag)
        if self._depth == 1:
            self.kind = name
            if name not in {"urlset", "sitemapindex"}:
                message = f"expected <urlset> or <sitemapindex>, found <{name}>"
                raise _error(self.path, "<root>", message)
        elif self._depth == 2:
            self._fields = {}
        elif self._depth == 3 and name in {"loc", "lastmod"} and name not in self._fields:
            self._field, self._text, self._open = name, [], True

    def data(self, text: str) -> None:
        """Collect the text of the field being read."""
        if self._open:
            self._text.append(text)

    def end(self, tag: str) -> None:
        """Finish a field, or keep a finished entry."""
        if self._depth == 3 and self._field:
            self._fields[self._field] = "".join(self._text).strip()
            self._field, self._text, self._open = "", [], False
        elif self._depth == 2:
            self._entry(_local(tag))
        self._depth -= 1

    def close(self) -> None:
        """Nothing to return: the entries are already kept."""

    def _entry(self, name: str) -> None:
        """Keep a <url> of a urlset or a <sitemap> of an index, if it has a <loc>."""
        loc = self._fields.get("loc", "")
        if not loc:
            return
        if self.kind == "sitemapindex" and name == "sitemap":
            self.children.setdefault(loc)
        elif self.kind == "urlset" and name == "url":
            if len(loc) > MAX_URL_LENGTH:
                message = f"<loc> of {len(loc):,} characters; sitemaps allow {MAX_URL_LENGTH:,}"
                raise _error(self.path, "<url>", message)
            if len(self.urls) >= MAX_URLS:
                message = f"more than {MAX_URLS:,} URLs in this import (with the files before it)"
                raise _error(self.path, "<url>", message)
            self.urls.append(SitemapUrl(loc, self._fields.get("lastmod", "")))


def _local(tag: str) -> str:
    """Return an element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


def _error(path: Path, location: str, message: str) -> InputError:
    """Return an InputError about one sitemap file."""
    return InputError([Problem(str(path), location, message)])
