"""Turn camelCase keys and slug-like values into headings a reader can scan.

`fusionOnTokensPerSecond` reads "Fusion on tokens/s" and `cuda-default-with-a-b-canary`
"CUDA default with A/B canary": acronyms, units, phrases and words kept whole come from the
spelling of the record vocabulary in use (content/vocabulary.yaml); without one, keys are
split into plain words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from site_builder.model.vocabulary import Spelling, in_use

_PLAIN = Spelling()
_GENERIC_TOKEN = r"[A-Z]?[a-z]+\d*|[A-Z]+\d*(?![a-z])|\d+(?:\.\d+)?"


def _spelling() -> Spelling:
    """Return the spelling of the vocabulary in use (plain words when there is none)."""
    vocabulary = in_use()
    return vocabulary.spelling if vocabulary is not None else _PLAIN


@cache
def _token(whole: tuple[str, ...]) -> re.Pattern[str]:
    """Return the word pattern: the vocabulary's whole words first, then camelCase parts."""
    if not whole:
        return re.compile(_GENERIC_TOKEN)
    kept = "|".join(re.escape(word) for word in sorted(whole, key=len, reverse=True))
    return re.compile(rf"(?i:{kept})(?=[A-Z0-9_\-\s]|$)|{_GENERIC_TOKEN}")


def _spell(token: str) -> str:
    """Return the display spelling of one word; a lone capital (instanceA) stays a capital."""
    if len(token) == 1 and token.isupper():
        return token
    spelling = _spelling()
    word = token.lower()
    if word in spelling.lookup:
        return spelling.lookup[word]
    numbered = re.fullmatch(r"([a-z]+)(\d+)", word)
    if numbered:
        prefix, number = numbered.groups()
        if prefix in spelling.numbered_prefixes or len(prefix) == 1:
            return prefix.upper() + number
        if prefix in spelling.numbered_words:
            return f"{spelling.numbered_words[prefix]} {number}"
    return word


def _join(words: Sequence[str]) -> str:
    """Spell, merge phrases, and join words into sentence case."""
    out: list[str] = []
    phrases = _spelling().phrase_words
    i = 0
    while i < len(words):
        for phrase, replacement in phrases:
            if tuple(word.lower() for word in words[i : i + len(phrase)]) == phrase:
                if replacement.startswith("/") and out:
                    out[-1] += replacement
                else:
                    out.append(replacement)
                i += len(phrase)
                break
        else:
            out.append(_spell(words[i]))
            i += 1
    if out and out[0] == out[0].lower():
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def split_words(key: str) -> tuple[str, ...]:
    """Split a camelCase, snake_case or kebab-case key into words (remembered: charts and
    verification ask it of every column of every table)."""
    spelling = _spelling()
    words = spelling.key_words.get(key)
    if words is None:
        words = spelling.key_words[key] = tuple(_token(spelling.whole).findall(key))
    return words


def humanize_key(key: str) -> str:
    """Return a heading for a record key: camelCase split, acronyms spelled right.

    Records repeat their keys row after row: each spelling remembers the headings it made.
    """
    memo = _spelling().headings
    heading = memo.get(key)
    if heading is None:
        words = split_words(key)
        heading = memo[key] = _join(words) if words else key
    return heading


def humanize_slug(slug: str) -> str:
    """Return a slug-like value (`narrow-lab-pilot-only`) as words (`Narrow lab pilot only`).

    Every list page shows each guide's tags and verdict: each spelling remembers the words
    it made."""
    memo = _spelling().slugs
    text = memo.get(slug)
    if text is None:
        words = [word for word in re.split(r"[-_\s]+", slug.lower()) if word]
        text = memo[slug] = _join(words) if words else slug
    return text


def anchor_for(key: str) -> str:
    """Return a stable HTML id for a key: `shapeRows` -> `shape-rows`."""
    words = [re.sub(r"[^a-z0-9]", "", word.lower()) for word in split_words(key)]
    return "-".join(word for word in words if word) or "section"
