"""Intent overlap: does a guide duplicate a page the site already has?

Each guide is compared with every other guide and every registry page on its intent (title,
reader job, description; a registry page's slug words stand in for a missing title), and
between built guides on the full visible text and on the evidence itself (every published
value of the record), so a copied record is caught even under new prose. On a large site
candidates come from MinHash LSH (datasketch: only this module imports it), so 10,000 pages cost
about 10,000 lookups, not 50 million pairs; a small site compares every pair. Each candidate
pair is scored exactly (Jaccard of word shingles). A finding about a pair names the newer
guide's files (`newness`): a new guide never files a finding against an existing one.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from site_builder.models import Evidence, Finding, Guide, PageScan, Severity, Site
from site_builder.schema import JsonValue
from site_builder.seo import (
    NEAR_DUPLICATE,
    SAME_JOB,
    Doc,
    display_url,
    newer_first,
    reviewed,
    shingles,
)

STRONG_OVERLAP = 0.4
"""Below the near-duplicate level but worth a human look: a warning. The four seed guides
score under 0.1 against each other and every registry page."""
CLOSEST = 3
"""How many closest pages of each guide `--audit` lists, with their scores."""
CLOSEST_CHECK = "closest"
NUM_PERM = 128
ESTIMATE_MARGIN = 0.15
"""How far below STRONG_OVERLAP a MinHash estimate may fall and still be scored exactly."""
BOILERPLATE_SHARE = 0.1
BOILERPLATE_MIN = 10
"""A shingle of visible text or evidence found on more than a tenth of the guides (and on more
than ten) is the template's or the record shape's, not one page's content: it is left out, so
shared headings and captions neither make unrelated guides look alike nor cost time."""
EXACT_PAIR_LIMIT = 50_000
"""Up to this many pairs (about 200 guides) every pair is scored exactly, which is faster there
than importing datasketch and exact for the closest pages too; beyond it MinHash LSH picks."""
_LEVELS = {
    "near": (
        "a near-duplicate of",
        "give this page a job of its own (title, reader job, description) or merge them",
    ),
    "same": (
        "a reworded duplicate of",
        "one search intent: give this guide its own title, reader job and description, or "
        "name the page as a nearest page in the record's overlap audit, with the difference",
    ),
    "reviewed": (
        "a strong overlap with",
        "reviewed: the overlap audit states the difference (acknowledge it if it holds)",
    ),
    "": (
        "a strong overlap with",
        "make the difference plain in the title and reader job, or name the page as a nearest "
        "page in the record's overlap audit, with the difference",
    ),
}
"""What an overlapping pair is called, and what to change, by how it was judged."""


def check_overlap(site: Site, scans: Iterable[PageScan]) -> list[Finding]:
    """Return overlap and distinct-intent findings, and each guide's closest pages (notes)."""
    docs = _page_docs(site)
    built = {doc.key for doc in docs if doc.guide is not None}
    texts = {scan.key: scan.text for scan in scans if scan.key in built}
    guides = [(doc, doc.guide) for doc in docs if doc.guide is not None]
    bodies = _without_boilerplate(
        [replace(doc, shingles=shingles(texts.get(doc.key, ""), 3)) for doc, _ in guides]
    )
    evidence = _without_boilerplate(
        [replace(d, shingles=shingles(_evidence_text(g.evidence), 3)) for d, g in guides]
    )
    scores: dict[tuple[str, str], tuple[float, str]] = {}
    for kind, group in (("intent", docs), ("visible text", bodies), ("evidence", evidence)):
        for a, b, score in _scored_pairs(group):
            if score > scores.get((a.key, b.key), (0.0, ""))[0]:
                scores[(a.key, b.key)] = (score, kind)
    by_key = {doc.key: doc for doc in docs}
    findings: list[Finding] = []
    for (a_key, b_key), (score, kind) in sorted(scores.items()):
        if score >= STRONG_OVERLAP:
            new, old = newer_first(by_key[a_key], by_key[b_key], site)
            findings.extend(_findings(new, old, score, kind, site))
    return findings + _closest(scores, by_key, site.settings.base_url)


