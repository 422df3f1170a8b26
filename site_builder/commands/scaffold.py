"""Write a draft guide for one record (`build.py --new RECORD`): fields proposed, prose to write.

Everything proposed comes from the record and is marked for the editor to rewrite; the file
starts as `draft: true`, so it is previewed and audited but never deployed until published.
The record is read and validated by the build's own code, so its errors are the build's.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path

from site_builder.config import BuildConfig
from site_builder.errors import InputError, Problem
from site_builder.inputs.assemble import DESCRIPTION_LIMIT, slug_from_status
from site_builder.inputs.decode import ReadError, decode_doc, decode_record, decode_settings
from site_builder.inputs.evidence import record_evidence
from site_builder.inputs.load import NOT_REGULAR, REGISTRY_NAME, VOCABULARY_NAME, relative_path
from site_builder.inputs.normalize import vocabulary_of
from site_builder.model.humanize import humanize_key, humanize_slug, split_words
from site_builder.model.models import Evidence
from site_builder.model.raw import RawDoc, RawRecord
from site_builder.model.schema import FrontMatter
from site_builder.model.vocabulary import Vocabulary, in_use, using
from site_builder.runtime import files
from site_builder.urls import page_key

TITLE_LIMIT = 120
SLUG_LIMIT = 120
READER_JOB_LIMIT = 300
TOPIC_TAGS = 3
STOP_WORDS = frozenset({"a", "an", "and", "by", "for", "in", "of", "on", "or", "the", "to"})
"""Words kept in the topic's wording but never made a tag."""
HEADINGS = {
    "What this guide answers": "State the one deployment question the record answers.",
    "Who it is for": "Name who this applies to, and who should read another page.",
    "The verdict in plain words": "Say when to adopt, what to check first and how to roll back.",
    "How to read the evidence": "Say what kind of evidence this is and what each section decides.",
}
_UNPRINTABLE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters YAML may not hold raw in a one-line quoted scalar or comment."""


def scaffold_guide(config: BuildConfig, record_path: Path, today: date) -> Path:
    """Write content/<slug>.md, a draft guide for the record at `record_path`; return its path."""
    with using(_vocabulary(config)):
        return _scaffold(config, record_path, today)


def _vocabulary(config: BuildConfig) -> Vocabulary:
    """Read and validate the record vocabulary, as a build does, or raise its problems."""
    path = config.content_dir / VOCABULARY_NAME
    source = relative_path(path, config.root)
    problems: list[Problem] = []
    try:
        raw = RawDoc(source, decode_settings(_read(path, source)), "")
    except ReadError as error:
        raise InputError([Problem(source, error.location, error.message)]) from None
    vocabulary = vocabulary_of(raw, problems)
    if vocabulary is None:
        raise InputError(problems)
    return vocabulary


def _words() -> Vocabulary:
    """Return the vocabulary in use (scaffold_guide sets it)."""
    vocabulary = in_use()
    if vocabulary is None:
        raise RuntimeError("no record vocabulary in use")
    return vocabulary


def _scaffold(config: BuildConfig, record_path: Path, today: date) -> Path:
    """Write the scaffold with the project's vocabulary in use."""
    path, source = _locate(config, record_path)
    evidence = _read_record(path, source)
    slug = proposed_slug(evidence)
    target = config.content_dir / f"{slug}.md"
    name = relative_path(target, config.root)
    problems = [
        Problem(source, "operationId", f"'{evidence.operation_id}' already has prose: {doc}")
        for doc in _docs_with(config, "record", evidence.operation_id)
    ]
    problems += [
        Problem(source, "status", f"slug '{slug}' is already used by {doc}")
        for doc in _docs_with(config, "slug", slug)
        if doc != name
    ]
    if target.exists() or target.is_symlink():
        problems.append(Problem(name, "file", "already exists; refusing to overwrite it"))
    if problems:
        raise InputError(problems)
    text = guide_text(evidence, slug, today, live=_is_registry_page(config, slug))
    try:
        FrontMatter.model_validate(decode_doc(text.encode("utf-8"))[0])
    except (ReadError, ValueError) as error:
        raise InputError([Problem(name, "front matter", f"cannot propose it: {error}")]) from None
    try:
        with target.open("x", encoding="utf-8", newline="\n") as file:
            file.write(text)
    except OSError as error:
        raise InputError([Problem(name, "file", f"cannot be written: {error}")]) from None
    return target


