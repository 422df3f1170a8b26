"""Intent overlap: does a guide duplicate a page the site already has?

Each guide is compared with every other guide and every registry page on its intent (title,
reader job, description; a registry page's slug words stand in for a missing title), and
between built guides on the full visible text and on the evidence itself (every published
value of the record), so a copied record is caught even under new prose. On a large site
candidates come from MinHash LSH (`minhash`), so 10,000 pages cost about 10,000 lookups, not
50 million pairs, and each page's signature is kept in the build cache by what it is made of
(`sketches`): one changed guide makes one signature. A small site compares every pair.
Each candidate pair is scored exactly (Jaccard of word shingles; a whole text's are 64-bit codes
of its word 3-grams, made with its page: `words.gram_codes`). A finding about a pair names
the newer guide's files (`newness`): a new guide never files a finding against an existing one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from site_builder.cache.store import BuildCache
from site_builder.checks.compared import Group, intent_group, page_docs, text_group
from site_builder.checks.minhash import NUM_PERM, neighbours, starts
from site_builder.checks.seo import (
    NEAR_DUPLICATE,
    SAME_JOB,
    Doc,
    Shingled,
    display_url,
    newer_first,
    reviewed,
)
from site_builder.checks.sketches import Sketches, kept_sketches
from site_builder.model.declared import Shingles
from site_builder.model.models import Finding, Severity, Site
from site_builder.render.words import evidence_text, gram_codes

STRONG_OVERLAP = 0.4
"""Below the near-duplicate level but worth a human look: a warning. The four seed guides
score under 0.1 against each other and every registry page."""
CLOSEST = 3
"""How many closest pages of each guide `--audit` lists, with their scores."""
CLOSEST_CHECK = "closest"
ESTIMATE_MARGIN = 0.15
"""How far below STRONG_OVERLAP a MinHash estimate may fall and still be scored exactly."""
EXACT_PAIR_LIMIT = 50_000
"""Up to this many pairs (about 200 guides) every pair is scored exactly, which is faster there
and exact for the closest pages too; beyond it MinHash LSH picks."""
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


def check_overlap(
    site: Site, shingled: Mapping[str, Shingles], cache: BuildCache | None = None
) -> list[Finding]:
    """Return overlap and distinct-intent findings, and each guide's closest pages (notes),
    from each guide's shingles made with its page (by page key); `cache` keeps signatures."""
    docs, intents = page_docs(site)
    guides = [doc for doc in docs if doc.guide is not None]
    made = [shingled.get(doc.key) or _record_only(doc) for doc in guides]
    groups = (
        intent_group(docs, intents),
        text_group("visible text", guides, [shingles.text for shingles in made], cache),
        text_group("evidence", guides, [shingles.evidence for shingles in made], cache),
    )
    scores: dict[tuple[str, str], tuple[float, str]] = {}
    for group in groups:
        for a, b, score in _scored_pairs(group, cache):
            if score > scores.get((a.key, b.key), (0.0, ""))[0]:
                scores[(a.key, b.key)] = (score, group.kind)
    by_key = {doc.key: doc for doc in docs}
    findings: list[Finding] = []
    for (a_key, b_key), (score, kind) in sorted(scores.items()):
        if score >= STRONG_OVERLAP:
            new, old = newer_first(by_key[a_key], by_key[b_key], site)
            findings.extend(_findings(new, old, score, kind, site))
    return findings + _closest(scores, by_key, site.settings.base_url)


def _record_only(doc: Doc) -> Shingles:
    """Return the shingles of a guide without a page: its record's alone."""
    return Shingles(b"", gram_codes(evidence_text(doc.guide.evidence)) if doc.guide else b"")


def _scored_pairs(group: Group, cache: BuildCache | None) -> list[tuple[Doc, Doc, float]]:
    """Return each candidate pair involving a guide with its exact Jaccard, if above zero."""
    docs, sketches = group.docs, None
    if sum(doc.guide is not None for doc in docs) * len(docs) <= EXACT_PAIR_LIMIT:
        sizes = [len(group.shingles(n)) for n in range(len(docs))]
    else:
        sketches = kept_sketches(
            cache, group.kind, group.inputs(), lambda n: _array(group.shingles(n))
        )
        sizes = sketches.sizes.tolist()
    counted = _shared_counts(group) if sketches is None else None
    pairs = []
    for n, m in _candidates(docs, [n for n, size in enumerate(sizes) if size], sketches):
        if counted is not None:
            shared = int(counted[n, m])
        else:
            shared = _shared(group.shingles(n), group.shingles(m))
        if shared:
            score = shared / (sizes[n] + sizes[m] - shared)
            pairs.append((docs[n], docs[m], round(score, 3)))
    return pairs


