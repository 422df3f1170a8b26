"""The words of page texts: as strings (`words_of`, for short intents) and as numbers
(`word_ids`, for whole pages, which the overlap audit turns into 3-gram shingles).

Numbers come from one vocabulary per process that only grows: a word keeps its number for
the life of the process (the preview's), so a page's numbers can be remembered between
rebuilds. A number costs 4 bytes where a word string costs about 55, so remembering the
pages of a large site stays small. Which number a word gets never changes a finding: the
audit compares numbers for equality and hashes each 3-gram by its spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"[a-z0-9]++(?:[.\-][a-z0-9]++)*+")  # possessive: never backtracks
_NUMBERS: dict[str, int] = {}
SPELLING: list[str] = []
"""Each number's word: `SPELLING[n]` is the word numbered n."""


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