def guide_text(evidence: Evidence, slug: str, today: date, *, live: bool) -> str:
    """Return the scaffold: commented front matter proposed from the record, then headings."""
    engine = _engine(evidence)
    topic = _topic(evidence)
    wording = humanize_slug("-".join(topic)) if set(topic) - STOP_WORDS else "The audited change"
    verdict = _lower_first(humanize_slug(evidence.verdict))
    subject = _words().subject
    where = f"{subject} on {engine}" if engine else subject
    title = _clip(f"{where}: {verdict}", TITLE_LIMIT)
    description = f"{wording} with {where}: the audit's verdict is {verdict}."
    reader_job = (
        f"Decide whether to adopt {_lower_first(wording)} with {where}, "
        f"given the audit's verdict: {verdict}."
    )
    words = [word[:40] for word in topic if word not in STOP_WORDS and not word.isdigit()]
    tags = [key for key, name in _words().engines.items() if name == engine]
    tags += list(dict.fromkeys(words))[:TOPIC_TAGS]
    lines = [
        "---",
        f"# Proposed from the record {_UNPRINTABLE.sub('?', evidence.source)}: rewrite in your words.",
        "# Check the engine, verdict and tags against the record; every number must come from it.",
        "# The slug fixes the URL for good once published. Delete `draft: true` to publish.",
    ]
    if live:
        lines += [
            f"# /guides/{slug}/ is already a live page (content/registry.json). If this guide",
            f"# takes it over, add `replaces: /guides/{slug}/`; otherwise choose another slug.",
        ]
    lines += [
        f"title: {_quote(title)}",
        f"description: {_quote(_clip(description, DESCRIPTION_LIMIT))}",
        f"slug: {_quote(slug)}",
        f"record: {_quote(evidence.operation_id)}",
        f"reader_job: {_quote(_clip(reader_job, READER_JOB_LIMIT))}",
        f"tags: [{', '.join(_quote(tag) for tag in tags)}]",
        f"published: {today.isoformat()}",
        "draft: true",
        "---",
        "Draft: replace each line below with prose. Every number must come from the record;",
        "the page already shows its tables, caveats, revisions and sources after this text.",
    ]
    for heading, placeholder in HEADINGS.items():
        lines += ["", f"## {heading}", "", placeholder]
    sections = [humanize_key(key) for key, _ in evidence.sections if split_words(key)]
    lines += [""] if sections else []
    lines += [
        f"- **{section}**: what this section decides, in one sentence." for section in sections
    ]
    return "\n".join(lines) + "\n"


def proposed_slug(evidence: Evidence) -> str:
    """Return `glm-5-2-<engine>-<topic>`, the site's URL pattern, from the record's status.

    The status's method words (pinned, source, zero, runtime, audit) are left out; a status
    with no topic words left gives the status slug, the URL a record without prose previews at.
    """
    topic = [word for word in _topic(evidence) if word not in STOP_WORDS]
    if not topic:
        return slug_from_status(evidence)
    words = _words()
    engine = [key for key, name in words.engines.items() if name == _engine(evidence)]
    subject = re.sub(r"[^a-z0-9]+", "-", words.subject.lower()).strip("-")
    slug = "-".join([subject, *engine, *topic])
    return slug if len(slug) <= SLUG_LIMIT else slug[:SLUG_LIMIT].rsplit("-", 1)[0]


def _topic(evidence: Evidence) -> list[str]:
    """Return the words of the status that name what was audited, not how."""
    words = _words()
    letters = [char for char in words.subject.lower() if char.isalnum()]
    subject = re.compile("[-_.]?".join(map(re.escape, letters)))
    noise = {*words.method_words, *words.engines, *re.findall(r"[a-z]+", words.subject.lower())}
    status = subject.sub(" ", evidence.status.lower())
    return [word for word in re.split(r"[^a-z0-9]+", status) if word and word not in noise]


