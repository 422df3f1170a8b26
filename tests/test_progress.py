"""A build run on a terminal shows which stage it is in; piped output stays plain."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from site_builder.runtime.progress import STAGES
from tests.conftest import Project


def run_on_terminal(project: Project, *args: str) -> str:
    """Run build.py with stderr on a pseudo-terminal; return what the terminal received."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "build.py", *args],
        cwd=project.root,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the build is over
            break
        if not chunk:
            break
        received += chunk
    assert process.wait(timeout=120) == 0
    os.close(leader)
    return received.decode("utf-8", "replace")


def test_a_build_on_a_terminal_shows_its_stages(project: Project) -> None:
    shown = run_on_terminal(project, "--no-cache")
    assert "Building" in shown
    assert sum(description in shown for description in STAGES.values()) >= 2, shown[-2000:]


def test_quiet_and_piped_builds_show_no_progress(project: Project) -> None:
    assert "Building" not in run_on_terminal(project, "--no-cache", "--quiet")
    piped = project.run("--no-cache")
    assert piped.returncode == 0 and "Building" not in piped.stderr
