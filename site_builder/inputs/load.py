"""Read every input file: records (JSON), guides (Markdown + YAML front matter), settings, assets.

This is the only module that reads the project's input files (`decode` turns their bytes
into data; templates are only checked here, Jinja reads them). It does not validate; problems
met while reading are collected, never raised, so one run reports them all.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import Problem
from site_builder.inputs.decode import (
    MAX_RECORD_BYTES,
    ReadError,
    decode_record,
    decode_settings,
    decode_template,
    static_file,
)
from site_builder.inputs.kept_fronts import KeptFronts
from site_builder.inputs.listing import WILDCARD, Entry, KnownFiles, Named, listed
from site_builder.model.images import FORMATS, MAX_IMAGE_BYTES
from site_builder.model.raw import Asset, Inputs, RawDoc, RawImage, RawRecord, UnreadRecord
from site_builder.runtime import files

REGISTRY_NAME = "registry.json"
RULES_NAME = "rules.yaml"
ACKNOWLEDGED_NAME = "acknowledged.yaml"
VOCABULARY_NAME = "vocabulary.yaml"
RACY_SECONDS = 2.0
"""A file changed this recently is read again even if its status looks unchanged."""
_OPERATION_ID = re.compile(r'"operationId"\s*:\s*"([A-Za-z0-9._-]{1,100})"')
_UNDECODED = re.compile("[\udc80-\udcff]")
"""What Python makes of file-name bytes that are not UTF-8 (os.fsdecode's surrogate escapes)."""
NOT_REGULAR = "is not a regular file (a pipe, socket or device); refused"
"""Why an input that is a pipe, socket or device is not read (reading one would wait)."""


def load_inputs(
    config: BuildConfig,
    cache: BuildCache | None = None,
    known: KnownFiles | None = None,
    kept: Collection[str] = frozenset(),
) -> Inputs:
    """Read every input file, collecting read problems; a memory cache skips unchanged ones,
    and with `known` (the preview's) files nobody saw change are not looked at. The records
    are read as `normalize` iterates them, but with `known` here; those `kept` (by source:
    `kept_records`) are not read."""
    problems: list[Problem] = []
    records = _records(config, cache, known, kept)  # with `known`, read before `known.loaded`
    fronts = KeptFronts(cache)
    docs = [
        RawDoc(source, front, body, body_line)
        for source, (front, body, body_line) in _read_each(
            config, config.content_dir, "**/*.md", fronts.decode, problems, cache, known=known
        )
    ]
    fronts.keep()
    settings = RawDoc(relative_path(config.settings_file, config.root), {}, "")
    if os.path.lexists(config.settings_file):  # a folder or a dead link: said as such
        for source, data in _read_each(
            config, config.content_dir, "site.yaml", decode_settings, problems
        ):
            settings = RawDoc(source, data, "")
    else:
        problems.append(
            Problem(settings.source, "file", "missing: the site settings file is required")
        )
    registry = None
    for source, data in _read_each(
        config, config.content_dir, REGISTRY_NAME, decode_record, problems
    ):
        registry = RawRecord(source, data)
    rules, acknowledged, vocabulary = (
        _yaml_file(config, name, problems, cache)
        for name in (RULES_NAME, ACKNOWLEDGED_NAME, VOCABULARY_NAME)
    )
    if not (config.content_dir / VOCABULARY_NAME).exists():
        source = relative_path(config.content_dir / VOCABULARY_NAME, config.root)
        message = "missing: the record vocabulary file is required (see docs/vocabulary.md)"
        problems.append(Problem(source, "file", message))
    assets = [
        Asset(Path(source).name, data)
        for source, data in _read_each(config, config.assets_dir, "*", static_file, problems)
    ]
    # Templates are read by Jinja as it renders; here each is checked to be a readable UTF-8
    # file inside the project, so a bad one is a located problem before anything renders.
    for _ in _read_each(
        config, config.templates_dir, "**/*", decode_template, problems, skip=config.assets_dir
    ):
        pass
    static = [
        Asset(Path(source).relative_to("static").as_posix(), data)
        for source, data in _read_each(config, config.static_dir, "**/*", static_file, problems)
    ]
    inputs = Inputs(
        records=records,
        docs=tuple(docs),
        settings=settings,
        assets=tuple(assets),
        registry=registry,
        rules=rules,
        static=tuple(static),
        acknowledged=acknowledged,
        vocabulary=vocabulary,
        images=_images(config, known),
        problems=tuple(problems),
    )
    if known is not None:
        known.loaded()
    return inputs


RawOutcome = RawRecord | UnreadRecord | None
"""What reading one record file gave: the record, the problem reading it, or None when it is
not one to read (kept on disk, a folder, gone since the listing)."""


class RecordFiles:
    """The record files of a build, in sorted order, each read and decoded only when asked
    (`read`), so the raw records are never all in memory at once: iterated one by one, or
    read by index in the processes that validate them (`normalize`)."""

    def __init__(self, entries: Sequence[Entry], read: Callable[[Entry], RawOutcome]) -> None:
        self._entries, self._read = tuple(entries), read

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, index: int) -> RawOutcome:
        """Return what reading the file at `index` gives."""
        return self._read(self._entries[index])

    def __iter__(self) -> Iterator[RawRecord | UnreadRecord]:
        for index in range(len(self._entries)):
            if (record := self.read(index)) is not None:
                yield record


