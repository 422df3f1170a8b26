"""The words of page texts: as strings (`words_of`, for short intents) and as the codes of
their word 3-grams (`gram_codes`, for whole pages and records, which the overlap audit
compares); and the text of a record's published values (`evidence_text`).

A 3-gram's code is a 64-bit hash of its three words' spellings (each word's blake2b, combined
and mixed with splitmix64's finalizer), so it is the same in every process and every build:
a guide's codes are made where its page is rendered (a worker) and kept in the build cache
with the page. Two distinct 3-grams share a code with a chance of about 2**-64 a pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from hashlib import blake2b
from itertools import chain
from string import ascii_letters, digits

import numpy as np

from site_builder.model.models import Evidence
from site_builder.model.schema import JsonValue
from site_builder.model.vocabulary import in_use

_WORD = re.compile(r"[a-z0-9]++(?:[.\-][a-z0-9]++)*+")  # possessive: never backtracks
_WORD_BYTES = bytes(
    ord(chr(byte).lower()) if chr(byte) in ascii_letters + digits + ".-" else ord(" ")
    for byte in range(256)
)
"""A translation table keeping the bytes a word is made of, capitals made small letters
(`_word_bytes`)."""
_LOWERED_TO_ASCII = ("\u0130".encode(), "\u212a".encode())
"""The UTF-8 of the only characters outside ASCII that `str.lower` makes ASCII letters (the
dotted capital I, the Kelvin sign)."""
_DOT, _HYPHEN, _SPACE = ord("."), ord("-"), ord(" ")
_STOPPED = 0
"""A stopword's hash in `_known_hashes`: the codes leave it out."""
_FIRST, _SECOND = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
_MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 1))
"""splitmix64's finalizer: shift, then multiply; the last step only shifts."""


@lru_cache(maxsize=8192)
def words_of(text: str) -> tuple[str, ...]:
    """Return the words of a text, lowercased, stopwords included (remembered: the preview
    checks the same unchanged pages on every rebuild)."""
    return tuple(_WORD.findall(text.lower()))


def stopwords() -> frozenset[str]:
    """Return the stopwords of the record vocabulary in use."""
    return vocabulary.stopword_set if (vocabulary := in_use()) else frozenset()


def gram_codes(text: str) -> bytes:
    """Return the distinct codes of the text's word 3-grams (words as `words_of` splits them,
    the stopwords in use dropped), as sorted little-endian int64s."""
    words = _word_bytes(text)
    if len(words) < 3:
        return b""
    known = _known_hashes(stopwords())  # a page repeats its words: each is hashed once
    hashes = np.fromiter(map(known.__getitem__, words), np.uint64, len(words))
    hashes = hashes[hashes != _STOPPED]  # the stopwords', in C (np.isin sorted: 3x as long)
    if len(hashes) < 3:
        return b""
    mixed = hashes[:-2] * _FIRST + hashes[1:-1] * _SECOND + hashes[2:]  # wraps, as meant
    for shift, factor in _MIX:
        mixed = (mixed ^ mixed >> np.uint64(shift)) * np.uint64(factor)
    codes = np.sort(mixed.view(np.int64))
    distinct = np.empty(len(codes), dtype=bool)  # np.unique does this, four times slower
    distinct[0] = True
    np.not_equal(codes[1:], codes[:-1], out=distinct[1:])
    return codes[distinct].astype("<i8", copy=False).tobytes()


def _word_bytes(text: str) -> list[bytes]:
    """Return the words `words_of` finds, as UTF-8 bytes, three times faster than its regular
    expression on a page: every byte but a letter, digit, dot or hyphen becomes a space (a
    non-ASCII character's bytes too, as the expression does not match them), then so does
    every dot or hyphen not between two letters or digits, and what is left splits at the
    spaces."""
    data = text.encode("utf-8", "surrogatepass")
    if any(character in data for character in _LOWERED_TO_ASCII):
        data = text.lower().encode("utf-8", "surrogatepass")
    data = data.translate(_WORD_BYTES)  # lowered in bytes: a fifth of the time of `str.lower`
    if b"." in data or b"-" in data:
        array = np.frombuffer(data, np.uint8)
        joining = (array == _DOT) | (array == _HYPHEN)
        letter = (array != _SPACE) & ~joining
        between = np.zeros(len(array), dtype=bool)
        between[1:-1] = letter[:-2] & letter[2:]
        if (alone := joining & ~between).any():
            array = array.copy()
            array[alone] = _SPACE
            data = array.tobytes()
    return data.split()


def _hashed(word: bytes) -> int:
    """Return a word's 64-bit hash (of its UTF-8 bytes), the same in every process."""
    return int.from_bytes(blake2b(word, digest_size=8).digest(), "little")


class _Hashes(dict[bytes, int]):
    """Each word's hash, made the first time it is looked up."""

    def __missing__(self, word: bytes) -> int:
        self[word] = hashed = _hashed(word)
        return hashed


@lru_cache(maxsize=4)
def _known_hashes(stop: frozenset[str]) -> _Hashes:
    """Return the table of the words hashed so far while these are the stopwords: each
    stopword is there already, as _STOPPED (a word whose hash is 0, a chance of 2**-64, would
    only be left out of 3-grams as a stopword is)."""
    return _Hashes.fromkeys((word.encode("utf-8", "surrogatepass") for word in stop), _STOPPED)


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
