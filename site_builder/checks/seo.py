"""Search-engine checks: one page per search intent, distinct titles and descriptions.

What crawlers (Screaming Frog, Sitebulb) flag on a live site, checked before publishing: two
pages for one reader job (cannibalisation), duplicate titles and `<h1>`s (a guide's `<h1>` is its
title; a registry page's title stands for both), duplicate meta descriptions, and titles and
descriptions of a length search results cut (orphans: consistency.py). A finding about two
pages names the newer guide (`newness`), never one that was there before it. Also the pages
and text normal form (`Doc`, `shingles`) that overlap.py scores.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from site_builder.model.models import Finding, Guide, Severity, Site
from site_builder.render.words import stopwords, words_of
from site_builder.urls import canonical_url, page_key

NEAR_DUPLICATE = 0.9
"""Crawlers (Screaming Frog) flag near-duplicates at 90% similarity: an error here, whatever
the record's overlap audit says."""
SAME_JOB = 0.8
"""Two reader jobs (or, unreviewed, two whole intents) this alike are one search intent: an
error unless an overlap audit states the difference. The score is the Jaccard of word unigrams
and bigrams, case, punctuation and stopwords dropped. A job reworded only in those, an article
or a possessive scores 1.0; one added qualifier ("... on H200") about 0.9; one content word
swapped in a ten-word job about 0.7, whether a synonym ("raise" for "increase") or another job
(one engine's name for another's). So 0.8 is "the same words": a real rewording stays below it;
the four seed guides' reader jobs score at most 0.13 against each other and every registry page."""
TITLE_LENGTH = (30, 60)
"""Screaming Frog's defaults for page titles, in characters. Measured on the guide's title (its
`<h1>`): the `<title>` adds " · " and the site name, the part a search result cuts first."""
DESCRIPTION_LENGTH = (70, 155)
"""Screaming Frog's defaults for meta descriptions, in characters."""
_LETTERS = re.compile(r"[a-z0-9]+")


Shingled = frozenset[str] | frozenset[int] | NDArray[np.int64]
"""A page's shingles: of an intent, words and word pairs (numbered in overlap.py); of a whole
text, the sorted codes of its word 3-grams."""


@dataclass(frozen=True)
class Doc:
    """One page as the overlap and cannibalisation checks see it."""

    key: str
    reader_job: str
    source: str
    guide: Guide | None
    """The guide built here, or None for a registry page."""
    shingles: Shingled


def shingles(text: str) -> frozenset[str]:
    """Return the words and word pairs of an intent (title, reader job, description), without
    the stopwords of the record vocabulary in use."""
    stop = stopwords()
    words = [word for word in words_of(text) if word not in stop]
    return frozenset(words) | frozenset(map(" ".join, pairwise(words)))


def newness(guide: Guide, site: Site) -> tuple[bool, date, datetime, str]:
    """Return a sort key on which the newer of two guides is the greater.

    A guide whose URL is not in the registry is newer than one whose URL is; then the later
    `published`, then the later evidence check; the URL breaks the last tie.
    """
    checked = guide.evidence.checked_at
    return (guide.url not in site.registry_by_key, guide.published, checked, guide.url)


def newer_first(a: Doc, b: Doc, site: Site) -> tuple[Doc, Doc]:
    """Return the pair with the newer guide first (a registry page is never the newer)."""
    if b.guide is None:
        return a, b
    if a.guide is None or newness(b.guide, site) > newness(a.guide, site):
        return b, a
    return a, b


def reviewed(new: Doc, old: Doc, base_url: str) -> bool:
    """Return whether either page's overlap audit names the other with a stated difference
    (its record-wide note counts only when that page is the one page it names)."""
    for this, that in ((new, old), (old, new)):
        if this.guide is not None:
            evidence = this.guide.evidence
            named = {page_key(page.url, base_url) for page in evidence.nearby}
            if any(
                page.difference.strip() and page_key(page.url, base_url) == that.key
                for page in evidence.nearby
            ) or (named == {that.key} and evidence.nearby_note.strip()):
                return True
    return False


def display_url(doc: Doc, base_url: str) -> str:
    """Return how a finding names a page: a guide's site path, a registry page's canonical."""
    return doc.key if doc.guide else canonical_url(doc.key, base_url)


def check_cannibalisation(site: Site) -> list[Finding]:
    """Error when a guide's reader job is another page's, unless an overlap audit tells them apart."""
    docs = [Doc(g.url, g.reader_job, g.source, g, shingles(g.reader_job)) for g in site.guides]
    built = {doc.key for doc in docs}
    docs += [
        Doc(key, entry.reader_job, site.registry_source, None, shingles(entry.reader_job))
        for key, entry in sorted(site.registry_by_key.items())
        if key not in built and entry.reader_job.strip()
    ]
    base = site.settings.base_url
    findings = []
    for a, b, score in _same_jobs(docs, len(built)):
        new, old = newer_first(a, b, site)
        is_reviewed = reviewed(new, old, base)
        same = "the same job as" if score == 1.0 else "nearly the same job as"
        message = (
            f"reader job '{new.reader_job}' is {same} {display_url(old, base)}'s "
            f"'{old.reader_job}' (score {score:.2f}): two pages compete for one search intent; "
        )
        if score >= NEAR_DUPLICATE and is_reviewed:
            message += (
                "the overlap audit states a difference, but these reader jobs do not show it: "
                "write it into this guide's reader_job, or merge the pages"
            )
        elif is_reviewed:
            message += "reviewed: the overlap audit states the difference; say it in the reader_job"
        else:
            message += (
                "give this guide a reader_job of its own or merge the pages (below a score of "
                f"{NEAR_DUPLICATE:.2f}, naming the page as a nearest page in the record's "
                "overlap audit, with the difference, also does)"
            )
        severity: Severity = "error" if score >= NEAR_DUPLICATE or not is_reviewed else "warning"
        facts = (new.key, (old.key,), score, is_reviewed)
        findings.append(Finding("cannibalisation", severity, new.source, message, *facts))
    return findings


