"""Verify each record's own claims: derived numbers by rules or inferred formulas, invariants, caveated measurements."""
