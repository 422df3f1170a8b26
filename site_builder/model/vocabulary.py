"""The record's vocabulary: every record-specific name the builder knows, from one file.

`content/vocabulary.yaml` names the keys records use (decision, caveats, boundaries, the
overlap audit's spellings), the patterns that read meaning from key names (runtime counts,
pinned releases, derived values), verdict families, how words are spelled on the page,
the stopwords of the overlap audit and the site's subject. A publisher whose records use
other names changes that file, not the code. `normalize` resolves records into typed
fields with it; the few places that read keys of any record section by shape (the caveat
and verdict keys, word spellings) read the vocabulary in use for the build (`in_use`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

Name = StrictStr
"""A record key, spelled as records write it."""


class _Strict(BaseModel):
    """Unknown fields are typos; strings must be strings (lists may become tuples)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _compiles(pattern: str) -> str:
    """Refuse a pattern that is not a valid regular expression."""
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"not a valid regular expression: {error}") from None
    return pattern


class OverlapKeys(_Strict):
    """How a record's overlap audit is spelled."""

    key: Name
    """The overlap audit object."""
    nearest_pages: Name
    """A list of {url, reader job, difference} objects."""
    closest_pages: Name
    """A list of URLs."""
    nearest_page: Name
    """One URL, with the two intents below."""
    nearest_page_intent: Name
    new_page_intent: Name
    reader_job: Name
    difference: Name
    distinction: Name
    """A note that tells this guide from all the nearest pages."""
    distinct_intent: Name
    """The record's claim that its intent is distinct (true/false)."""
    sitemap_count: Name
    """How many canonicals the live sitemap had when the record was checked."""


class Family(_Strict):
    """A verdict family: classifications grouped by what the reader does next."""

    name: StrictStr
    anchor: StrictStr = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    summary: StrictStr
    words: tuple[StrictStr, ...]
    """Words of a classification slug that put it in this family (first family wins)."""

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The family's words as one whole-word pattern (matching nothing without words)."""
        if not self.words:
            return re.compile(r"(?!)")
        return re.compile(r"\b(" + "|".join(map(re.escape, self.words)) + r")\b")


