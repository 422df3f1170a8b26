"""A search shard's Pagefind bundle in the build cache: one entry lists its files, one
entry holds each file, by content. The preview also holds the last bundles in memory
(`HeldBundles`), so an unchanged shard is not even read back from the cache.

The key (made by `search`) digests the shard's pages, the language and Pagefind's version.
A file's entry holds its bytes alone, under their sha256, so the site can link it instead of
writing the file again (`Page.linkable`). Every file read back is checked against its sha256;
a damaged or partial entry means the shard is indexed again, never a wrong bundle. Names that
would leave the bundle are refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path, PurePosixPath

from site_builder.cache.store import BuildCache
from site_builder.runtime.files import holds

SHARD_ENTRY, FILE_ENTRY = "search", "search-file"
"""The cache's kinds of entry: a shard's bundle (its files' names and digests), and a file."""


def indexer_version() -> str:
    """Return what else a shard's bundle depends on, besides its pages and language: the
    installed Pagefind's versions."""
    found = []
    for name in ("pagefind", "pagefind_bin_extended", "pagefind_bin"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(found)


class HeldBundles:
    """The bundles of the last index, in memory, for the next one (the preview's): each
    shard's files by the shard's key, and each page's identity by its bytes object (the
    preview's unchanged pages are the same objects from one rebuild to the next)."""

    def __init__(self) -> None:
        self.bundles: dict[str, dict[str, bytes]] = {}
        self.identities: dict[int, tuple[bytes, str]] = {}

    def identity(self, content: bytes, identify: Callable[[bytes], str]) -> str:
        """Return `identify(content)`, once per bytes object while it is indexed (the memo
        keeps it alive, so its identity cannot pass to another object)."""
        held = self.identities.get(id(content))
        if held is None:
            held = self.identities[id(content)] = (content, identify(content))
        return held[1]

    def keep(self, bundles: dict[str, dict[str, bytes]], contents: Iterable[bytes]) -> None:
        """Hold these bundles and the identities of these pages' bytes; drop the rest."""
        self.bundles = bundles
        self.identities = {
            id(content): held
            for content in contents
            if (held := self.identities.get(id(content))) is not None
        }


def cached_bundle(
    cache: BuildCache | None, key: str
) -> tuple[dict[str, bytes], dict[str, Path]] | None:
    """Return the files of the bundle `cache` holds for a shard's pages, by name in the
    bundle, in order, and the entry holding each; None if it holds none, or a damaged or
    partial one."""
    listed = cache.read(SHARD_ENTRY, key) if cache is not None else None
    if cache is None or listed is None:
        return None
    try:
        names = sorted(json.loads(listed))
        if any(".." in PurePosixPath(name).parts or name.startswith("/") for name, _ in names):
            return None  # a name that leaves the bundle
        files = {name: cache.read_file(FILE_ENTRY, file, file) for name, file in names}
    except (ValueError, TypeError):
        return None
    if any(data is None for data in files.values()):
        return None
    entries = {name: cache.file(FILE_ENTRY, file) for name, file in names}
    return files, entries  # type: ignore[return-value]


def store(cache: BuildCache | None, key: str, files: dict[str, bytes]) -> dict[str, Path]:
    """Keep a shard's new bundle (its files by name in the bundle) in `cache`, each file by
    its content (an entry already holding it is left as it is: the site may link it); return
    the entry holding each file that is on disk now."""
    if cache is None:
        return {}
    listed, entries = [], {}
    for name, data in files.items():
        file = hashlib.sha256(data).hexdigest()
        entry = cache.file(FILE_ENTRY, file)
        if holds(entry, data):  # kept already (by another shard, or build): never rewritten
            cache.keep(FILE_ENTRY, file)
            entries[name] = entry
        elif cache.write(FILE_ENTRY, file, data, file=True):
            entries[name] = entry
        listed.append((name, file))
    cache.write(SHARD_ENTRY, key, json.dumps(listed).encode("utf-8"))
    return entries
