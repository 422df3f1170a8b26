"""Page and record text for the overlap audit: 3-gram codes made with each page, and kept."""

from __future__ import annotations

import dataclasses
import random
from hashlib import blake2b

import numpy as np
from conftest import seed_root
from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder.config import BuildConfig
from site_builder.inputs.assemble import assemble
from site_builder.inputs.load import load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.models import Site
from site_builder.model.vocabulary import using
from site_builder.pipeline import build
from site_builder.render.stored_pages import dump_scan, load_scan
from site_builder.render.words import evidence_text, gram_codes, stopwords, words_of

WORDS = ["a", "the", "v0.26.0", "h200", "re-run", "x" * 300, "naïve", "ok.", "-b", "SGLang"]
WORDS += ["\u212a8s", "İstanbul", "a\ud800b", "ǅx"]  # Kelvin sign, dotted I, a lone surrogate
MOD = 2**64


def seed_site() -> Site:
    """Return the assembled seed site."""
    return assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))


def reference_codes(text: str, stop: frozenset[str] = frozenset()) -> list[int]:
    """The codes as specified, in plain integers: each word's 64-bit blake2b (little-endian),
    a 3-gram as h1 * 0x9E37... + h2 * 0xC2B2... + h3, mixed by splitmix64's finalizer."""

    def word(spelled: str) -> int:
        return int.from_bytes(blake2b(spelled.encode(), digest_size=8).digest(), "little")

    def mixed(value: int) -> int:
        for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 1)):
            value = (value ^ value >> shift) * factor % MOD
        return value - MOD if value >= MOD // 2 else value  # as a signed int64

    words = [w for w in words_of(text) if w not in stop]
    grams = zip(words, words[1:], words[2:], strict=False)
    first, second = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
    return sorted(
        {mixed((word(a) * first + word(b) * second + word(c)) % MOD) for a, b, c in grams}
    )


def codes_of(text: str) -> list[int]:
    """Return gram_codes of a text as a list of ints."""
    return np.frombuffer(gram_codes(text), "<i8").tolist()


def test_a_3_gram_code_depends_on_its_spelling_alone() -> None:
    rng = random.Random(5)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 80))) for _ in range(40)]
    stop = stopwords()  # the seed vocabulary's, in use in every test
    assert {"a", "the"} <= stop
    for text in texts:
        codes = codes_of(text)
        assert codes == reference_codes(text, stop)  # the same in any process, build or machine
        words = [word for word in words_of(text) if word not in stop]
        assert len(codes) == len(set(zip(words, words[1:], words[2:], strict=False)))
    assert codes_of("Run SGLang, at the H200!") == codes_of("run sglang h200")
    assert codes_of("run the sglang") == []  # fewer than three words


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab9Z.-. \n\u00e9\u212a\u0130\ud800\u2014", max_size=60))
def test_words_split_at_any_mix_of_dots_hyphens_and_other_characters(text: str) -> None:
    """Words are found in bytes, not by `words_of`'s expression: a dot or hyphen joins two
    letters or digits only, and no other character (non-ASCII, a lone surrogate) is part of
    a word; the codes are still those of `words_of`'s words."""
    assert codes_of(text) == reference_codes(text, stopwords())
    assert codes_of(f"alpha {text} beta gamma") == reference_codes(
        f"alpha {text} beta gamma", stopwords()
    )


def test_the_stopwords_in_use_are_left_out() -> None:
    site = seed_site()
    assert site.vocabulary is not None
    vocabulary = site.vocabulary.model_copy(update={"stopwords": ("the", "on")})
    text = "run the engine on the H200 with the cache"
    with using(vocabulary):
        kept = codes_of(text)
        assert kept == reference_codes(text, frozenset({"the", "on"}))
        assert kept == codes_of("run engine h200 with cache")
    with using(None):
        assert codes_of(text) == reference_codes(text) != kept


def test_an_edited_record_gets_new_codes() -> None:
    evidence = seed_site().guides[0].evidence
    edited = dataclasses.replace(evidence, verdict="quokka-verdict")
    assert "quokka-verdict" in evidence_text(edited)
    assert "quokka-verdict" not in evidence_text(evidence)
    assert gram_codes(evidence_text(edited)) != gram_codes(evidence_text(evidence))


def test_each_guide_page_carries_its_shingles_through_the_cache() -> None:
    report = build(BuildConfig.for_root(seed_root(), cache=False), write=False)
    guides = [page for page in report.pages if page.shingles is not None]
    assert len(guides) == 4
    by_source = {guide.url: guide for guide in seed_site().guides}
    for page in guides:
        guide = by_source[f"/{page.path.removesuffix('index.html')}"]
        assert page.shingles.evidence == gram_codes(evidence_text(guide.evidence))
        assert len(page.shingles.text) > 8 * 500  # the page's prose and tables
        again, _ = load_scan(dump_scan(page, "sha256 of the page"))
        assert (again.shingles, again.scan) == (page.shingles, page.scan)