def _page_docs(site: Site) -> list[Doc]:
    """Return the intent document of every guide, then of every registry page not built here."""
    docs = [_guide_doc(guide) for guide in site.guides]
    built = {guide.url for guide in site.guides}
    # registry_by_key holds one entry per page: a page listed twice is a canonical error,
    # reported by check_canonical_uniqueness, and is compared once here.
    for key, entry in sorted(site.registry_by_key.items()):
        if key not in built:
            words = key.strip("/").split("/")[-1].replace("-", " ")
            text = shingles(f"{entry.title} {entry.reader_job} {words}", 2)
            docs.append(Doc(key, entry.reader_job, site.registry_source, None, text))
    return docs


def _guide_doc(guide: Guide) -> Doc:
    """Return a guide's intent document."""
    text = f"{guide.title} {guide.reader_job} {guide.description}"
    return Doc(guide.url, guide.reader_job, guide.source, guide, shingles(text, 2))


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


def _without_boilerplate(docs: list[Doc]) -> list[Doc]:
    """Drop the shingles more than BOILERPLATE_SHARE of the documents (and BOILERPLATE_MIN) have."""
    limit = max(BOILERPLATE_MIN, BOILERPLATE_SHARE * len(docs))
    counts = Counter(shingle for doc in docs for shingle in doc.shingles)
    common = frozenset(shingle for shingle, count in counts.items() if count > limit)
    return [replace(doc, shingles=doc.shingles - common) for doc in docs] if common else docs


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


def _scored_pairs(docs: list[Doc]) -> list[tuple[Doc, Doc, float]]:
    """Return each candidate pair involving a guide with its exact Jaccard, if above zero."""
    pairs = []
    for doc, other in _candidates([doc for doc in docs if doc.shingles]):
        shared = len(doc.shingles & other.shingles)
        if shared:
            score = shared / (len(doc.shingles) + len(other.shingles) - shared)
            pairs.append((doc, other, round(score, 3)))
    return pairs


def _findings(new: Doc, old: Doc, score: float, kind: str, site: Site) -> list[Finding]:
    """Describe one overlapping pair, filed against the newer guide.

    An error at NEAR_DUPLICATE, or for an intent of SAME_JOB or more that no overlap audit
    tells apart; else a warning.
    """
    base = site.settings.base_url
    near = score >= NEAR_DUPLICATE
    is_reviewed = reviewed(new, old, base)  # noted, but never lowers a near-duplicate
    same = kind == "intent" and score >= SAME_JOB and not is_reviewed
    level, note = _LEVELS["near" if near else "same" if same else "reviewed" if is_reviewed else ""]
    jobs = f"reader jobs: '{new.reader_job or '?'}' vs '{old.reader_job or '?'}'"
    message = f"{kind} is {level} {display_url(old, base)} (score {score:.2f}); {jobs}; {note}"
    severity: Severity = "error" if near or same else "warning"
    finding = Finding(
        "overlap", severity, new.source, message, new.key, (old.key,), score, is_reviewed
    )
    return [finding, *_distinct_claim(new, old, score)] if near else [finding]


def _distinct_claim(new: Doc, old: Doc, score: float) -> list[Finding]:
    """A new record that claims a distinct intent while a near-duplicate exists contradicts itself."""
    if new.guide is None or new.guide.evidence.distinct_intent is not True:
        return []
    message = (
        f"the record's overlap audit claims a distinct intent, but {old.key} is a near-duplicate "
        f"(score {score:.2f}); give the page an intent of its own or withdraw the claim"
    )
    source = new.guide.evidence.source
    return [Finding("distinct-intent", "error", source, message, new.key, (old.key,), score)]


def _closest(
    scores: Mapping[tuple[str, str], tuple[float, str]], by_key: Mapping[str, Doc], base_url: str
) -> list[Finding]:
    """Note the CLOSEST pages of each guide and their best score, however low (for --audit)."""
    near: dict[str, list[tuple[float, str, str]]] = {}
    for (a_key, b_key), (score, kind) in scores.items():
        near.setdefault(a_key, []).append((-score, b_key, kind))
        if by_key[b_key].guide is not None:
            near.setdefault(b_key, []).append((-score, a_key, kind))
    return [
        Finding(
            CLOSEST_CHECK,
            "info",
            by_key[key].source,
            f"{kind}: {-minus:.2f} with {display_url(by_key[other], base_url)}",
            key,
            (other,),
            -minus,
        )
        for key, pages in sorted(near.items())
        for minus, other, kind in sorted(pages)[:CLOSEST]
    ]
