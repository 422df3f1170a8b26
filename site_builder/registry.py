"""Merge a standard sitemap.xml (a urlset, or a sitemap index of them) into the registry.

New URLs are added; existing entries keep their titles, intents and dates; nothing is
removed; the result is sorted and stable, so importing the same sitemap twice changes nothing.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from site_builder.config import BuildConfig
from site_builder.errors import InputError, Problem
from site_builder.load import REGISTRY_NAME, load_inputs
from site_builder.normalize import normalize
from site_builder.schema import RegistryEntry
from site_builder.urls import canonical_url, page_key
from site_builder.write import write_file_atomic

MAX_INDEX_DEPTH = 5
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_URL_LENGTH = 2048
"""The sitemaps.org limit on a <loc>."""


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


def read_sitemap(
    path: Path, depth: int = 0, seen: frozenset[Path] = frozenset()
) -> list[SitemapUrl]:
    """Return every URL of a sitemap file, following a sitemap index to files beside it."""
    path = path.resolve()
    root = _parse(path)
    kind = _local(root.tag)
    if kind == "urlset":
        urls = [
            SitemapUrl(_child_text(url, "loc"), _child_text(url, "lastmod"))
            for url in root
            if _local(url.tag) == "url" and _child_text(url, "loc")
        ]
        for url in urls:
            if len(url.loc) > MAX_URL_LENGTH:
                message = f"<loc> of {len(url.loc):,} characters; sitemaps allow {MAX_URL_LENGTH:,}"
                raise _error(path, "<url>", message)
        return urls
    if kind != "sitemapindex":
        raise _error(path, "<root>", f"expected <urlset> or <sitemapindex>, found <{kind}>")
    if depth >= MAX_INDEX_DEPTH:
        raise _error(
            path, "<sitemapindex>", f"sitemap indexes nested deeper than {MAX_INDEX_DEPTH}"
        )
    urls: list[SitemapUrl] = []
    for child in root:
        loc = _child_text(child, "loc")
        if _local(child.tag) != "sitemap" or not loc:
            continue
        name = PurePosixPath(urlsplit(loc).path).name
        target = (path.parent / name).resolve()
        if not name or not target.is_file():
            message = f"the index names {loc}; expected the file {name or '?'} beside it"
            raise _error(path, "<sitemap>", message)
        if target in seen or target == path:
            raise _error(path, "<sitemap>", f"{loc} is part of a loop of sitemap indexes")
        urls.extend(read_sitemap(target, depth + 1, seen | {path}))
    return urls


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
    return merged, ImportReport(len(urls), added, updated, foreign, len(merged), spellings)


def dump_registry(entries: list[RegistryEntry]) -> str:
    """Return the registry file's text: stable key order, two-space indent, final newline."""
    pages = [entry.model_dump(mode="json") for entry in entries]
    return json.dumps({"pages": pages}, indent=2, ensure_ascii=False) + "\n"


def _parse(path: Path) -> Element:
    """Parse one sitemap file (optionally gzipped) safely: no DTDs, no entities."""
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as error:
        raise _error(
            path, "file", f"cannot be read: {getattr(error, 'strerror', None) or error}"
        ) from None
    if len(raw) > MAX_SITEMAP_BYTES:
        raise _error(path, "file", f"is larger than {MAX_SITEMAP_BYTES:,} bytes")
    try:
        return fromstring(raw, forbid_dtd=True)
    except ParseError as error:
        line, column = error.position
        raise _error(
            path, f"line {line} column {column + 1}", f"malformed XML: {error.msg}"
        ) from None
    except DefusedXmlException as error:
        raise _error(path, "XML", f"refused: {error}") from None


def _local(tag: str) -> str:
    """Return an element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]


def _child_text(element: Element, name: str) -> str:
    """Return the stripped text of a direct child such as <loc>, or ''."""
    for child in element:
        if _local(child.tag) == name:
            return (child.text or "").strip()
    return ""


def _error(path: Path, location: str, message: str) -> InputError:
    """Return an InputError about one sitemap file."""
    return InputError([Problem(str(path), location, message)])
