"""The words of page texts: as strings (`words_of`, for short intents) and as numbers
(`word_ids`, for whole pages, which the overlap audit turns into 3-gram shingles); and the
text of a record's published values (`evidence_text`), which the audit compares the same way.

Numbers come from one vocabulary per process that only grows: a word keeps its number for
the life of the process (the preview's), so a page's numbers can be remembered between
rebuilds. A number costs 4 bytes where a word string costs about 55, so remembering the
pages of a large site stays small. Which number a word gets never changes a finding: the
audit compares numbers for equality and hashes each 3-gram by its spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain

import numpy as np

from site_builder.models import Evidence
from site_builder.schema import JsonValue

_WORD = re.compile(r"[a-z0-9]++(?:[.\-][a-z0-9]++)*+")  # possessive: never backtracks
_NUMBERS: dict[str, int] = {}
SPELLING: list[str] = []
"""Each number's word: `SPELLING[n]` is the word numbered n."""
_EVIDENCE_TEXTS: dict[int, tuple[Evidence, str]] = {}


@lru_cache(maxsize=8192)
def words_of(text: str) -> tuple[str, ...]:
    """Return the words of a text, lowercased, stopwords included (remembered: the preview
    checks the same unchanged pages on every rebuild)."""
    return tuple(_WORD.findall(text.lower()))


@lru_cache(maxsize=4096)
def word_ids(text: str) -> np.ndarray:
    """Return the numbers of a text's words (as `words_of` splits them), in order, stopwords
    included; remembered like `words_of`, at a tenth of the memory."""
    words = _WORD.findall(text.lower())
    for word in sorted(set(words).difference(_NUMBERS)):
        _NUMBERS[word] = len(SPELLING)
        SPELLING.append(word)
    ids = np.fromiter(map(_NUMBERS.__getitem__, words), np.int64, len(words))
    ids.flags.writeable = False  # shared by every caller that asks for this text
    return ids


def numbered(words: frozenset[str]) -> list[int]:
    """Return the numbers of those of `words` that have one."""
    return [_NUMBERS[word] for word in words if word in _NUMBERS]


def evidence_texts(evidences: Iterable[Evidence]) -> list[str]:
    """Return `evidence_text` of each, remembered for the evidence objects of the last call:
    the preview's unchanged records are the same objects from one rebuild to the next (the
    memo holds each, so its identity cannot pass to another object)."""
    global _EVIDENCE_TEXTS
    kept: dict[int, tuple[Evidence, str]] = {}
    texts = []
    for evidence in evidences:
        held = kept.get(id(evidence)) or _EVIDENCE_TEXTS.get(id(evidence))
        kept[id(evidence)] = held = held or (evidence, evidence_text(evidence))
        texts.append(held[1])
    _EVIDENCE_TEXTS = kept
    return texts


def evidence_text(evidence: Evidence) -> str:
    """Return every published value of a record, so two pages of one evidence are found."""
    parts: list[str] = [evidence.status, evidence.verdict]
    receipts = [(receipt.name, receipt.url, receipt.sha256) for receipt in evidence.receipts]
    fields = (evidence.invariants, evidence.model_facts, evidence.revisions, evidence.sections)
    stack: list[Iterator[JsonValue]] = [
        iter((receipts, *fields, evidence.boundary, evidence.decision))
    ]
    while stack:  # depth first, without recursion (a record may nest deeply)
        for value in stack[-1]:
            if type(value) is str:
                parts.append(value)
            elif isinstance(value, dict | list | tuple):
                stack.append(
                    chain.from_iterable(value.items()) if isinstance(value, dict) else iter(value)
                )
                break
            elif value is not None:
                parts.append(str(value))
        else:
            stack.pop()
    return " ".join(parts)
