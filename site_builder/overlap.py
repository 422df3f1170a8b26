"""Intent overlap: does a guide duplicate or cannibalise a page the site already has?

Each guide is compared with every other guide and every registry page on its intent (title,
reader job, description; a registry page's slug words stand in for a missing title), and
between built guides on the full visible text and on the evidence itself (every published
value of the record), so a copied record is caught even under new prose. On a large site candidates come from MinHash
LSH (datasketch), so 10,000 pages cost about 10,000 lookups, not 50 million pairs; a small
site compares every pair. Each candidate pair is scored exactly (Jaccard of word shingles).
The only module that imports datasketch.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import pairwise

from site_builder.models import Evidence, Finding, Guide, Site
from site_builder.scan import PageScan
from site_builder.schema import JsonValue
from site_builder.urls import canonical_url, page_key

NEAR_DUPLICATE = 0.9
"""Crawlers (Screaming Frog) flag near-duplicates at 90% MinHash similarity: an error here."""
STRONG_OVERLAP = 0.4
"""Below the near-duplicate level but worth a human look: a warning. The four seed guides
score under 0.1 against each other and every registry page."""
NUM_PERM = 128
ESTIMATE_MARGIN = 0.15
"""How far below STRONG_OVERLAP a MinHash estimate may fall and still be scored exactly."""
EXACT_PAIR_LIMIT = 5_000
"""Up to this many pairs every pair is scored exactly; beyond it MinHash LSH picks candidates."""
_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "what",
        "when",
        "which",
        "who",
        "with",
        "your",
        "you",
        "guide",
        "page",
        "glm52",
        "ai",
    ]
)


@dataclass(frozen=True)
class Doc:
    """One page as the overlap check sees it."""

    key: str
    label: str
    reader_job: str
    source: str
    guide: Guide | None
    shingles: frozenset[str]


def check_overlap(site: Site, scans: Iterable[PageScan]) -> list[Finding]:
    """Return near-duplicate errors and strong-overlap warnings for every guide."""
    guide_keys = {guide.url for guide in site.guides}
    docs = [_guide_doc(guide) for guide in site.guides]
    # registry_by_key holds one entry per page: a page listed twice is a canonical error,
    # reported by check_canonical_uniqueness, and is compared once here.
    for key, entry in sorted(site.registry_by_key.items()):
        if key not in guide_keys:
            words = key.strip("/").split("/")[-1].replace("-", " ")
            text = f"{entry.title} {entry.reader_job} {words}"
            shingles = _shingles(text, 2)
            docs.append(
                Doc(key, entry.title or key, entry.reader_job, site.registry_source, None, shingles)
            )
    texts = {scan.key: scan.text for scan in scans if scan.key in guide_keys}
    guides = [doc for doc in docs if doc.guide is not None]
    bodies = [replace(doc, shingles=_shingles(texts.get(doc.key, ""), 3)) for doc in guides]
    evidence = [
        replace(doc, shingles=_shingles(_evidence_text(doc.guide.evidence), 3))
        for doc in guides
        if doc.guide is not None
    ]
    scores: dict[tuple[str, str], tuple[float, str]] = {}
    for kind, group in (("intent", docs), ("visible text", bodies), ("evidence", evidence)):
        for a, b, score in _similar_pairs(group):
            if score > scores.get((a.key, b.key), (0.0, ""))[0]:
                scores[(a.key, b.key)] = (score, kind)
    by_key = {doc.key: doc for doc in docs}
    findings: list[Finding] = []
    for (a_key, b_key), (score, kind) in sorted(scores.items()):
        findings.extend(_findings(by_key[a_key], by_key[b_key], score, kind, site))
    return findings


def _guide_doc(guide: Guide) -> Doc:
    """Return a guide's intent document."""
    text = f"{guide.title} {guide.reader_job} {guide.description}"
    source = guide.source
    return Doc(guide.url, guide.title, guide.reader_job, source, guide, _shingles(text, 2))


def _evidence_text(evidence: Evidence) -> str:
    """Return every published value of a record, so two pages of one evidence are found."""
    parts: list[str] = [evidence.status, evidence.verdict]
    stack: list[JsonValue] = [
        list(evidence.decision),
        list(evidence.boundary),
        list(evidence.sections),
        list(evidence.revisions),
        list(evidence.model_facts),
        list(evidence.invariants),
        [(receipt.name, receipt.url, receipt.sha256) for receipt in evidence.receipts],
    ]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed(list(value.items())))
        elif isinstance(value, list | tuple):
            stack.extend(reversed(value))
        elif value is not None:
            parts.append(str(value))
    return " ".join(parts)


def _shingles(text: str, size: int) -> frozenset[str]:
    """Return the word n-grams (1..size for intents, exactly size for long text) of a text."""
    words = [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]
    if size == 2:
        return frozenset(words) | frozenset(map(" ".join, pairwise(words)))
    return frozenset(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))


