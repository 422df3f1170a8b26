"""Which input files there are: folder listings, and the preview's memory of the last ones.

A build lists each input folder (`listed`). The preview keeps what its last load found and
read in each folder (`KnownFiles`), with the paths its watcher saw change since: a rebuild
then reads only the changed files, and lists a folder again only when a folder or a link
under it changed (a folder moved or renamed is one change, not one per file inside it).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Protocol, TypeVar

T = TypeVar("T")
WILDCARD = re.compile(r"[*?[]")


class Entry(Protocol):
    """What a folder listing says of one file (an `os.DirEntry`)."""

    @property
    def path(self) -> str: ...

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result: ...

    def is_symlink(self) -> bool: ...


def listed(folder: Path, pattern: str) -> list[Entry]:
    """Return what `folder.glob(pattern)` finds (`pattern` a file name, wildcards allowed,
    after `**/` for every folder below too), in path order, as the folders' listings: the
    listing says which entry is a folder or a link, so a folder of thousands of guides costs
    one call per file (its status), not three. Links to folders are not followed."""
    below, _, name = pattern.rpartition("/")
    if below not in ("", "**"):
        raise ValueError(f"unsupported pattern {pattern!r}")
    if not below and not WILDCARD.search(name):  # one file: not the whole folder's listing
        named = Named(os.path.join(folder, name))
        return [named] if os.path.lexists(named.path) else []
    match = re.compile(fnmatch.translate(name)).fullmatch
    found: list[Entry] = []

    def look(path: str) -> None:  # depth first, by name: the order of the paths' parts
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if match(entry.name):
                found.append(entry)
            if below and entry.is_dir() and not entry.is_symlink():
                look(entry.path)

    look(str(folder))
    return found


class Named:
    """A file named exactly, described as a folder listing's entry describes it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return os.stat(self.path, follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        return os.path.islink(self.path)


class KnownFiles:
    """What the preview's last load read in each folder, and what changed since.

    `changed` holds the paths the watcher saw change since the last load began, or is None
    when that is unknown (the first build, or a rebuild nobody said the cause of): every
    folder is then listed and every file's status looked at.
    """

    def __init__(self) -> None:
        self.changed: set[str] | None = None
        self._read: dict[tuple[str, str, str], dict[str, object]] = {}

    def saw(self, paths: Collection[str] | None) -> None:
        """Add the paths the watcher saw change; None: something changed, nobody knows what."""
        if paths is None:
            self.changed = None
        elif self.changed is not None:
            self.changed.update(paths)

    def loaded(self) -> None:
        """Start counting changes afresh: the load that began with these is done."""
        self.changed = set()

    def each(self, kind: str, folder: Path, pattern: str, read: Callable[[Entry], T]) -> list[T]:
        """Return `read(entry)` for each file `listed(folder, pattern)` finds, in order; only
        for the files that changed since the last call with the same `kind`, unless a
        folder or a link changed (or a link was found last time): then for each file."""
        key, prefix = (kind, str(folder), pattern), f"{folder}{os.sep}"
        kept = self._read.get(key)
        changed = (
            None if self.changed is None else [p for p in self.changed if p.startswith(prefix)]
        )
        if kept is None or changed is None or not _patch(kept, changed, prefix, pattern, read):
            entries = listed(folder, pattern)
            kept = {entry.path: read(entry) for entry in entries}
            if any(entry.is_symlink() for entry in entries):
                self._read.pop(key, None)  # a link's target is read every time
                return list(kept.values())  # type: ignore[arg-type]
        self._read[key] = kept
        return list(kept.values())  # type: ignore[arg-type]


def _patch(
    kept: dict[str, object],
    changed: list[str],
    prefix: str,
    pattern: str,
    read: Callable[[Entry], object],
) -> bool:
    """Bring `kept` (path -> what reading it gave) up to date with the `changed` paths under
    `prefix`; return False if a folder or a link changed (list the folder again instead)."""
    below, _, name = pattern.rpartition("/")
    match = re.compile(fnmatch.translate(name)).fullmatch
    added = False
    for path in sorted(changed):
        try:
            mode = os.lstat(path).st_mode
        except OSError:  # gone: the file, or every file of a folder removed or moved away
            for known in [k for k in kept if k == path or k.startswith(f"{path}{os.sep}")]:
                del kept[known]
            continue
        if stat.S_ISDIR(mode) or stat.S_ISLNK(mode) or _under_link(path, prefix):
            return False
        parent, _, base = path.rpartition(os.sep)
        if (
            not stat.S_ISREG(mode)
            or not match(base)
            or (not below and f"{parent}{os.sep}" != prefix)
        ):
            continue
        added = added or path not in kept
        kept[path] = read(Named(path))
    if added:
        ordered = sorted(kept.items(), key=lambda item: item[0].split(os.sep))
        kept.clear()
        kept.update(ordered)
    return True


def _under_link(path: str, prefix: str) -> bool:
    """Whether a folder between `prefix` and the file at `path` is a link (not followed)."""
    folder = prefix.rstrip(os.sep)
    for part in path[len(prefix) :].split(os.sep)[:-1]:
        folder = os.path.join(folder, part)
        if os.path.islink(folder):
            return True
    return False
