"""The benchmark scripts under bench/ still run against today's code: each answers --help,
and the audit benchmark audits a small synthetic site and finds what it planted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(path.name for path in BENCH.glob("*.py")))
def test_each_benchmark_starts(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_the_audit_benchmark_audits_a_small_site() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "audit_bench.py"), "--pages", "400", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "planted near-duplicates: 7/7 found, 7 as error" in done.stdout
