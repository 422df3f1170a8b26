"""Join records with their prose, give every guide its URL, and refuse collisions."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date

from site_builder.cache.store import BuildCache
from site_builder.errors import InputError, Problem
from site_builder.model.humanize import humanize_slug
from site_builder.model.models import Doc, Evidence, Guide, Normalized, Site
from site_builder.model.schema import SLUG_PATTERN, RegistryEntry
from site_builder.urls import alias_file, page_key

DESCRIPTION_LIMIT = 159
RESERVED = ("/", "/guides/", "/tags/", "/search/", "/atom.xml", "/sitemap.xml", "/404.html")
RESERVED_FOLDERS = ("/assets/", "/tags/", "/search/", "/pagefind/")
RESERVED_FILES = frozenset({"_redirects", "robots.txt", "sitemap.xml", "atom.xml", "404.html"})
"""Paths the site builds itself, and the files it writes at its root; no alias may take them
(an alias is written as a page, `/robots.txt/` as `robots.txt/index.html`)."""


def assemble(
    normalized: Normalized,
    today: date = date.max,
    *,
    production: bool = False,
    cache: BuildCache | None = None,
) -> Site:
    """Return the Site: one guide per record (drafts marked), newest evidence first.

    `today` decides which scheduled guides are published yet (by default none is scheduled).
    Raise one InputError holding every problem of the run: validation and join problems alike.
    With the preview's memory `cache`, a guide whose record and front matter are the objects
    of the last rebuild (unchanged) and whose prose is the same is the same Guide object, so
    what is remembered per guide (digests, summaries) is reused from one rebuild to the next.
    """
    problems: list[Problem] = list(normalized.problems)
    records: dict[str, Evidence] = {}
    for evidence in normalized.evidence:
        first = records.setdefault(evidence.operation_id, evidence)
        if first is not evidence:
            message = f"duplicate operationId '{evidence.operation_id}' (also in {first.source})"
            problems.append(Problem(evidence.source, "operationId", message))
    docs: dict[str, Doc] = {}
    for doc in normalized.docs:
        record = doc.front.record
        if record in normalized.invalid_ids:
            continue
        if record not in records:
            message = f"no record with operationId '{record}' in records/"
            problems.append(Problem(doc.source, "front matter.record", message))
        elif record in docs:
            message = f"record '{record}' is already rendered by {docs[record].source}"
            problems.append(Problem(doc.source, "front matter.record", message))
        else:
            docs[record] = doc
    guides: dict[str, Guide] = {}
    settings = normalized.settings
    with_prose = settings is None or not settings.publish_without_prose
    for operation_id, evidence in sorted(records.items()):
        guide = _same_guide(cache, evidence, docs.get(operation_id), today, with_prose)
        other = guides.setdefault(guide.slug, guide)
        if other is not guide:
            source, location = _slug_origin(guide)
            message = f"slug '{guide.slug}' is also used by {_slug_origin(other)[0]}"
            problems.append(Problem(source, location, message))
    if settings is not None:
        static = [asset.name for asset in normalized.static]
        problems += _alias_problems(list(guides.values()), settings.base_url, static)
        problems += _replaces_problems(list(guides.values()), settings.base_url)
    if problems or settings is None:
        raise InputError(problems)
    ordered = sorted(guides.values(), key=lambda guide: (-guide.lastmod.timestamp(), guide.slug))
    return Site(
        settings=normalized.settings,
        guides=tuple(ordered),
        assets=normalized.assets,
        by_url={guide.url: guide for guide in ordered},
        registry=normalized.registry,
        registry_by_key=_registry_by_key(normalized),
        rules=normalized.rules,
        static=normalized.static,
        acknowledged=normalized.acknowledged,
        production=production,
        vocabulary=normalized.vocabulary,
        images={image.source: image for image in normalized.images},
    )


def _replaces_problems(guides: list[Guide], base_url: str) -> list[Problem]:
    """`replaces` names the live page at the guide's own URL, and nothing else."""
    problems = []
    for guide in guides:
        if guide.replaces is None or page_key(guide.replaces, base_url) == guide.url:
            continue
        message = (
            f"'{guide.replaces}' is not this guide's URL ({guide.url}); a guide replaces only "
            f"the live page at its own URL (to send an old page here, list it under aliases)"
        )
        problems.append(Problem(guide.source, "front matter.replaces", message))
    return problems


