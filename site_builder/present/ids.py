"""Hand out the HTML ids of one page, each once: the template's own first, then the rest.

The template's ids are reserved first (read from the templates themselves, so they are
declared once); record sections, nested blocks and prose headings then claim theirs in page
order. A taken id gets the next free number (`sources-2`): a counter per base keeps a page
of 40,000 identical headings linear.
"""

from __future__ import annotations

from collections.abc import Iterable


class PageIds:
    """The ids of one page: reserve some, then claim unique ones."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._taken: set[str] = set(reserved)
        self._next: dict[str, int] = {}

    def __contains__(self, anchor: str) -> bool:
        return anchor in self._taken

    def reserve(self, anchors: Iterable[str]) -> None:
        """Mark ids as used without checking (ids the page derives from a claimed one)."""
        self._taken.update(anchors)

    def claim(self, base: str) -> str:
        """Return `base`, or `base-2`, `base-3`, ... whichever is free first, and take it."""
        base = base or "section"
        anchor = base
        if anchor in self._taken:
            number = self._next.get(base, 2)
            while f"{base}-{number}" in self._taken:
                number += 1
            self._next[base] = number + 1
            anchor = f"{base}-{number}"
        self._taken.add(anchor)
        return anchor
