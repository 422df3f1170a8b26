"""Intent overlap: does a guide duplicate a page the site already has?

Each guide is compared with every other guide and every registry page on its intent (title,
reader job, description; a registry page's slug words stand in for a missing title), and
between built guides on the full visible text and on the evidence itself (every published
value of the record), so a copied record is caught even under new prose. On a large site
candidates come from MinHash LSH (numpy: only this module imports it; the signatures are
datasketch's, without the 1.2 s its import costs: `_permutations`), so 10,000 pages cost
about 10,000 lookups, not 50 million pairs; a small site compares every pair.
Each candidate pair is scored exactly (Jaccard of word shingles; a whole text's are 64-bit codes
of its word 3-grams, made with its page: `words.gram_codes`). A finding about a pair names
the newer guide's files (`newness`): a new guide never files a finding against an existing one.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cache

import numpy as np

from site_builder.declared import Shingles
from site_builder.models import Finding, Severity, Site
from site_builder.seo import (
    NEAR_DUPLICATE,
    SAME_JOB,
    Doc,
    Shingled,
    display_url,
    newer_first,
    reviewed,
    shingles,
)
from site_builder.words import evidence_text, gram_codes

STRONG_OVERLAP = 0.4
"""Below the near-duplicate level but worth a human look: a warning. The four seed guides
score under 0.1 against each other and every registry page."""
CLOSEST = 3
"""How many closest pages of each guide `--audit` lists, with their scores."""
CLOSEST_CHECK = "closest"
NUM_PERM = 128
BANDS, ROWS = 42, 3
"""MinHash LSH bands, of rows of the signature: what datasketch's MinHashLSH picks at
STRONG_OVERLAP weighted (0.1, 0.9) towards few false negatives; ~97% of pairs at 0.4 share one."""
ESTIMATE_MARGIN = 0.15
"""How far below STRONG_OVERLAP a MinHash estimate may fall and still be scored exactly."""
BOILERPLATE_SHARE = 0.1
BOILERPLATE_MIN = 10
"""A shingle of visible text or evidence found on more than a tenth of the guides (and on more
than ten) is the template's or the record shape's, not one page's content: it is left out, so
shared headings and captions neither make unrelated guides look alike nor cost time."""
_LOW32 = 0xFFFFFFFF  # a shingle's low 32 bits: what MinHash hashes
BUCKETS = 8  # value ranges the codes are counted in, one after the other (less memory)
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


def check_overlap(site: Site, shingled: Mapping[str, Shingles]) -> list[Finding]:
    """Return overlap and distinct-intent findings, and each guide's closest pages (notes),
    from each guide's shingles made with its page (by page key)."""
    docs = _page_docs(site)
    guides = [doc for doc in docs if doc.guide is not None]
    made = [shingled.get(doc.key) or _record_only(doc) for doc in guides]
    bodies = _long_docs(guides, [shingles.text for shingles in made])
    evidence = _long_docs(guides, [shingles.evidence for shingles in made])
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


def _record_only(doc: Doc) -> Shingles:
    """Return the shingles of a guide without a page: its record's alone."""
    return Shingles(b"", gram_codes(evidence_text(doc.guide.evidence)) if doc.guide else b"")


def _page_docs(site: Site) -> list[Doc]:
    """Return the intent document of every guide, then of every registry page not built here,
    each distinct shingle as one int: a number of its own, and the crc32 of its text in the
    low 32 bits (what MinHash hashes)."""
    docs = [
        Doc(g.url, g.reader_job, g.source, g, shingles(f"{g.title} {g.reader_job} {g.description}"))
        for g in site.guides
    ]
    built = {guide.url for guide in site.guides}
    # One entry per page: a page listed twice is compared once (check_canonical_uniqueness).
    for key, entry in sorted(site.registry_by_key.items()):
        if key not in built:
            words = key.strip("/").split("/")[-1].replace("-", " ")
            text = shingles(f"{entry.title} {entry.reader_job} {words}")
            docs.append(Doc(key, entry.reader_job, site.registry_source, None, text))
    spelled = frozenset[str]().union(*(doc.shingles for doc in docs))  # type: ignore[arg-type]
    number = {text: n << 32 | zlib.crc32(text.encode()) for n, text in enumerate(spelled)}
    return [replace(doc, shingles=frozenset(map(number.__getitem__, doc.shingles))) for doc in docs]


def _long_docs(docs: list[Doc], codes: list[bytes]) -> list[Doc]:
    """Return the guides with the 3-gram codes of their texts (`words.gram_codes`) as sorted
    int64 arrays of shingles, less the codes more than BOILERPLATE_SHARE of the texts (and
    BOILERPLATE_MIN) have."""
    arrays = [np.frombuffer(code, "<i8") for code in codes]  # views: no copy of every code
    common = _common(arrays, max(BOILERPLATE_MIN, BOILERPLATE_SHARE * len(codes)))
    if len(common):  # each page's codes less the common ones (both sorted)
        last = len(common) - 1
        arrays = [a[common[np.searchsorted(common, a).clip(max=last)] != a] for a in arrays]
    return [replace(doc, shingles=gram) for doc, gram in zip(docs, arrays, strict=True)]