def _locate(config: BuildConfig, record_path: Path) -> tuple[Path, str]:
    """Return the record file (relative to the current folder or the project root) and its name."""
    candidates = [Path(os.path.normpath(record_path.absolute()))]
    if not record_path.is_absolute():
        candidates.append(Path(os.path.normpath(config.root / record_path)))
    path = next((item for item in candidates if item.parent == config.records_dir), candidates[0])
    if path.parent != config.records_dir or path.suffix != ".json":
        message = "not a record: a record is a .json file directly in records/"
        raise InputError([Problem(str(record_path), "file", message)])
    source = relative_path(path, config.root)
    if path.is_symlink() and not path.resolve().is_relative_to(config.root):
        raise InputError([Problem(source, "file", "symlink points outside the project; refused")])
    return path, source


def _read(path: Path, source: str) -> bytes:
    """Return the bytes of an input the build reads too, opened as a regular file, or raise
    the build's one-line problem (a named pipe is refused, never waited on)."""
    try:
        return files.regular_bytes(path)
    except files.NotRegular:
        raise InputError([Problem(source, "file", NOT_REGULAR)]) from None
    except OSError as error:
        message = f"cannot be read: {error.strerror or error}"
        raise InputError([Problem(source, "file", message)]) from None


def _read_record(path: Path, source: str) -> Evidence:
    """Decode and validate one record exactly as a build does, or raise its problems."""
    try:
        data = decode_record(_read(path, source))
    except ReadError as error:
        raise InputError([Problem(source, error.location, error.message)]) from None
    problems: list[Problem] = []
    evidence = record_evidence(RawRecord(source, data), _words(), problems)
    if evidence is None:
        raise InputError(problems)
    return evidence


def _docs_with(config: BuildConfig, field: str, value: str) -> list[str]:
    """Return the guides whose front matter `field` is `value`; the build reports unreadable ones."""
    found = []
    for path in sorted(config.content_dir.glob("**/*.md")):
        try:
            front = decode_doc(files.regular_bytes(path))[0]  # a pipe: passed over
        except (ReadError, OSError):
            continue
        if front.get(field) == value:
            found.append(relative_path(path, config.root))
    return found


def _is_registry_page(config: BuildConfig, slug: str) -> bool:
    """Return whether /guides/<slug>/ is a live page listed in content/registry.json."""
    try:
        pages = decode_record(files.regular_bytes(config.content_dir / REGISTRY_NAME)).get("pages")
    except (ReadError, OSError):
        return False
    urls = [
        page.get("url")
        for page in (pages if isinstance(pages, list) else ())
        if isinstance(page, dict)
    ]
    return any(isinstance(url, str) and page_key(url, url) == f"/guides/{slug}/" for url in urls)


def _engine(evidence: Evidence) -> str | None:
    """Name the serving engine: from the status, else the revision keys, else the sources."""
    places = (
        evidence.status,
        " ".join(key for key, _ in evidence.revisions),
        " ".join(f"{receipt.url} {receipt.name}" for receipt in evidence.receipts),
    )
    for text in places:
        found = [name for key, name in _words().engines.items() if key in text.lower()]
        if len(found) == 1:
            return found[0]
    return None


def _lower_first(text: str) -> str:
    """Lower a sentence's first letter unless the word has its own spelling (CUDA)."""
    first = text.split(" ", 1)[0]
    spelled = first.lower() in _words().spelling.lookup
    if spelled or not first[:1].isupper() or first[1:] != first[1:].lower():
        return text
    return text[:1].lower() + text[1:]


def _clip(text: str, limit: int) -> str:
    """Shorten text to `limit` characters at a word boundary, marking the cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,:;.") + "…"


def _quote(text: str) -> str:
    """Return a YAML double-quoted scalar that reads back as exactly `text`."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _UNPRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)
