"""Skip a build or an audit whose inputs have not changed since one was done.

After a build or an audit, the cache keeps its report (findings, pages, the cache keys of its
verifications) under the digest of everything it read: every file under `records/`,
`content/`, `templates/` and `static/`, the builder's code, the build's date and kind. A build
that wrote the site also keeps the size and modification time of every file it wrote. An
audit with the same digest reads the report back; so does a build into an output folder that
still holds exactly those files (the site on disk is already what it would write). Each input
file's sha256 is kept under its status (size, times, inode), so a file whose status did not
change is not read again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import fields
from functools import partial
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from site_builder.cache.reuse import VERIFY, code_digest
from site_builder.cache.store import BuildCache, digest
from site_builder.config import BuildConfig
from site_builder.errors import OutputError
from site_builder.model.claims import Later, Verification
from site_builder.model.models import BuildReport, Finding, Page
from site_builder.runtime import files
from site_builder.runtime.workers import cores
from site_builder.verify.kept_verifications import load_verification

KIND = "build"
"""The cache kind of what a build wrote, by its inputs' key and output folder."""
REPORT = "report"
"""The cache kind of a build's or an audit's report, by its inputs' key."""
DIGESTS = "input digests"
"""The cache kind of the input files' digests, by project and output folder."""
RECENT_NS = 2_000_000_000
"""A file changed this close to a build's start is judged by its bytes, never its status."""
_FINDING_FIELDS = tuple(field.name for field in fields(Finding))


def inputs_key(
    config: BuildConfig, cache: BuildCache | None = None, digests: dict[str, str] | None = None
) -> str:
    """Return the digest of everything a build reads (`input_digests`, unless given), and of
    what kind of build it is."""
    parts: list[str | bytes] = [
        code_digest(),
        config.build_date.isoformat(),
        str(config.include_drafts),
        str(config.production),
    ]
    for name, sha256 in (input_digests(config, cache) if digests is None else digests).items():
        parts += [name, sha256]
    return digest(*parts)


def input_digests(config: BuildConfig, cache: BuildCache | None = None) -> dict[str, str]:
    """Return the sha256 of every input file by its path in the project ("unreadable" for a
    file that cannot be read). With `cache`, a file whose status (size, times, inode) is what
    it was when the last build digested it is not read again (git's rule: its change time
    was 2 s old then, so any write since has changed it). The files to read are read and
    hashed over a thread a core (both release the interpreter's lock)."""
    root = os.fspath(config.root)
    where = digest(root, str(config.out_dir))
    known = _known_digests(cache, where)
    statuses: dict[str, list[object]] = {}
    found: dict[str, str] = {}
    to_read: dict[str, str] = {}
    links: dict[str, str] = {}
    before = time.time_ns() - RECENT_NS
    for folder in config.input_dirs:
        for path in _files(os.fspath(folder)):
            name = os.path.relpath(path, root)
            try:
                info = os.lstat(path)
                if S_ISLNK(info.st_mode):  # read every time, and digested with its target
                    links[name] = os.path.realpath(path)
                    info = os.stat(path)
            except (OSError, ValueError):
                found[name] = "unreadable"
                continue
            if not S_ISREG(info.st_mode):  # a pipe is never opened: it would wait forever
                found[name] = "not a file"
                continue
            status: list[object] = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
            entry = known.get(name)
            if entry is not None and entry[:4] == status and name not in links:
                found[name] = str(entry[4])
            else:
                found[name], to_read[name] = "unreadable", path
            if info.st_ctime_ns < before and name not in links:
                statuses[name] = status
    found.update(_sha256s(to_read))
    for name, target in links.items():
        found[name] = f"{found[name]} via {target}"
    settled = {
        name: [*status, found[name]]
        for name, status in statuses.items()
        if found[name] != "unreadable"
    }
    if cache is not None and settled != known:
        cache.write(DIGESTS, where, json.dumps(settled).encode("utf-8"))
    return found