def _common(arrays: list[np.ndarray], more_than: float) -> np.ndarray:
    """Return the codes more than `more_than` pages have, sorted (each page's codes are sorted
    and distinct). They are counted a value range at a time (BUCKETS): at 10,000 guides every
    code at once, and its sorted copy, are hundreds of MB each."""
    if not arrays:
        return np.empty(0, np.int64)
    step = (1 << 64) // BUCKETS
    bounds = np.array([-(1 << 63) + step * n for n in range(1, BUCKETS)], np.int64)
    cuts = [[0, *np.searchsorted(array, bounds).tolist(), len(array)] for array in arrays]
    found = [np.empty(0, np.int64)]
    for bucket in range(BUCKETS):
        part = [a[cut[bucket] : cut[bucket + 1]] for a, cut in zip(arrays, cuts, strict=True)]
        ordered = np.sort(np.concatenate(part), kind="stable")  # timsort merges sorted runs
        starts = np.flatnonzero(_starts(ordered))
        counts = np.diff(starts, append=len(ordered))
        found.append(ordered[starts[counts > more_than]])
    return np.concatenate(found)


def _starts(ordered: np.ndarray) -> np.ndarray:
    """Return, for each row of a sorted array, whether it differs from the one before."""
    differ = ordered[1:] != ordered[:-1]
    return np.r_[True, differ if differ.ndim == 1 else differ.any(axis=1)][: len(ordered)]


def _candidates(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """Yield each (guide, other page) pair worth scoring, each unordered pair once: every pair
    up to EXACT_PAIR_LIMIT pairs, beyond it those MinHash LSH finds likely to reach STRONG_OVERLAP.
    """
    guides = [doc for doc in docs if doc.guide is not None]
    if len(guides) * len(docs) <= EXACT_PAIR_LIMIT:
        pairs: Iterable[tuple[Doc, Doc]] = ((doc, other) for doc in guides for other in docs)
    else:
        pairs = _lsh_candidates(docs)
    for doc, other in pairs:
        if other.key != doc.key and not (other.guide is not None and other.key < doc.key):
            yield doc, other


def _lsh_candidates(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """Yield (guide, page) pairs by MinHash LSH: pages sharing a band of the signature with the
    guide (as datasketch's MinHashLSH finds them) whose estimated similarity is near
    STRONG_OVERLAP, so the exact comparison that follows runs on few pairs."""
    signatures = _signatures(docs)
    near: list[set[int]] = [set() for _ in docs]
    guides = {n for n, doc in enumerate(docs) if doc.guide is not None}
    for start in range(0, BANDS * ROWS, ROWS):
        band = signatures[:, start : start + ROWS]
        order = np.lexsort(band.T)
        firsts = np.flatnonzero(_starts(band[order]))
        sizes = np.diff(firsts, append=len(docs))
        for first, size in zip(firsts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
            for member in guides.intersection(members := order[first : first + size].tolist()):
                near[member].update(members)
    for n, doc in enumerate(docs):
        if near[n]:
            others = np.sort(np.fromiter(near[n], np.int64, len(near[n])))
            same = np.count_nonzero(signatures[others] == signatures[n], axis=1) / NUM_PERM
            for other in others[same >= STRONG_OVERLAP - ESTIMATE_MARGIN].tolist():
                yield doc, docs[other]


def _signatures(docs: list[Doc]) -> np.ndarray:
    """Return each page's MinHash signature: datasketch's MinHash (its "affine32" permutations,
    seed 1) of its shingles' low 32 bits, computed here on whole arrays."""
    multiply, add = _permutations()
    signatures = np.empty((len(docs), NUM_PERM), np.uint32)
    for n, doc in enumerate(docs):
        codes = doc.shingles
        if not isinstance(codes, np.ndarray):
            codes = np.fromiter(codes, np.int64, len(codes))
        mixed = (codes & _LOW32).astype(np.uint32)
        for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, 1)):  # MurmurHash3's fmix32
            mixed = (mixed ^ mixed >> shift) * np.uint32(factor)
        table = np.multiply.outer(multiply, mixed)  # a row per permutation: 7x faster
        table += add[:, None]
        signatures[n] = table.min(axis=1)
    return signatures


@cache
def _permutations() -> tuple[np.ndarray, np.ndarray]:
    """Return the (multiplier, addend) of each of NUM_PERM permutations, drawn as datasketch's
    `MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32")` draws them (the tests check they
    are its `permutations`). Importing datasketch imports scipy: 1.2 s of every build."""
    generator = np.random.RandomState(1)
    multiply = generator.randint(0, 1 << 31, NUM_PERM, dtype=np.uint32) * np.uint32(2) + 1
    add = generator.randint(0, 1 << 32, NUM_PERM, dtype=np.uint32)
    for array in (multiply, add):
        array.setflags(write=False)  # shared by every call
    return multiply, add


def _scored_pairs(docs: list[Doc]) -> list[tuple[Doc, Doc, float]]:
    """Return each candidate pair involving a guide with its exact Jaccard, if above zero."""
    pairs = []
    for doc, other in _candidates([doc for doc in docs if len(doc.shingles)]):
        shared = _shared(doc.shingles, other.shingles)
        if shared:
            score = shared / (len(doc.shingles) + len(other.shingles) - shared)
            pairs.append((doc, other, round(score, 3)))
    return pairs


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