def _records(
    config: BuildConfig, cache: BuildCache | None, known: KnownFiles | None, kept: Collection[str]
) -> Iterable[RawRecord | UnreadRecord]:
    """Return each record file (none `kept`), read and decoded as it is reached, in sorted
    order; with `known` (the preview's), those nobody saw change are not looked at again."""

    def record(outcome: tuple[str, Any] | Problem | None) -> RawOutcome:
        if isinstance(outcome, Problem):
            return UnreadRecord(outcome, _operation_id_hint(config.root / outcome.source))
        return None if outcome is None else RawRecord(outcome[0], *outcome[1])

    folder, pattern = config.records_dir, "*.json"
    if known is not None:
        found = _outcomes(config, folder, pattern, _record_file, cache, known, kept)
        return tuple(item for item in map(record, found) if item is not None)

    def read(entry: Entry) -> RawOutcome:
        return record(_read_one(config, entry, _record_file, cache, None, kept))

    return RecordFiles(listed(folder, pattern), read)


def _record_file(raw: bytes) -> tuple[dict[str, Any], str]:
    """Decode one record file; with the sha256 of its bytes, which its record's digest is
    made of (`evidence.record_evidence`)."""
    return decode_record(raw), hashlib.sha256(raw).hexdigest()


def _images(config: BuildConfig, known: KnownFiles | None) -> tuple[RawImage, ...]:
    """Read every image file under content/; a symbolic link (to a file or a folder) or a file
    over the size limit is listed with why it is not read, for the prose naming it to say."""

    def read(entry: Entry) -> RawImage | None:
        return _image(config, entry)

    folder = config.content_dir
    if known is not None:
        found = known.each("images", folder, "**/*", read)
    else:
        found = [read(entry) for entry in listed(folder, "**/*")]
    return tuple(image for image in found if image is not None)


def _image(config: BuildConfig, entry: Entry) -> RawImage | None:
    """Read one listed file if it is an image (or a link); None for anything else."""
    path = Path(entry.path)
    is_image = path.suffix.lower().removeprefix(".") in FORMATS
    if not is_image and not entry.is_symlink():
        return None
    source = relative_path(path, config.root)
    try:
        if entry.is_symlink():
            if is_image or path.is_dir():
                return RawImage(source, refused="is a symbolic link; put the file itself there")
            return None
        info = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = files.regular_bytes(path) if info.st_size <= MAX_IMAGE_BYTES else b""
        size = max(info.st_size, len(data))
        if size > MAX_IMAGE_BYTES:
            limit = f"{MAX_IMAGE_BYTES:,} ({MAX_IMAGE_BYTES >> 20} MiB)"
            return RawImage(source, refused=f"is {size:,} bytes; the limit is {limit}")
        return RawImage(source, data)
    except OSError as error:
        return RawImage(source, refused=f"cannot be read: {error.strerror or error}")


def _yaml_file(
    config: BuildConfig, name: str, problems: list[Problem], cache: BuildCache | None
) -> RawDoc | None:
    """Read one optional YAML file of content/ as a mapping, or None if it is not there."""
    found = None
    read = _read_each(config, config.content_dir, name, decode_settings, problems, cache)
    for source, data in read:
        found = RawDoc(source, data, "")
    return found


