"""Flatten the markup of what Pagefind reads of a guide page, leaving what it indexes as it was.

Pagefind's cost grows with the elements it parses as well as with the text: a guide page is
mostly data tables, and their cells are most of its elements. Pagefind reads an element for
what its parser does at its end tag (Pagefind's `fossick/parser.rs`, 1.5):

- the text of an element that is neither a "sentence" element (`SENTENCE`) nor a heading is
  added to its parent's as it is, so the tags of a table's rows, header cells and parts, and
  of definition lists (`PLAIN`), can go;
- a sentence element with text alone becomes `" " + text + "." + " "`, the full stop only when
  the text ends with a letter, digit or one of `_'")$*` (`SENTENCE_CHARS`), so such an element
  can become that text.

Neither may go where Pagefind would read it otherwise: an element with an `id` (an anchor) or
a `data-` attribute (`data-pagefind-meta` and the like) stays, and so does an element whose
parent collects the text of its anchor (an element with an `id`, or an inline element inside
one): `scan` marks those with KEPT before the body is written out. The tags of a PLAIN element
stay on a page where one of them has such an attribute; a sentence element whose text ends
with a character outside ASCII stays too (Rust's and Python's "word character" differ
there). The search index of the flattened cut is byte-identical to the whole page's
(`tests/test_search_pages.py`), and Pagefind takes about a fifth less time over it.
"""

from __future__ import annotations

import re
from functools import lru_cache

SENTENCE = ("div", "li", "p", "td")
"""Sentence elements flattened when they hold text alone (Pagefind's SENTENCE_SELECTORS, less
the headings, lists and sections, which hold other elements)."""
PLAIN = ("caption", "dd", "dl", "dt", "table", "tbody", "tfoot", "th", "thead", "tr")
"""Elements whose tags go: Pagefind adds their text to their parent's as it is."""
# fmt: off
INLINE = frozenset((
    "a", "abbr", "acronym", "b", "bdo", "big", "br", "button", "cite", "code", "dfn", "em", "i",
    "img", "input", "kbd", "label", "map", "object", "output", "q", "samp", "script", "select",
    "small", "span", "strong", "sub", "sup", "textarea", "time", "tt", "var",
))
# fmt: on
"""Pagefind's INLINE_SELECTORS: an inline element shares its parent's anchors."""
KEPT = "data-kept"
"""The attribute `scan` gives an element that must stay (Pagefind reads no such attribute)."""

_ATTRIBUTES = r'(?:\s+(?!id=|data-)[a-z][a-z0-9-]*(?:="[^"]*")?)*'
"""Attributes as lexbor writes them (double quotes, `"` escaped), none an id or `data-`."""
_ANY_ATTRIBUTES = r'(?:\s[^>"]*(?:"[^"]*"[^>"]*)*)?'
"""Any attributes (a `>` may be inside quotes)."""
_TEXT_ALONE = re.compile(r"<(" + "|".join(SENTENCE) + r")" + _ATTRIBUTES + r">([^<]*)</\1>")
_ENDS_SENTENCE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'\")$*")
_READ_ATTRIBUTE = re.compile(
    r"<(" + "|".join(PLAIN) + r')(?:\s[^>"]*(?:"[^"]*"[^>"]*)*?)?\s(?:id|data-[a-z0-9-]*)='
)
"""The start tag of a PLAIN element with an id or a `data-` attribute (KEPT among them)."""


def flattened(body: str) -> str:
    """Return the serialized search body with its sentence elements that hold text alone made
    that text, and the tags of its PLAIN elements gone, but on a page where an element of the
    same name has an id or a `data-` attribute (see the module)."""
    body = _TEXT_ALONE.sub(_as_pagefind_reads, body)
    named = set(_READ_ATTRIBUTE.findall(body))
    plain = _plain_tags(tuple(tag for tag in PLAIN if tag not in named))
    return body if plain is None else plain.sub("", body)


def _as_pagefind_reads(match: re.Match[str]) -> str:
    text = match.group(2)
    if not text:
        return "  "
    last = text[-1]
    if last > "\x7f":
        return match.group(0)
    return f" {text}. " if last in _ENDS_SENTENCE else f" {text} "


@lru_cache(maxsize=64)
def _plain_tags(tags: tuple[str, ...]) -> re.Pattern[str] | None:
    """Return the expression matching the start and end tags of these elements."""
    return re.compile(r"</?(?:" + "|".join(tags) + r")" + _ANY_ATTRIBUTES + ">") if tags else None
