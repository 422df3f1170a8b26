"""The outcome of verifying one record's claims: each check, its state, expected and found values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CheckState = Literal["verified", "unverifiable", "contradicted"]


@dataclass(frozen=True)
class ClaimCheck:
    """The outcome of checking one claim of a record: a receipt, a revision, a number, an invariant."""

    path: str
    """JSON path of the claim: `speedRows.0.calculatedThroughputChangePercent`."""
    kind: str
    """receipt | revision | derived | invariant"""
    state: CheckState
    expected: str = ""
    found: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Verification:
    """Every claim check of one record, plus warnings that are not contradictions."""

    source: str
    checks: tuple[ClaimCheck, ...]
    warnings: tuple[tuple[str, str], ...] = ()

    def count(self, state: CheckState) -> int:
        """Return how many checks ended in `state`."""
        return sum(1 for check in self.checks if check.state == state)

    def state_of(self, path: str) -> CheckState | None:
        """Return the state of the check on `path`, if one ran."""
        return next((check.state for check in self.checks if check.path == path), None)
