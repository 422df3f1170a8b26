"""What one guide's work reads from disk when first asked and lets go of after (`lent`): a
record's body, a verification's every check. A worker verifying or rendering thousands of
guides then holds one guide's at a time, not every one it has seen."""

from __future__ import annotations

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


@contextmanager
def lent(*parts: object) -> Iterator[None]:
    """Let go of each part that is `Lendable` after the block if it was not held before it (a
    part held before, such as the records a one-process build keeps, stays held)."""
    read_here = [part for part in parts if isinstance(part, Lendable) and not part.held]
    try:
        yield
    finally:
        for part in read_here:
            part.release()