def _alias_problems(guides: list[Guide], base_url: str, static: list[str]) -> list[Problem]:
    """An alias may not be a page or file the site builds or copies from static/, nor another
    guide's URL or alias, nor spelled with other than ASCII (a look-alike of another URL)."""
    owners: dict[str, Guide] = {guide.url: guide for guide in guides}
    problems = []
    for guide in sorted(guides, key=lambda guide: guide.slug):
        for alias in guide.aliases:
            key = page_key(alias, base_url) or alias
            other = owners.setdefault(key, guide)
            path = alias_file(alias)
            if not alias.isascii():
                taken = _look_alike(alias)
            elif key in RESERVED or key.startswith(RESERVED_FOLDERS):
                taken = "a page the site builds itself"
            elif path.split("/")[0].lower() in RESERVED_FILES:
                taken = f"a file the site writes itself ({path.split('/')[0]})"
            elif any(path == name or path.startswith(f"{name}/") for name in static):
                taken = "a file copied from static/"
            elif other is not guide:
                taken = f"already {other.url} or one of its aliases"
            elif key == guide.url:
                taken = "this guide's own URL"
            else:
                continue
            message = f"alias '{alias}' is {taken}"
            problems.append(Problem(_slug_origin(guide)[0], "front matter.aliases", message))
    return problems


def _look_alike(alias: str) -> str:
    """Say which character of an alias is not ASCII (Cyrillic U+0456 looks like an i)."""
    char = next(char for char in alias if not char.isascii())
    return (
        f"not ASCII: {char!r} (U+{ord(char):04X}, {unicodedata.name(char, 'unnamed')}); an "
        f"alias is the ASCII path an old page had, and a look-alike of a URL would take its "
        f"readers"
    )


def _registry_by_key(normalized: Normalized) -> dict[str, RegistryEntry]:
    """Index registry entries by normalised URL; duplicates are a check finding, not an error."""
    index: dict[str, RegistryEntry] = {}
    if normalized.settings is not None:
        for entry in normalized.registry:
            key = page_key(entry.url, normalized.settings.base_url)
            if key is not None:
                index.setdefault(key, entry)
    return index


def _same_guide(
    cache: BuildCache | None, evidence: Evidence, doc: Doc | None, today: date, with_prose: bool
) -> Guide:
    """Return `_guide`, with a memory cache the last rebuild's Guide for the same inputs (the
    memo keeps the record and front matter alive: their identities cannot pass to others)."""
    if cache is None:
        return _guide(evidence, doc, today, needs_prose=with_prose)
    prose = (id(doc.front), doc.source, doc.body, doc.body_line, doc.front) if doc else None
    key = ("guide", id(evidence), prose and prose[:4], today, with_prose)
    held = cache.reused(
        key, lambda: (evidence, prose, _guide(evidence, doc, today, needs_prose=with_prose))
    )
    return held[2]


def _guide(evidence: Evidence, doc: Doc | None, today: date, *, needs_prose: bool) -> Guide:
    """Build one guide from its record and, if written, its prose; say why it is a draft."""
    if doc is not None:
        front = doc.front
        draft = "front matter says draft: true" if front.draft else ""
        if not draft and front.published > today:
            draft = f"scheduled for {front.published.isoformat()}"
        return Guide(
            slug=front.slug,
            title=front.title,
            description=front.description,
            reader_job=front.reader_job,
            tags=front.tags,
            published=front.published,
            updated=front.updated,
            body=doc.body,
            doc_source=doc.source,
            evidence=evidence,
            aliases=front.aliases,
            draft=draft,
            replaces=front.replaces,
            acknowledge=front.acknowledge,
            body_line=doc.body_line,
        )
    verdict = humanize_slug(evidence.verdict)
    description = f"Verdict: {verdict}."
    if len(description) > DESCRIPTION_LIMIT:
        description = description[: DESCRIPTION_LIMIT - 1].rstrip() + "…"
    return Guide(
        slug=slug_from_status(evidence),
        title=humanize_slug(evidence.status),
        description=description,
        reader_job="",
        tags=(),
        published=evidence.checked_at.astimezone(UTC).date(),
        updated=None,
        body="",
        doc_source=None,
        evidence=evidence,
        draft="needs prose" if needs_prose else "",
    )


def slug_from_status(evidence: Evidence) -> str:
    """Return the record's status as a slug, which it usually already is."""
    for text in (evidence.status, evidence.operation_id):
        slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120].strip("-")
        if re.fullmatch(SLUG_PATTERN, slug):
            return slug
    return "guide"


def _slug_origin(guide: Guide) -> tuple[str, str]:
    """Return the file and field that decided a guide's slug."""
    if guide.doc_source:
        return guide.doc_source, "front matter.slug"
    return guide.evidence.source, "status"