def check_titles(site: Site) -> list[Finding]:
    """Error on a title (so an `<h1>`) another page has; warn on one of a length results cut."""
    live = {key: entry.title for key, entry in site.registry_by_key.items()}
    return [
        *_duplicates(site, "title", "error", lambda guide: guide.title, live),
        *_lengths(site, "title", lambda guide: guide.title, TITLE_LENGTH),
    ]


def check_descriptions(site: Site) -> list[Finding]:
    """Warn when two guides share a meta description, or one has a length results cut."""
    return [
        *_duplicates(site, "description", "warning", lambda guide: guide.description, {}),
        *_lengths(site, "description", lambda guide: guide.description, DESCRIPTION_LENGTH),
    ]


def _same_jobs(docs: list[Doc], guides: int) -> list[tuple[Doc, Doc, float]]:
    """Return each pair with a guide in it (guides come first) whose jobs score SAME_JOB or more.

    Exact at any size by prefix and positional filtering (PPJoin: Xiao et al., "Efficient
    similarity joins for near duplicate detection", 2008): with words ordered rarest first, two
    sets of Jaccard t or more share a word among the first |x| - ceil(t|x|) + 1 of each, and
    enough words after it. Jobs spelled alike after case and punctuation always pair (1.0).
    """
    frequency = Counter(token for doc in docs for token in doc.shingles)
    rank = {token: n for n, token in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}
    words = [sorted(doc.shingles, key=rank.__getitem__) for doc in docs]
    index: dict[str, list[tuple[int, int]]] = {}
    for number, tokens in enumerate(words):
        for position, token in enumerate(tokens[: _prefix(len(tokens))]):
            index.setdefault(token, []).append((number, position))
    pairs = set()
    for number in range(guides):
        size, matched = len(words[number]), {number: -1}
        for position, token in enumerate(words[number][: _prefix(size)]):
            for other, at in index[token]:
                if (count := matched.get(other, 0)) >= 0:
                    needed = SAME_JOB / (1 + SAME_JOB) * (size + len(words[other])) - 1e-9
                    left = min(size - position, len(words[other]) - at)
                    matched[other] = count + 1 if count + left >= needed else -1
        pairs |= {(min(number, o), max(number, o)) for o, count in matched.items() if count > 0}
    spelled: dict[str, list[int]] = {}
    for number, doc in enumerate(docs):
        spelled.setdefault(" ".join(_LETTERS.findall(doc.reader_job.lower())), []).append(number)
    spelled.pop("", None)
    same = {
        (a, b) for group in spelled.values() for a in group if a < guides for b in group if b > a
    }
    found = []
    for a, b in pairs | same:
        x, y = docs[a].shingles, docs[b].shingles
        shared = len(x & y)
        union = len(x) + len(y) - shared
        if (a, b) in same or shared >= (SAME_JOB - 1e-9) * union:
            found.append((a, b, 1.0 if (a, b) in same else round(shared / union, 3)))
    return [(docs[a], docs[b], score) for a, b, score in sorted(found)]


def _prefix(size: int) -> int:
    """Return how many of a set's rarest words another set of Jaccard SAME_JOB must share one of."""
    return size - math.ceil(SAME_JOB * size - 1e-9) + 1


def _duplicates(
    site: Site,
    check: str,
    severity: Severity,
    text_of: Callable[[Guide], str],
    live: Mapping[str, str],
) -> list[Finding]:
    """File each guide whose text (normalised) an older guide or a live page already has."""
    built = {guide.url for guide in site.guides}
    holders: dict[str, list[str]] = {}
    for key, text in sorted(live.items()):
        if key not in built and _normal(text):
            holders.setdefault(_normal(text), []).append(canonical_url(key, site.settings.base_url))
    findings = []
    for guide in sorted(site.guides, key=lambda guide: newness(guide, site)):
        normal = _normal(text_of(guide))
        earlier = holders.setdefault(normal, [])
        if normal and earlier:
            if check == "title":
                message = (
                    f"its title, also its <h1>, is the title of {', '.join(earlier)}: search "
                    f"results show two pages for one query; give this guide a title of its own"
                )
            else:
                message = f"has the same {check} as {', '.join(earlier)}; write one of its own"
            related = tuple(page_key(url, site.settings.base_url) or url for url in earlier)
            findings.append(Finding(check, severity, guide.source, message, guide.url, related))
        earlier.append(guide.url)
    return findings


def _lengths(
    site: Site, check: str, text_of: Callable[[Guide], str], limits: tuple[int, int]
) -> list[Finding]:
    """Warn on each guide whose text is shorter or longer than crawlers accept."""
    low, high = limits
    findings = []
    for guide in site.guides:
        length = len(" ".join(text_of(guide).split()))
        if low <= length <= high:
            continue
        advice = (
            f"search results cut it: shorten it to {high} or fewer"
            if length > high
            else f"lengthen it to {low} or more: name the engine, the feature and the verdict"
        )
        message = (
            f"{check} is {length} characters (crawlers flag under {low} or over {high}); {advice}"
        )
        findings.append(Finding(f"{check}-length", "warning", guide.source, message, guide.url))
    return findings


def _normal(text: str) -> str:
    """Return a title or description as crawlers compare them: case and spacing ignored."""
    return " ".join(text.split()).casefold()
