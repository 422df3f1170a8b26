"""What one guide's work reads from disk when first asked and lets go of after (`lent`): a
record's body, a verification's every check. A worker verifying or rendering thousands of
guides then holds one guide's at a time, not every one it has seen."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable


@runtime_checkable
class Lendable(Protocol):
    """Something read from disk when first asked, which can be let go of and read again."""

    @property
    def held(self) -> bool:
        """Whether it is in memory."""
        ...

    def release(self) -> None:
        """Let go of it; it is read again when next asked."""
        ...


_LENDING: Counter[int] = Counter()
"""The parts lent by the blocks now open, by id: a block inside another leaves them to it."""
_LOCK = threading.Lock()


@contextmanager
def lent(*parts: object) -> Iterator[None]:
    """Let go of each part that is `Lendable` after the block if it was not held before it (a
    part held before, such as the records a one-process build keeps, stays held), unless an
    enclosing block lends it too: that block lets go of it (a guide's page verifies its
    record inside the block that lends the record for the page)."""
    lendable = [part for part in parts if isinstance(part, Lendable)]
    with _LOCK:  # the preview's threads may lend too
        read_here = [part for part in lendable if not part.held and not _LENDING[id(part)]]
        _LENDING.update(id(part) for part in lendable)
    try:
        yield
    finally:
        with _LOCK:
            _LENDING.subtract(id(part) for part in lendable)
            for part in lendable:
                if _LENDING[id(part)] <= 0:
                    del _LENDING[id(part)]
        for part in read_here:
            part.release()
