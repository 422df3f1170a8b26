"""A content-addressed store of build results, in a folder beside the project (`.cache/`).

Each entry is a file named by the hash of everything that produced it; its first line is the
sha256 of the rest. Entries are written to a temporary file and renamed into place, and checked
on every read: a build killed while writing leaves at most an unused temporary file, and an
entry that does not match its checksum is a miss (and is removed), never a wrong page.
Entries hold text and JSON only, so nothing read back from the cache is ever executed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Hashable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

from site_builder.runtime.files import NotRegular, opened

T = TypeVar("T")

VERSION = "4"
"""Bumped when the entry format changes; entries of other versions are never read."""
_MISSING = object()
STALE_TEMPORARY_SECONDS = 3600
"""A temporary file this old belongs to a build that was killed: it is removed."""


def digest(*parts: str | bytes) -> str:
    """Return the sha256 of `parts`, each length-prefixed so no two splits collide (a file
    name that is not UTF-8 is hashed as the bytes the file system gave)."""
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        hasher.update(f"{len(data)}:".encode())
        hasher.update(data)
    return hasher.hexdigest()


class BuildCache:
    """Entries of one project's cache, by kind (`verify`, `page`) and key.

    With `memory`, decoded entries are also held in memory from one build to the next (the
    preview keeps one cache for its whole run); only the entries the last build used stay.
    """

    def __init__(self, folder: Path, *, memory: bool = False) -> None:
        self.folder = folder / f"v{VERSION}"
        self.used: dict[str, set[str]] = defaultdict(set)
        self.memory: dict[tuple[str, str], object] | None = {} if memory else None
        self.hits = 0
        self.misses = 0
        self.added: set[str] = set()
        """The kinds this build wrote entries of (only those can have grown)."""
        self._kept: dict[Hashable, Any] = {}
        self._kept_before: dict[Hashable, Any] = {}
        self._pending: list[tuple[str, str, bytes | Callable[[], bytes], bool]] = []
        self._retired: list[dict[Hashable, Any]] = []
        self._folders: set[str] = set()
        """The kinds whose folder this cache has made or written to."""

    def begin(self) -> None:
        """Start counting what one build uses. What the build before last kept is let go by
        `flush` (with `memory`), after the new site is shown: freeing it takes a while."""
        self.used = defaultdict(set)
        self.hits = self.misses = 0
        self.added = set()
        if self.memory is not None:
            self._retired.append(self._kept_before)
        self._kept_before, self._kept = self._kept, {}

    def decoded(self, decode: Callable[[bytes], T], raw: bytes) -> T:
        """Return `decode(raw)`; with `memory`, the last builds' result for the same bytes
        (decoding is a pure function of a file's bytes; results are never changed)."""
        return self.reused((decode.__qualname__, raw), lambda: decode(raw))

    def reused(self, key: Hashable, compute: Callable[[], T], *, in_build: bool = False) -> T:
        """Return `compute()`, or with `memory` what it returned for `key` in the last build
        that asked (the caller makes the key hold everything the result depends on); with
        `in_build`, also what it returned earlier in this build when there is no `memory`."""
        if self.memory is None and not in_build:
            return compute()
        # A key is hashed twice when the last build had it (tuples do not keep their hash):
        # what it kept then is what this build would compute or has computed.
        value = self._kept_before.get(key, _MISSING)
        if value is _MISSING:
            value = self._kept.get(key, _MISSING)
            if value is not _MISSING:
                return value  # type: ignore[no-any-return]
            value = compute()
        self._kept[key] = value
        return value  # type: ignore[no-any-return]

    def recall(self, kind: str, key: str) -> object | None:
        """Return a decoded entry held in memory, or None."""
        if self.memory is None:
            return None
        value = self.memory.get((kind, key))
        if value is not None:
            self.used[kind].add(key)
            self.hits += 1
        return value

    def drop_other_versions(self) -> None:
        """Remove the entries of other cache versions: an upgrade left them, none is read."""
        for path in self.folder.parent.glob("v*"):
            if path != self.folder and path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)

    def keep(self, kind: str, key: str) -> None:
        """Count an entry as used by this build without reading it (`prune` keeps it)."""
        self.used[kind].add(key)

    def hold(self, kind: str, key: str, value: object) -> None:
        """Hold a decoded entry in memory for the next build (with `memory` only)."""
        if self.memory is not None:
            self.memory[(kind, key)] = value

    def forget_unused(self) -> None:
        """Drop from memory every entry the last build did not use."""
        if self.memory is not None:
            self.memory = {
                (kind, key): value
                for (kind, key), value in self.memory.items()
                if key in self.used.get(kind, ())
            }

    def read(self, kind: str, key: str) -> bytes | None:
        """Return the entry's payload, or None when it is missing or damaged."""
        return self._checked(kind, key, None)

    def read_head(self, kind: str, key: str) -> bytes | None:
        """Return the head of an entry whose payload is `headed`, checked against the head's
        own checksum: the rest of the entry is neither read nor checked (`read` checks it).
        None when it is missing or its head is damaged."""
        self.used[kind].add(key)
        path = os.path.join(self.folder, kind, key)
        try:
            with opened(path, follow=False) as stream:
                stream.readline()  # the checksum of the whole payload
                checksum, head = stream.readline(), stream.readline()
        except NotRegular:  # a symlink, a FIFO: never read, removed
            return self._missed(path)
        except OSError:
            return self._missed()
        if hashlib.sha256(head[:-1]).hexdigest().encode("ascii") + b"\n" != checksum:
            return self._missed(path)
        self.hits += 1
        return head[:-1]

    def read_file(self, kind: str, key: str, sha256: str) -> bytes | None:
        """Return a file entry (see `write`) if it holds bytes of that sha256, else None."""
        return self._checked(kind, key, sha256)

    def _checked(self, kind: str, key: str, sha256: str | None) -> bytes | None:
        """Return an entry's payload if it matches its checksum (its first line, unless
        `sha256` is given); remove a damaged one."""
        self.used[kind].add(key)
        path = os.path.join(self.folder, kind, key)  # not a Path: 10,000 reads a build
        try:
            with opened(path, follow=False) as stream:
                data = stream.read()
        except NotRegular:  # a symlink, a FIFO: never read, removed
            return self._missed(path)
        except OSError:
            return self._missed()
        if sha256 is None:
            checksum, newline, data = data.partition(b"\n")
            sha256 = checksum.decode("ascii", "replace") if newline else ""
        if hashlib.sha256(data).hexdigest() != sha256:
            return self._missed(path)
        self.hits += 1
        return data

    def _missed(self, damaged: str | None = None) -> None:
        """Count a miss, removing the `damaged` entry's file if there is one."""
        if damaged is not None:
            with suppress(OSError):
                os.unlink(damaged)
        self.misses += 1

    def file(self, kind: str, key: str) -> Path:
        """Return where an entry is (a build links a file entry, see `write`, into the site)."""
        return self._path(kind, key)

    def write(
        self, kind: str, key: str, payload: bytes | Callable[[], bytes], *, file: bool = False
    ) -> bool:
        """Store an entry atomically; a cache that cannot be written is only slower. With
        `memory` (the preview, which serves a rebuild before its checks) the entry is written
        by `flush`, off the path to the new site, and `payload` may be a function making it.
        A `file` entry holds `payload` alone, readable by all, so a site can link to it: the
        caller keeps its sha256 (in another entry) and reads it back with `read_file`.
        Return whether the entry is on disk now."""
        self.used[kind].add(key)
        self.added.add(kind)
        if self.memory is not None:
            self._pending.append((kind, key, payload, file))
            return False
        return self._store(kind, key, payload() if callable(payload) else payload, file)

    def flush(self) -> None:
        """Write the entries `write` put off, and let go of what `begin` retired."""
        pending, self._pending = self._pending, []
        for kind, key, payload, file in pending:
            self._store(kind, key, payload() if callable(payload) else payload, file)
        self._retired.clear()

    def _store(self, kind: str, key: str, payload: bytes, file: bool = False) -> bool:
        path = self._path(kind, key)
        # Named for this process and thread, so no other writer can be writing the same
        # temporary file (one left by a killed process of the same id is overwritten).
        temporary = path.parent / f".tmp-{os.getpid()}-{threading.get_ident()}"
        try:
            if kind not in self._folders:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._folders.add(kind)
            with open(temporary, "wb", opener=_shared if file else _private) as stream:
                if not file:
                    stream.write(hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n")
                stream.write(payload)
            os.replace(temporary, path)
        except OSError:
            self._folders.discard(kind)
            return False
        return True

    def prune(self, kind: str, keep_factor: int = 2) -> None:
        """Remove entries of `kind` this build did not use, once they outnumber the used ones
        `keep_factor` times (so edits back and forth still hit); and stale temporary files."""
        folder = self.folder / kind
        try:
            names = os.listdir(folder)  # names alone: 30 times faster than Paths at 90,000
        except OSError:
            return
        used = self.used.get(kind, set())
        crowded = len(names) > keep_factor * max(len(used), 1)
        for name in names:
            if name in used:
                continue
            path = folder / name
            temporary = name.startswith(".tmp-")
            if temporary and not _older_than(path, STALE_TEMPORARY_SECONDS):
                continue
            if temporary or crowded:
                path.unlink(missing_ok=True)

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key


def headed(head: bytes, rest: bytes) -> bytes:
    """Return a payload whose head `read_head` can read and check alone: the head's checksum,
    the head (one line) and the rest, a line each."""
    if b"\n" in head:
        raise ValueError("an entry's head is one line")
    return b"\n".join((hashlib.sha256(head).hexdigest().encode("ascii"), head, rest))


def _private(path: str, flags: int) -> int:
    """Open a temporary entry for this user alone, never through a symlink."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


def _shared(path: str, flags: int) -> int:
    """Open a temporary file entry readable by all (a site's file), never through a symlink."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o644)


def _older_than(path: Path, seconds: float) -> bool:
    """Whether the file was last modified more than `seconds` ago (gone counts as old)."""
    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return True


def reused(cache: BuildCache | None, key: Hashable, compute: Callable[[], T]) -> T:
    """Return `compute()`, or with the preview's memory cache the last rebuild's result."""
    return compute() if cache is None else cache.reused(key, compute)