class Spelling(_Strict):
    """How words of keys and slugs are spelled on the page."""

    words: tuple[StrictStr, ...] = ()
    """Words written as given whatever their case in a key: `KV`, `vLLM`, `GiB`."""
    special: dict[StrictStr, StrictStr] = {}
    """Lower-case word -> how it is written: `glm52: GLM-5.2`."""
    whole: tuple[StrictStr, ...] = ()
    """Lower-case words a camelCase split must not break (`glm52`, `fp8`, `sglang`)."""
    numbered_prefixes: tuple[StrictStr, ...] = ()
    """Prefixes upper-cased when a number follows: `tp8` -> `TP8`."""
    numbered_words: dict[StrictStr, StrictStr] = {}
    """Words that name a numbered thing: `pr: PR` makes `pr46514` read `PR 46514`."""
    phrases: tuple[tuple[StrictStr, StrictStr], ...] = ()
    """Word sequences written as one unit: `[per second, /s]` (a leading `/` joins)."""

    @cached_property
    def lookup(self) -> dict[str, str]:
        """Lower-case word -> its spelling, from `words` and `special`."""
        return {word.lower(): word for word in self.words} | dict(self.special)

    @cached_property
    def headings(self) -> dict[str, str]:
        """The headings made from keys with this spelling so far (humanize's memo)."""
        return {}

    @cached_property
    def slugs(self) -> dict[str, str]:
        """The words made from slug-like values with this spelling so far (humanize's memo)."""
        return {}

    @cached_property
    def key_words(self) -> dict[str, tuple[str, ...]]:
        """The words keys were split into with this spelling so far (humanize's memo)."""
        return {}

    @cached_property
    def phrase_words(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """The phrases as (lower-case words, replacement)."""
        return tuple((tuple(phrase.lower().split()), text) for phrase, text in self.phrases)


class Vocabulary(_Strict):
    """content/vocabulary.yaml: the names records use, and how the site reads them."""

    decision_keys: tuple[Name, ...] = Field(min_length=1)
    """The decision object's spellings; a record has exactly one."""
    classification_key: Name
    """The decision's verdict field."""
    record_boundary_keys: tuple[Name, ...] = ()
    """Whole-record evidence boundary objects, merged into the boundary callout."""
    caveat_keys: tuple[Name, ...] = ()
    """Keys whose strings bound the object they sit in, wherever it is."""
    verdict_keys: tuple[Name, ...] = ()
    """Keys (any case) whose value is a verdict, drawn as one."""
    verdict_suffixes: tuple[Name, ...] = ()
    """camelCase endings that make a key a verdict: `Result` in `auditResult`."""
    editorial_keys: tuple[Name, ...] = ()
    """Provenance for the audit trail, removed at every depth and never published."""
    receipt_name_keys: tuple[Name, ...] = ()
    """The fields that name a source receipt, in order of preference."""
    derived_prefixes: tuple[Name, ...] = ()
    """camelCase prefixes of values computed from other values: `calculated`."""
    measurement_pattern: StrictStr = "$^"
    """Keys of measurements from outside sources, which need a caveat."""
    overlap: OverlapKeys
    runtime_counts: dict[StrictStr, StrictStr] = {}
    """Boundary count patterns summarised on the page: `GPU run: 'gpu.*runs?$'`."""
    release_tag: StrictStr = "$^"
    """What a pinned release tag looks like."""
    release_keys: tuple[StrictStr, ...] = ()
    """Revision key patterns, in order of preference, naming the release the audit pins."""
    families: tuple[Family, ...] = ()
    spelling: Spelling = Spelling()
    stopwords: tuple[StrictStr, ...] = ()
    """Words the overlap audit ignores: they say nothing about a page's intent."""
    subject: StrictStr = Field(min_length=1)
    """What every guide is about (JSON-LD `about`, the scaffold's titles and slugs)."""
    engines: dict[StrictStr, StrictStr] = {}
    """What guides run on, tag -> name (`vllm: vLLM`); `--new` makes it the first tag."""
    method_words: tuple[StrictStr, ...] = ()
    """Words of a record's status that say how the audit was done, not what it is about."""

    @field_validator("measurement_pattern", "release_tag")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return _compiles(value)

    @field_validator("runtime_counts")
    @classmethod
    def _count_patterns(cls, value: dict[str, str]) -> dict[str, str]:
        for pattern in value.values():
            _compiles(pattern)
        return value

    @field_validator("release_keys")
    @classmethod
    def _key_patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            _compiles(pattern)
        return value

    @cached_property
    def stopword_set(self) -> frozenset[str]:
        """The stopwords, for fast lookups."""
        return frozenset(self.stopwords)

    @cached_property
    def caveat_set(self) -> frozenset[str]:
        """The caveat keys, for fast lookups."""
        return frozenset(self.caveat_keys)

    @cached_property
    def verdict_set(self) -> frozenset[str]:
        """The verdict keys in lower case, for fast lookups."""
        return frozenset(name.lower() for name in self.verdict_keys)

    @cached_property
    def _verdicts_known(self) -> dict[str, bool]:
        """Keys already judged by `is_verdict_key` (a site's records repeat their keys)."""
        return {}

    def is_verdict_key(self, key: str) -> bool:
        """Return whether a key holds a verdict (`decision`, `auditResult`, ...)."""
        known = self._verdicts_known.get(key)
        if known is None:
            known = self._verdicts_known[key] = key.lower() in self.verdict_set or any(
                len(key) > len(suffix)
                and key.endswith(suffix)
                and (key[-len(suffix) - 1].islower() or key[-len(suffix) - 1].isdigit())
                for suffix in self.verdict_suffixes
            )
        return known

    @cached_property
    def _derived_known(self) -> dict[str, bool]:
        """Keys already judged by `is_derived_key` (every number of every record is asked)."""
        return {}

    def is_derived_key(self, key: str) -> bool:
        """Return whether a key names a value computed from others (`calculatedDeltaGb`)."""
        known = self._derived_known.get(key)
        if known is None:
            known = self._derived_known[key] = any(
                key.startswith(prefix) and key[len(prefix) : len(prefix) + 1].isupper()
                for prefix in self.derived_prefixes
            )
        return known


_IN_USE: ContextVar[Vocabulary | None] = ContextVar("vocabulary", default=None)


@contextmanager
def using(vocabulary: Vocabulary | None) -> Iterator[None]:
    """Make `vocabulary` the one in use while a build runs (each build sets its own)."""
    token = _IN_USE.set(vocabulary)
    try:
        yield
    finally:
        _IN_USE.reset(token)


def in_use() -> Vocabulary | None:
    """Return the vocabulary of the build that is running, if any."""
    return _IN_USE.get()


def caveat_keys() -> frozenset[str]:
    """Return the caveat keys of the vocabulary in use (none without one)."""
    vocabulary = in_use()
    return vocabulary.caveat_set if vocabulary else frozenset()


def is_verdict_key(key: str) -> bool:
    """Return whether a key holds a verdict, by the vocabulary in use."""
    vocabulary = in_use()
    return vocabulary.is_verdict_key(key) if vocabulary else False