def _candidates(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """Yield each (guide, other page) pair worth scoring, each unordered pair once.

    A small site compares every pair exactly; above EXACT_PAIR_LIMIT pairs, MinHash LSH
    proposes only the pairs likely to reach STRONG_OVERLAP.
    """
    guides = [doc for doc in docs if doc.guide is not None]
    if len(guides) * len(docs) <= EXACT_PAIR_LIMIT:
        pairs = ((doc, other) for doc in guides for other in docs)
    else:
        pairs = _lsh_candidates(docs, guides)
    for doc, other in pairs:
        if other.key != doc.key and not (other.guide is not None and other.key < doc.key):
            yield doc, other


def _lsh_candidates(docs: list[Doc], guides: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """Yield (guide, candidate) pairs from a MinHash LSH index of every page.

    A candidate is yielded only when its estimated similarity is near STRONG_OVERLAP, so the
    exact comparison that follows runs on few pairs.
    """
    from datasketch import MinHash, MinHashLSH  # numpy and scipy: imported only at scale

    # crc32 keeps hashing fast and independent of PYTHONHASHSEED; one set of permutations
    # serves every MinHash (making them is most of a MinHash's cost).
    template = MinHash(num_perm=NUM_PERM, seed=1, hashfunc=zlib.crc32)
    hashes = {}
    # Weighted towards few false negatives: 42 bands of 3 rows find ~97% of pairs at 0.4.
    lsh = MinHashLSH(threshold=STRONG_OVERLAP, num_perm=NUM_PERM, weights=(0.1, 0.9))
    for doc in docs:
        minhash = MinHash(
            num_perm=NUM_PERM,
            hashfunc=zlib.crc32,
            permutations=template.permutations,
            scheme=template.scheme,
        )
        minhash.update_batch([shingle.encode() for shingle in sorted(doc.shingles)])
        hashes[doc.key] = minhash
        lsh.insert(doc.key, minhash)
    by_key = {doc.key: doc for doc in docs}
    for doc in guides:
        for other_key in sorted(lsh.query(hashes[doc.key])):
            if hashes[doc.key].jaccard(hashes[other_key]) >= STRONG_OVERLAP - ESTIMATE_MARGIN:
                yield doc, by_key[other_key]


def _similar_pairs(docs: list[Doc]) -> list[tuple[Doc, Doc, float]]:
    """Return each pair involving a guide whose exact Jaccard reaches STRONG_OVERLAP."""
    pairs = []
    for doc, other in _candidates([doc for doc in docs if doc.shingles]):
        shared = len(doc.shingles & other.shingles)
        score = shared / (len(doc.shingles) + len(other.shingles) - shared)
        if score >= STRONG_OVERLAP:
            pairs.append((doc, other, round(score, 3)))
    return pairs


def _reviewed(doc: Doc, other: Doc, base_url: str) -> bool:
    """Return whether either page's overlap audit names the other with a stated difference."""
    for this, that in ((doc, other), (other, doc)):
        if this.guide is None:
            continue
        evidence = this.guide.evidence
        for page in evidence.nearby:
            stated = page.difference or evidence.nearby_note
            if stated and page_key(page.url, base_url) == that.key:
                return True
    return False


def _findings(doc: Doc, other: Doc, score: float, kind: str, site: Site) -> list[Finding]:
    """Describe one overlapping pair: an error at the near-duplicate level, else a warning."""
    near = score >= NEAR_DUPLICATE
    reviewed = not near and _reviewed(doc, other, site.settings.base_url)
    other_url = other.key if other.guide else canonical_url(other.key, site.settings.base_url)
    jobs = f"reader jobs: '{doc.reader_job or '?'}' vs '{other.reader_job or '?'}'"
    level = "near-duplicate of" if near else "strong overlap with"
    if near:
        note = "; give this page a job of its own (title, reader job, description) or merge them"
    elif reviewed:
        note = "; reviewed: the overlap audit states the difference (acknowledge it if it holds)"
    else:
        note = (
            "; make the difference plain in the title and reader job, or state it in the "
            "record's overlap audit (nearestPages with a difference)"
        )
    message = f"{kind} is a {level} {other_url} (score {score:.2f}); {jobs}{note}"
    findings = [
        Finding(
            "overlap",
            "error" if near else "warning",
            doc.source,
            message,
            doc.key,
            (other.key,),
            score,
            reviewed,
        )
    ]
    if near:
        findings.extend(_distinct_claims(doc, other, score))
    return findings


def _distinct_claims(doc: Doc, other: Doc, score: float) -> list[Finding]:
    """A record that claims distinctIntent while a near-duplicate exists contradicts itself."""
    findings = []
    for this, that in ((doc, other), (other, doc)):
        if this.guide is None:
            continue
        facts: Mapping[str, object] = dict(this.guide.evidence.overlap_facts)
        if facts.get("distinctIntent") is True:
            message = (
                f"the record claims distinctIntent: true, but {that.key} is a near-duplicate "
                f"(score {score:.2f})"
            )
            findings.append(
                Finding(
                    "distinct-intent",
                    "error",
                    this.guide.evidence.source,
                    message,
                    this.key,
                    (that.key,),
                    score,
                )
            )
    return findings