def _operation_id_hint(path: Path) -> str | None:
    """Find the operationId in a record that failed to decode, so its guide is not an orphan
    (`regular_bytes` never waits on a pipe in its place)."""
    try:
        text = files.regular_bytes(path)[:MAX_RECORD_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return None
    match = _OPERATION_ID.search(text)
    return match.group(1) if match else None


def _read_each(
    config: BuildConfig,
    folder: Path,
    pattern: str,
    decode: Callable[[bytes], Any],
    problems: list[Problem],
    cache: BuildCache | None = None,
    skip: Path | None = None,
    known: KnownFiles | None = None,
) -> Iterator[tuple[str, Any]]:
    """Yield (source, decoded) for each matching file in sorted order (none under `skip`);
    record problems. With `known`, a folder's files that did not change are not looked at."""
    for outcome in _outcomes(config, folder, pattern, decode, cache, known, skip=skip):
        if isinstance(outcome, Problem):
            problems.append(outcome)
        elif outcome is not None:
            yield outcome


def _outcomes(
    config: BuildConfig,
    folder: Path,
    pattern: str,
    decode: Callable[[bytes], Any],
    cache: BuildCache | None,
    known: KnownFiles | None,
    leave: Collection[str] = frozenset(),
    skip: Path | None = None,
) -> Iterable[tuple[str, Any] | Problem | None]:
    """Return what reading each matching file gave (`_read_one`), in sorted order: read as
    iterated, or with `known` all at once (only the files that changed)."""

    def read(entry: Entry) -> tuple[str, Any] | Problem | None:
        return _read_one(config, entry, decode, cache, skip, leave)

    if known is not None and WILDCARD.search(pattern):
        return known.each(decode.__qualname__, folder, pattern, read)
    return map(read, listed(folder, pattern))


def _read_one(
    config: BuildConfig,
    entry: Entry,
    decode: Callable[[bytes], Any],
    cache: BuildCache | None,
    skip: Path | None,
    leave: Collection[str] = frozenset(),
) -> tuple[str, Any] | Problem | None:
    """Return (source, decoded) for one listed file, the problem reading it, or None when it
    is not a file to read (a folder, something under `skip`, gone since the listing, one to
    `leave`)."""
    name, root = entry.path, f"{config.root}/"
    if skip is not None and Path(name).is_relative_to(skip):
        return None
    source = name[len(root) :] if name.startswith(root) else relative_path(Path(name), config.root)
    if _UNDECODED.search(source):  # bytes the file system gave that are not UTF-8
        shown = source.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return Problem(shown, "file", "its name is not UTF-8 text; rename it")
    try:
        info: os.stat_result | None = entry.stat(follow_symlinks=False)
    except OSError:  # gone since the listing
        return None
    if entry.is_symlink():
        path = Path(name)
        try:
            target = os.stat(name).st_mode
            outside = not path.resolve().is_relative_to(config.root)
        except (OSError, RuntimeError):  # a loop of links, or one that points nowhere
            return Problem(source, "file", "cannot be read: the symlink points nowhere")
        if outside:
            return Problem(source, "file", "symlink points outside the project; refused")
        if not stat.S_ISREG(target):
            return _not_a_file(entry, source, target)
        info = None  # the file it names is read every time
    elif not stat.S_ISREG(info.st_mode):
        return _not_a_file(entry, source, info.st_mode)
    elif source in leave:  # a symlink is always read
        return None
    try:
        return source, _decoded(name, info, decode, cache)
    except ReadError as error:
        return Problem(source, error.location, error.message)
    except OSError as error:
        return Problem(source, "file", f"cannot be read: {error.strerror or error}")


def _not_a_file(entry: Entry, source: str, mode: int) -> Problem | None:
    """Return the problem of an input that is not a regular file: a pipe or device is
    refused (reading one would wait forever), and so is a folder where one file is named
    (content/site.yaml); a folder a wildcard matched (records/old.json/) is passed over."""
    if stat.S_ISDIR(mode):
        return (
            Problem(source, "file", "is a folder, not a file") if isinstance(entry, Named) else None
        )
    return Problem(source, "file", NOT_REGULAR)


def _decoded(
    name: str,
    info: os.stat_result | None,
    decode: Callable[[bytes], Any],
    cache: BuildCache | None,
) -> Any:
    """Return the file's bytes decoded. With the preview's memory cache, a regular file whose
    status (modified and changed times, size, inode) is that of a file decoded in the last
    build is not read again, unless it changed within RACY_SECONDS (a time stamp that coarse
    could hide a second write), as git does."""
    if cache is None:
        return decode(files.regular_bytes(name))
    if info is None or time.time() - info.st_mtime < RACY_SECONDS:
        return cache.decoded(decode, files.regular_bytes(name))
    status = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev)
    key = ("file", decode.__qualname__, name, status)
    return cache.reused(key, lambda: cache.decoded(decode, files.regular_bytes(name)))


def relative_path(path: Path, root: Path) -> str:
    """Return `path` relative to the project root, with forward slashes."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
