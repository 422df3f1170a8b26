"""The outcome of verifying one record's claims: each check, its state, expected and found values.

Also how a recomputed number is compared with the recorded one: at the record's own precision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, NamedTuple, TypeVar, overload

T = TypeVar("T")

CheckState = Literal["verified", "unverifiable", "contradicted", "unexplained"]
"""unexplained: a derived number no rule covers and no formula inferred from its inputs gives."""


class ClaimCheck(NamedTuple):
    """The outcome of checking one claim of a record: a receipt, a revision, a number, an
    invariant. A named tuple: a record has hundreds, a site millions, read back from the
    cache on every build (a tuple is made three times faster than a frozen dataclass, and is
    half its size)."""

    path: str
    """JSON path of the claim: `speedRows.0.calculatedThroughputChangePercent`."""
    kind: str
    """receipt | revision | derived | invariant"""
    state: CheckState
    expected: str = ""
    found: str = ""
    reason: str = ""
    formula: str = ""
    """The formula that recomputed a derived number (the rule's, or an inferred or closest one)."""
    inferred: bool = False
    """Whether `formula` was inferred from the names and values beside the field (no rule)."""


class Later(Sequence[T]):
    """A sequence made when first read (by `load`), then kept until released."""

    def __init__(self, load: Callable[[], Sequence[T]]) -> None:
        self._load = load
        self._items: Sequence[T] | None = None

    def _all(self) -> Sequence[T]:
        if self._items is None:
            self._items = self._load()
        return self._items

    @property
    def held(self) -> bool:
        """Whether the items are in memory."""
        return self._items is not None

    def release(self) -> None:
        """Let go of the items: they are made again when next read (`lending.lent`)."""
        self._items = None

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self._all()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self._all()) == tuple(other)

    __hash__ = None  # type: ignore[assignment]


class LaterChecks(Later[ClaimCheck]):
    """Every check of a verification kept in the build cache, read when first asked (a page to
    render): the checks, the report and the report's counts need only the checks that did not
    verify and how many there are, known at once. A record has hundreds of checks, and 10,000
    records held 800 MB of them."""

    def __init__(
        self,
        unsettled: tuple[ClaimCheck, ...],
        counted: tuple[int, int],
        load: Callable[[], tuple[ClaimCheck, ...]],
    ) -> None:
        super().__init__(load)
        self.unsettled = unsettled
        self.counted = counted
        """How many checks there are, and how many of them an inferred formula verified."""

    def __len__(self) -> int:
        return self.counted[0]


@dataclass(frozen=True)
class Verification:
    """Every claim check of one record, plus warnings that are not contradictions."""

    source: str
    checks: Sequence[ClaimCheck]
    """A tuple, or for a verification a build read back from its cache, `LaterChecks`."""
    warnings: tuple[tuple[str, str], ...] = ()
    stored_as: str = field(default="", compare=False)
    """Its key in the build cache, if it is there (a later build may read it back)."""

    @property
    def unsettled(self) -> tuple[ClaimCheck, ...]:
        """The checks that did not verify, in order: what the checks and the report show."""
        if isinstance(self.checks, LaterChecks):
            return self.checks.unsettled
        return tuple(check for check in self.checks if check.state != "verified")

    @property
    def inferred(self) -> int:
        """How many checks a formula inferred from the record (no rule) verified."""
        if isinstance(self.checks, LaterChecks):
            return self.checks.counted[1]
        return sum(1 for check in self.checks if check.inferred and check.state == "verified")

    def count(self, state: CheckState) -> int:
        """Return how many checks ended in `state`."""
        unsettled = sum(1 for check in self.unsettled if check.state == state)
        return len(self.checks) - len(self.unsettled) if state == "verified" else unsettled

    def state_of(self, path: str) -> CheckState | None:
        """Return the state of the check on `path`, if one ran."""
        return next((check.state for check in self.checks if check.path == path), None)


def decimals(value: float | int) -> int:
    """Return how many decimals a recorded number carries: 10.284486 -> 6, 94 -> 0, 9e-06 -> 6."""
    exponent = Decimal(repr(value)).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def agrees(expected: Any, found: Any, tolerance: float | None = None) -> bool:
    """Compare numbers at the record's own precision (half a unit in its last decimal place, or
    a tolerance), other values exactly."""
    numeric = (int, float)
    if isinstance(expected, bool) or isinstance(found, bool) or not isinstance(expected, numeric):
        return expected == found
    if not isinstance(found, numeric):
        return False
    return abs(expected - found) <= (precision(found) if tolerance is None else tolerance)


def precision(found: float | int) -> float:
    """Return half a unit in the last decimal place a recorded number carries: 10.28 -> 0.005."""
    return 0.5 * 10 ** -decimals(found) + 1e-12


def rounded(expected: Any, found: Any) -> Any:
    """Show an expected number at the recorded precision."""
    if (
        isinstance(expected, float)
        and isinstance(found, int | float)
        and not isinstance(found, bool)
    ):
        return round(expected, max(decimals(found), 1))
    return expected