def _array(codes: Shingled) -> np.ndarray:
    return codes if isinstance(codes, np.ndarray) else np.fromiter(codes, np.int64, len(codes))


def _candidates(
    docs: list[Doc], live: list[int], sketches: Sketches | None
) -> Iterator[tuple[int, int]]:
    """Yield each (guide, other page) pair of the `live` pages (those with shingles) worth
    scoring, each unordered pair once: every pair up to EXACT_PAIR_LIMIT pairs, beyond it those
    MinHash LSH finds likely to reach STRONG_OVERLAP."""
    guides = [n for n in live if docs[n].guide is not None]
    if len(guides) * len(live) <= EXACT_PAIR_LIMIT or sketches is None:
        pairs: Iterator[tuple[int, int]] = ((n, m) for n in guides for m in live)
    else:
        pairs = _lsh_candidates(sketches.signatures, live, guides)
    for n, m in pairs:
        doc, other = docs[n], docs[m]
        if other.key != doc.key and not (other.guide is not None and other.key < doc.key):
            yield n, m


def _lsh_candidates(
    signatures: np.ndarray, live: list[int], guides: list[int]
) -> Iterator[tuple[int, int]]:
    """Yield (guide, page) pairs of `live` pages sharing a band of the signature with the guide
    (as datasketch's MinHashLSH finds them) whose estimated similarity is near STRONG_OVERLAP,
    so the exact comparison that follows runs on few pairs."""
    rows = signatures[live]
    position = {n: at for at, n in enumerate(live)}
    near = neighbours(rows, [position[n] for n in guides])
    for at in sorted(near):
        others = np.sort(np.fromiter(near[at], np.int64, len(near[at])))
        same = np.count_nonzero(rows[others] == rows[at], axis=1) / NUM_PERM
        for other in others[same >= STRONG_OVERLAP - ESTIMATE_MARGIN].tolist():
            yield live[at], live[other]


def _shared_counts(group: Group) -> np.ndarray | None:
    """Return how many shingles each two pages of a group of whole texts share, as a square
    matrix (None for a group of intents, whose shingles are sets): counted once for each
    shingle over the pages that have it, not page against page. A shingle is on at most a
    tenth of the guides, or ten (`boilerplate`), so its pairs are few."""
    arrays = [group.shingles(n) for n in range(len(group.docs))]
    if not all(isinstance(array, np.ndarray) for array in arrays):
        return None
    count = len(arrays)
    codes = np.concatenate([np.empty(0, np.int64), *arrays])  # type: ignore[list-item]
    owner = np.repeat(np.arange(count), [len(array) for array in arrays])
    order = np.argsort(codes, kind="stable")  # each shingle's pages stay in ascending order
    codes, owner = codes[order], owner[order]
    firsts = np.flatnonzero(starts(codes))
    sizes = np.diff(firsts, append=len(codes))
    counts = np.zeros(count * count, np.int64)
    for size in np.unique(sizes[sizes > 1]).tolist():
        runs = firsts[sizes == size][:, None]
        first, second = np.triu_indices(size, 1)
        pairs = owner[runs + first] * count + owner[runs + second]
        counts += np.bincount(pairs.ravel(), minlength=count * count)
    counts = counts.reshape(count, count)
    return counts + counts.T


def _shared(a: Shingled, b: Shingled) -> int:
    """Return how many shingles two pages share (arrays are sorted and distinct)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        at = np.searchsorted(b, a).clip(max=len(b) - 1)
        return int(np.count_nonzero(b[at] == a))
    return len(a & b)  # type: ignore[operator]


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
    facts = (new.key, (old.key,), score, is_reviewed)
    finding = Finding("overlap", severity, new.source, message, *facts)
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
    notes = []
    for key, pages in sorted(near.items()):
        for minus, other, kind in sorted(pages)[:CLOSEST]:
            message = f"{kind}: {-minus:.2f} with {display_url(by_key[other], base_url)}"
            facts = (key, (other,), -minus)
            notes.append(Finding(CLOSEST_CHECK, "info", by_key[key].source, message, *facts))
    return notes
