"""ruff keeps the code in one style; run as a test so the README's test command covers it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ruff from the active environment on the project."""
    executable = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"
    return subprocess.run(
        [executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("args", [("check", "."), ("format", "--check", ".")])
def test_ruff_is_clean(args: tuple[str, ...]) -> None:
    result = ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr
