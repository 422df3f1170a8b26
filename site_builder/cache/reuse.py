"""What a build may reuse from an earlier one: the keys of cached results, and their JSON form.

A record's verification is a function of the record, the rules, the vocabulary and the code.
A guide page is a function of that guide (record, prose, front matter), of the site's shared
inputs (the code, the templates and assets, the settings, rules, vocabulary, registry and the
URLs of all guides) and of the summaries (title, description, reader job, tags, dates, verdict,
status, draft state, aliases) of the guides it shows: newer, older, related and the nearest
pages its overlap audit names. Change one record's body or one guide's prose and that page is
rendered again; change a title and the pages that show it are too; change a template, the
settings or the set of guides and every page is. Guide templates that read `site.guides`
make every guide's summary part of every page's key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from contextlib import suppress
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from site_builder.cache.fragments import runs
from site_builder.cache.store import BuildCache, digest
from site_builder.model.models import Guide, Site
from site_builder.model.record_model import Evidence
from site_builder.runtime import files

T = TypeVar("T")

PACKAGE = Path(__file__).resolve().parent.parent
LIBRARIES = (
    "jinja2",
    "markupsafe",
    "markdown-it-py",
    "mdit-py-plugins",
    "pydantic",
    "selectolax",
    "pillow",
    "pygments",
)
"""Libraries whose version can change what a page says."""


@cache
def code_digest() -> str:
    """Return a digest of the builder's own code and the libraries that shape its output."""
    parts: list[str | bytes] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts += [path.relative_to(PACKAGE).as_posix(), path.read_bytes()]
    for name in LIBRARIES:
        try:
            parts += [name, metadata.version(name)]
        except metadata.PackageNotFoundError:
            parts += [name, "-"]
    return digest(*parts)


def folder_files(folder: Path, skip: Path | None = None) -> dict[str, bytes]:
    """Return the bytes of every file under `folder` (but those under `skip`) by its path
    inside it, in path order, each read once and opened as a regular file: one swapped for
    anything else since it was listed raises `files.NotRegular` (a named pipe would be
    waited on forever), one removed since is left out."""
    found = {}
    for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
        if path.is_dir() or (skip is not None and path.is_relative_to(skip)):
            continue
        with suppress(FileNotFoundError):
            found[path.relative_to(folder).as_posix()] = files.regular_bytes(path)
    return found


def files_digest(found: Mapping[str, bytes]) -> str:
    """Return a digest of files (`folder_files`): names and bytes."""
    return digest(*(part for name, data in found.items() for part in (name, data)))


def _record_json(record: dict[str, Any]) -> str:
    """Return a record as JSON, keys in the record's order (which pages follow)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def verify_digest(site: Site) -> str:
    """Return the digest of what every record's verification reads besides the record."""
    vocabulary = site.vocabulary.model_dump_json() if site.vocabulary else ""
    return digest(VERIFY, code_digest(), site.rules.model_dump_json(), vocabulary)


def record_digest(guide: Guide, cache: BuildCache | None) -> str:
    """Return the digest of the guide's record (see `evidence_digest`)."""
    return evidence_digest(guide.evidence, cache)


def evidence_digest(evidence: Evidence, cache: BuildCache | None) -> str:
    """Return the digest of a record. A record read from a file brings it (made of the file's
    bytes, `evidence.record_evidence`), as does one left on disk (`kept_records`). Any other
    (made in memory) is digested as JSON once per record object in a build (pages, tag pages
    and verification all ask), and with a memory cache across rebuilds (the memo keeps the
    record alive, so its identity cannot pass to another object)."""
    if evidence.digest:
        return evidence.digest
    record = evidence.record
    if cache is None:
        return digest(_record_json(record))
    key = ("record", id(record))
    held = cache.reused(key, lambda: (record, digest(_record_json(record))), in_build=True)
    return held[1]


def verification_key(guide: Guide, verify_key: str, cache: BuildCache | None) -> str:
    """Return the key of a record's verification; with a memory cache (the preview's), the
    last rebuild's while the record is the same object (the memo keeps it alive)."""
    evidence = guide.evidence
    if cache is None or cache.memory is None:
        return digest(verify_key, evidence.source, record_digest(guide, cache))
    key = ("verify key", verify_key, evidence.source, id(evidence.record))
    held = cache.reused(
        key,
        lambda: (evidence.record, digest(verify_key, evidence.source, record_digest(guide, cache))),
    )
    return held[1]


def site_digest(site: Site, templates_key: str, *, every_guide: bool) -> str:
    """Return the digest of what every page of one kind reads of the site: its shared inputs
    and, when its template reads `site.guides`, every guide's summary. Not the guides' paths:
    what a page shows of other guides is part of its own key (`guide_page_key`,
    `list_page_key`), and a guide page's prose links are checked apart (`Page.lookups`)."""
    summaries = [_summary(guide) for guide in site.guides] if every_guide else []
    images = sorted(site.images.items())  # a page shows an image by its hashed name and size
    registry = [entry.model_dump_json() for entry in site.registry]
    return digest(
        "site",
        code_digest(),
        templates_key,
        site.settings.model_dump_json(),
        site.rules.model_dump_json(),
        site.vocabulary.model_dump_json() if site.vocabulary else "",
        json.dumps(registry),
        json.dumps([asset.name for asset in site.static]),
        # The assets as loaded, whose fingerprinted URLs the pages link (not the templates').
        json.dumps(
            [(asset.name, hashlib.sha256(asset.content).hexdigest()) for asset in site.assets]
        ),
        json.dumps([(path, i.url, i.width, i.height, i.problem) for path, i in images]),
        str(site.production),
        json.dumps(summaries, default=str),
    )


def guide_page_key(
    guide: Guide, site_key: str, shown: Iterable[Guide], cache: BuildCache | None
) -> str:
    """Return the key of one guide page's HTML: the guide, the site, and the guides it shows
    (newer, older, related, the nearest pages of its overlap audit). The preview keeps these
    keys between rebuilds (`page_keys`)."""
    return digest(
        "page",
        site_key,
        summary_text(guide, cache),
        record_digest(guide, cache),
        guide.body,
        str(guide.body_line),
        *(summary_text(other, cache) for other in shown),
    )


def list_page_key(
    site_key: str, path: str, guides: Iterable[Guide], cache: BuildCache | None
) -> str:
    """Return the key of a page listing guides (a tag page): the site and every input of
    each guide it lists. With a memory cache (the preview's), the digests of each run of
    guides (`fragments.runs`) are joined once while its guides are the same objects."""
    if cache is None or cache.memory is None:
        listed = "".join(guide_digest(guide, cache) for guide in guides)
    else:
        listed = "".join(_run_digests(run, cache) for run in runs(guides))
    return digest("list", site_key, path, listed)


def _run_digests(run: list[Guide], cache: BuildCache) -> str:
    """Return the digests of a run of guides, joined; the last rebuild's for the same objects
    (the memo keeps them alive, so their identities cannot pass to other objects)."""
    key = ("run digests", tuple(map(id, run)))
    return cache.reused(key, lambda: (run, "".join(guide_digest(g, cache) for g in run)))[1]


def guide_digest(guide: Guide, cache: BuildCache | None) -> str:
    """Return the digest of every input of one guide (its summary, record and prose), once
    per guide object in a build: a guide is listed on several tag pages."""
    if cache is None:
        return digest(summary_text(guide, None), record_digest(guide, None), guide.body)
    held = cache.reused(
        ("guide digest", id(guide)),
        lambda: (
            guide,
            digest(summary_text(guide, cache), record_digest(guide, cache), guide.body),
        ),
        in_build=True,
    )
    return held[1]


def remembered_fragment(
    cache: BuildCache | None, scope: str, render: Callable[..., T]
) -> Callable[..., T]:
    """Return `render`; with a memory cache (the preview's), one that returns what
    `render(guide, *args)` returned for the same guide object and `args` under the same
    `scope` in the last rebuild (a guide is the same object while its inputs are; `scope`
    digests all else `render` may read). The memo keeps the guide alive, so its identity
    cannot pass to another object."""
    if cache is None or cache.memory is None:
        return render

    def fragment(guide: Guide, *args: Hashable) -> T:
        key = ("fragment", scope, id(guide), args)
        return cache.reused(key, lambda: (guide, render(guide, *args)))[1]

    return fragment


def summary_text(guide: Guide, cache: BuildCache | None) -> str:
    """Return the guide's summary as text, once per guide object in a build: each guide's
    key holds the summaries of the guides it shows, and each tag page's those it lists (the
    memo keeps the guide alive, so its identity cannot pass to another object)."""
    if cache is None:
        return repr(_summary(guide))
    held = cache.reused(
        ("summary", id(guide)), lambda: (guide, repr(_summary(guide))), in_build=True
    )
    return held[1]


def _summary(guide: Guide) -> tuple[Any, ...]:
    """Return what other pages may show of a guide."""
    evidence = guide.evidence
    return (
        guide.slug,
        guide.title,
        guide.description,
        guide.reader_job,
        guide.tags,
        str(guide.published),
        str(guide.updated),
        guide.aliases,
        guide.draft,
        guide.replaces,
        guide.doc_source,
        evidence.source,
        evidence.operation_id,
        str(evidence.checked_at),
        evidence.status,
        evidence.verdict,
    )


VERIFY = "verify"
"""The kind of cache entry a record's verification is."""
