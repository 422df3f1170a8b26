"""The benchmark scripts under bench/ still run against today's code: each answers --help,
and the audit benchmark audits a small synthetic site and finds what it planted."""

from __future__ import annotations

import shutil
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


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_instruction_count_covers_forked_processes_not_programs_they_start() -> None:
    """The parent, and a child it forks that runs three times its loop, are counted apart
    (the child more); a program started with exec (here `true`) is not counted."""
    snippet = (
        "import os, subprocess\n"
        "sum(range(10**6))\n"
        "subprocess.run(['true'])\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sum(range(4 * 10**6)); os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    done = subprocess.run(
        [sys.executable, str(BENCH / "instructions.py"), "--", sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if "G instructions  " in line]
    assert len(rows) == 2, done.stdout  # parent and forked child; `true` is not followed
    parent, child = (float(row[1]) for row in rows)
    assert child > parent > 0
    total = float(done.stdout.splitlines()[-1].split()[1])
    assert abs(total - parent - child) < 0.002 and "in 2 processes" in done.stdout
