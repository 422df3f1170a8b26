"""Read every input file: records (JSON), guides (Markdown + YAML front matter), settings, assets.

This is the only module that reads the project's input files (`decode` turns their bytes
into data; templates are only checked here, Jinja reads them). It does not validate; problems
met while reading are collected, never raised, so one run reports them all.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from site_builder.cache import BuildCache
from site_builder.config import BuildConfig
from site_builder.decode import (
    MAX_RECORD_BYTES,
    ReadError,
    decode_doc,
    decode_record,
    decode_settings,
    decode_template,
    static_file,
)
from site_builder.errors import Problem
from site_builder.images import FORMATS, MAX_IMAGE_BYTES
from site_builder.inputs import Asset, Inputs, RawDoc, RawImage, RawRecord

REGISTRY_NAME = "registry.json"
RULES_NAME = "rules.yaml"
ACKNOWLEDGED_NAME = "acknowledged.yaml"
VOCABULARY_NAME = "vocabulary.yaml"
RACY_SECONDS = 2.0
"""A file changed this recently is read again even if its status looks unchanged."""
_WILDCARD = re.compile(r"[*?[]")
_OPERATION_ID = re.compile(r'"operationId"\s*:\s*"([A-Za-z0-9._-]{1,100})"')


def load_inputs(config: BuildConfig, cache: BuildCache | None = None) -> Inputs:
    """Read every input file, collecting read problems; a memory cache skips unchanged ones."""
    problems: list[Problem] = []
    records = [
        RawRecord(source, data)
        for source, data in _read_each(
            config, config.records_dir, "*.json", decode_record, problems, cache
        )
    ]
    unreadable_ids = frozenset(
        hint
        for source in sorted({problem.source for problem in problems})
        if (hint := _operation_id_hint(config.root / source))
    )
    docs = [
        RawDoc(source, front, body, body_line)
        for source, (front, body, body_line) in _read_each(
            config, config.content_dir, "**/*.md", decode_doc, problems, cache
        )
    ]
    settings = RawDoc(relative_path(config.settings_file, config.root), {}, "")
    if config.settings_file.is_file():
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
    return Inputs(
        records=tuple(records),
        docs=tuple(docs),
        settings=settings,
        assets=tuple(assets),
        registry=registry,
        rules=rules,
        static=tuple(static),
        acknowledged=acknowledged,
        vocabulary=vocabulary,
        images=tuple(_images(config)),
        problems=tuple(problems),
        unreadable_ids=unreadable_ids,
    )


def _images(config: BuildConfig) -> Iterator[RawImage]:
    """Read every image file under content/; a symbolic link (to a file or a folder) or a file
    over the size limit is listed with why it is not read, for the prose naming it to say."""
    for entry in sorted(_tree(config.content_dir), key=lambda entry: Path(entry.path).parts):
        path = Path(entry.path)
        source = relative_path(path, config.root)
        is_image = path.suffix.lower().removeprefix(".") in FORMATS
        try:
            if entry.is_symlink():
                if is_image or path.is_dir():
                    yield RawImage(source, refused="is a symbolic link; put the file itself there")
            elif is_image and entry.is_file(follow_symlinks=False):
                size = entry.stat(follow_symlinks=False).st_size
                data = path.read_bytes() if size <= MAX_IMAGE_BYTES else b""
                size = max(size, len(data))
                if size > MAX_IMAGE_BYTES:
                    limit = f"{MAX_IMAGE_BYTES:,} ({MAX_IMAGE_BYTES >> 20} MiB)"
                    yield RawImage(source, refused=f"is {size:,} bytes; the limit is {limit}")
                else:
                    yield RawImage(source, data)
        except OSError as error:
            yield RawImage(source, refused=f"cannot be read: {error.strerror or error}")


def _tree(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Yield every entry under `folder` named like an image, and every symbolic link, not
    following links (the listing says which an entry is: the guides cost no call each)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _tree(Path(entry.path))
        elif entry.is_symlink() or entry.name.rpartition(".")[2].lower() in FORMATS:
            yield entry


def _yaml_file(
    config: BuildConfig, name: str, problems: list[Problem], cache: BuildCache | None
) -> RawDoc | None:
    """Read one optional YAML file of content/ as a mapping, or None if it is not there."""
    found = None
    files = _read_each(config, config.content_dir, name, decode_settings, problems, cache)
    for source, data in files:
        found = RawDoc(source, data, "")
    return found


def _operation_id_hint(path: Path) -> str | None:
    """Find the operationId in a record that failed to decode, so its guide is not an orphan."""
    try:
        text = path.read_bytes()[:MAX_RECORD_BYTES].decode("utf-8", errors="replace")
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
) -> Iterator[tuple[str, Any]]:
    """Yield (source, decoded) for each matching file in sorted order (none under `skip`);
    record problems."""
    root = f"{config.root}/"
    for entry in _listed(folder, pattern):
        name = entry.path
        if skip is not None and Path(name).is_relative_to(skip):
            continue
        source = (
            name[len(root) :] if name.startswith(root) else relative_path(Path(name), config.root)
        )
        try:
            info: os.stat_result | None = entry.stat(follow_symlinks=False)
        except OSError:  # gone since the listing
            continue
        if entry.is_symlink():
            path = Path(name)
            if not path.resolve().is_relative_to(config.root):
                problems.append(
                    Problem(source, "file", "symlink points outside the project; refused")
                )
                continue
            if not path.exists():
                problems.append(
                    Problem(source, "file", "cannot be read: the symlink points nowhere")
                )
                continue
            info = None  # the file it names is read every time
        elif not stat.S_ISREG(info.st_mode):
            continue
        if info is None and not os.path.isfile(name):
            continue
        try:
            yield source, _decoded(name, info, decode, cache)
        except ReadError as error:
            problems.append(Problem(source, error.location, error.message))
        except OSError as error:
            problems.append(Problem(source, "file", f"cannot be read: {error.strerror or error}"))


def _listed(folder: Path, pattern: str) -> list[os.DirEntry[str]]:
    """Return what `folder.glob(pattern)` finds (`pattern` a file name, wildcards allowed,
    after `**/` for every folder below too), in path order, as the folders' listings: the
    listing says which entry is a folder or a link, so a folder of thousands of guides costs
    one call per file (its status), not three. Links to folders are not followed."""
    below, _, name = pattern.rpartition("/")
    if below not in ("", "**"):
        raise ValueError(f"unsupported pattern {pattern!r}")
    if not below and not _WILDCARD.search(name):  # one file: not the whole folder's listing
        named = _Named(os.path.join(folder, name))
        return [named] if os.path.lexists(named.path) else []  # type: ignore[list-item]
    match = re.compile(fnmatch.translate(name)).fullmatch
    found: list[os.DirEntry[str]] = []

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


class _Named:
    """A file named exactly, described as a folder listing's entry describes it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        return os.stat(self.path, follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        return os.path.islink(self.path)


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
        return decode(Path(name).read_bytes())
    if info is None or time.time() - info.st_mtime < RACY_SECONDS:
        return cache.decoded(decode, Path(name).read_bytes())
    status = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev)
    key = ("file", decode.__qualname__, name, status)
    return cache.reused(key, lambda: cache.decoded(decode, Path(name).read_bytes()))


def relative_path(path: Path, root: Path) -> str:
    """Return `path` relative to the project root, with forward slashes."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