def _sha256s(paths: dict[str, str]) -> dict[str, str]:
    """Return the sha256 of each file by name, leaving out those that cannot be read: in
    one slice of the files a core, each read and hashed by a thread."""
    names = list(paths)
    count = min(cores(), max(1, len(names) // 64))  # a few files are not worth a thread
    slices = [names[start::count] for start in range(count)]

    def hashed(names: list[str]) -> dict[str, str]:
        sha256s = {}
        for name in names:
            with suppress(OSError):
                sha256s[name] = hashlib.sha256(files.regular_bytes(paths[name])).hexdigest()
        return sha256s

    if count == 1:
        return hashed(names)
    with ThreadPoolExecutor(count) as pool:
        return {name: sha256 for part in pool.map(hashed, slices) for name, sha256 in part.items()}


def _known_digests(cache: BuildCache | None, where: str) -> dict[str, list[object]]:
    """Return the status and sha256 of each input file the last build digested, by name."""
    data = cache.read(DIGESTS, where) if cache is not None else None
    try:
        known = json.loads(data) if data is not None else {}
    except ValueError:
        return {}
    return known if isinstance(known, dict) else {}


def input_times(config: BuildConfig) -> dict[str, tuple[int, int]]:
    """Return (size, modification time in ns) of every input file, taken before `inputs_key`
    reads them: `inputs_unchanged` compares them when the build is done."""
    return {
        path: (stat.st_size, stat.st_mtime_ns)
        for folder in config.input_dirs
        for path in _files(os.fspath(folder))
        if (stat := _stat(path)) is not None
    }


def inputs_unchanged(
    config: BuildConfig,
    times: dict[str, tuple[int, int]],
    key: str,
    since: int,
    cache: BuildCache | None = None,
) -> bool:
    """Whether the inputs are still those a build that began at `since` (ns) read: the same
    files, sizes and times, and (git's rule) the same bytes for any file modified within
    2 s of the start, whose time may not show a later save. With `cache`, only those files
    are read again: the others' digests are kept under their status (`input_digests`)."""
    if input_times(config) != times:
        return False
    recent = any(mtime > since - RECENT_NS for _, mtime in times.values())
    return not recent or inputs_key(config, cache) == key


def remembered(cache: BuildCache, key: str, out_dir: Path | None = None) -> BuildReport | None:
    """Return the report of the build or audit with this key; with `out_dir`, only that of a
    build that wrote it, if the folder is as that build left it."""
    try:
        if out_dir is not None:
            data = cache.read(KIND, digest(key, str(out_dir)))
            if data is None or _manifest(out_dir) != {
                path: tuple(stat) for path, stat in json.loads(data).items()
            }:
                return None
        data = cache.read(REPORT, key)
        if data is None:
            return None
        raw = json.loads(data)
        # The files are on disk, as the manifest shows: the report names them, unread.
        pages = tuple(Page(path, b"") for path in raw["pages"])
        findings = tuple(_finding(fields) for fields in raw["findings"])
        verified = raw["verified"]
        if not all(cache.file(VERIFY, entry).is_file() for entry, _ in verified):
            return None  # pruned since: the report could not list them
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    verifications = Later(partial(_stored_verifications, cache, verified))
    return BuildReport(pages, findings, raw["guides"], verifications, drafts=tuple(raw["drafts"]))


def remember(cache: BuildCache, key: str, report: BuildReport, out_dir: Path | None) -> None:
    """Keep what the next build or audit with the same inputs needs to skip its work: the
    report's findings, pages and the cache keys of its verifications (read only if the report
    shows them: encoding 10,000 of them again took 3.5 s), and with `out_dir` the files the
    build wrote there."""
    raw = {
        "pages": [page.path for page in report.pages],
        "findings": [
            [_plain(getattr(f, name)) for name in _FINDING_FIELDS] for f in report.findings
        ],
        "guides": report.guides,
        "drafts": list(report.drafts),
        "verified": [[checked.stored_as, checked.source] for checked in report.verifications],
    }
    cache.write(REPORT, key, json.dumps(raw, ensure_ascii=False).encode("utf-8"))
    cache.prune(REPORT)
    if out_dir is not None:
        manifest = json.dumps(_manifest(out_dir)).encode("utf-8")
        cache.write(KIND, digest(key, str(out_dir)), manifest)
        cache.prune(KIND)


def _stored_verifications(cache: BuildCache, entries: list[list[str]]) -> list[Verification]:
    """Return the verifications of a remembered build (`Later` reads them when first asked)."""
    items = []
    for entry, source in entries:
        data = cache.read(VERIFY, entry)
        if data is None:
            raise OutputError(cache.folder, f"the verification of {source} is gone; build again")
        items.append(load_verification(data))
    return items


def _manifest(out_dir: Path) -> dict[str, tuple[int, int]]:
    """Return (size, modification time in ns) of every file under `out_dir`, by its path
    inside it."""
    found = {}
    root = os.fspath(out_dir)
    for path in _files(root):
        stat = os.stat(path)
        found[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns)
    return found


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _files(folder: str) -> list[str]:
    """Return the path of every file under `folder` (not following symlinked folders),
    sorted."""
    found = []
    for directory, _, names in os.walk(folder):
        found += [os.path.join(directory, name) for name in names]
    return sorted(found)


def _plain(value: object) -> object:
    """Return a finding's field as JSON can hold it."""
    return list(value) if isinstance(value, tuple) else value


def _finding(values: list[object]) -> Finding:
    """Return the finding `remember` stored."""
    named = dict(zip(_FINDING_FIELDS, values, strict=True))
    named["related"] = tuple(named["related"])  # type: ignore[arg-type]
    return Finding(**named)  # type: ignore[arg-type]
