"""The outcome of verifying one record's claims: each check, its state, expected and found values.

Also how a recomputed number is compared with the recorded one: at the record's own precision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, NamedTuple

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


@dataclass(frozen=True)
class Verification:
    """Every claim check of one record, plus warnings that are not contradictions."""

    source: str
    checks: tuple[ClaimCheck, ...]
    warnings: tuple[tuple[str, str], ...] = ()
    stored_as: str = field(default="", compare=False)
    """Its key in the build cache, if it is there (a later build may read it back)."""

    def count(self, state: CheckState) -> int:
        """Return how many checks ended in `state`."""
        return sum(1 for check in self.checks if check.state == state)

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
