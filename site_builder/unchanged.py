"""Skip a build whose inputs have not changed since it wrote the output folder.

After a build writes the site, the cache keeps the digest of everything it read (every file
under `records/`, `content/`, `templates/` and `static/`, the builder's code, the build's date
and kind), the size and modification time of every file it wrote, and its report. The next
build with the same digest, into an output folder that still holds exactly those files, reads
the report back instead of building: the site on disk is already what it would write.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import overload

from site_builder.cache import BuildCache, digest
from site_builder.claims import Verification
from site_builder.config import BuildConfig
from site_builder.models import BuildReport, Finding, Page
from site_builder.reuse import VERIFICATION_CODEC, code_digest

KIND = "build"
_FINDING_FIELDS = tuple(field.name for field in fields(Finding))


def inputs_key(config: BuildConfig) -> str:
    """Return the digest of everything a build reads, and of what kind of build it is."""
    parts: list[str | bytes] = [
        code_digest(),
        str(config.out_dir),
        config.build_date.isoformat(),
        str(config.include_drafts),
        str(config.production),
    ]
    root = os.fspath(config.root)
    for folder in config.input_dirs:
        for path in _files(os.fspath(folder)):
            try:
                parts += [os.path.relpath(path, root), Path(path).read_bytes()]
            except OSError:
                parts += [path, "unreadable"]
    return digest(*parts)


def remembered(cache: BuildCache, key: str, out_dir: Path) -> BuildReport | None:
    """Return the report of the build with this key, if the output folder is as it left it."""
    data = cache.read(KIND, key)
    if data is None:
        return None
    head, _, checked = data.partition(b"\n")
    try:
        raw = json.loads(head)
        if _manifest(out_dir) != {path: tuple(stat) for path, stat in raw["files"].items()}:
            return None
        # The files are on disk, as the manifest shows: the report names them, unread.
        pages = tuple(Page(path, b"") for path in raw["pages"])
        findings = tuple(_finding(fields) for fields in raw["findings"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    verifications = _StoredVerifications(checked)
    return BuildReport(pages, findings, raw["guides"], verifications, drafts=tuple(raw["drafts"]))


def remember(cache: BuildCache, key: str, report: BuildReport, out_dir: Path) -> None:
    """Keep what the next build with the same inputs needs to skip its work: a line of JSON
    (output files, findings), then the verifications, read only if the report shows them."""
    raw = {
        "files": _manifest(out_dir),
        "pages": [page.path for page in report.pages],
        "findings": [
            [_plain(getattr(f, name)) for name in _FINDING_FIELDS] for f in report.findings
        ],
        "guides": report.guides,
        "drafts": list(report.drafts),
    }
    checked = b"[" + b",".join(map(VERIFICATION_CODEC[0], report.verifications)) + b"]"
    cache.write(KIND, key, json.dumps(raw, ensure_ascii=False).encode("utf-8") + b"\n" + checked)
    cache.prune(KIND)


class _StoredVerifications(Sequence[Verification]):
    """The verifications of a remembered build, decoded when first read."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._items: list[Verification] | None = None

    def _decoded(self) -> list[Verification]:
        if self._items is None:
            raw = json.loads(self._data)
            load = VERIFICATION_CODEC[1]
            self._items = [load(json.dumps(item).encode("utf-8")) for item in raw]
        return self._items

    @overload
    def __getitem__(self, index: int) -> Verification: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Verification]: ...
    def __getitem__(self, index: int | slice) -> Verification | Sequence[Verification]:
        return self._decoded()[index]

    def __len__(self) -> int:
        return len(self._decoded())


def _manifest(out_dir: Path) -> dict[str, tuple[int, int]]:
    """Return (size, modification time in ns) of every file under `out_dir`, by its path
    inside it."""
    found = {}
    root = os.fspath(out_dir)
    for path in _files(root):
        stat = os.stat(path)
        found[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns)
    return found


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
