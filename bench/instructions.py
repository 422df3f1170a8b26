"""Run a command under Valgrind's cachegrind and print the instructions each of its Python
processes ran (the builder and the workers it forks), and their total: a count that is the
same from run to run, where wall and CPU times on a shared machine vary by a tenth or more.

    python bench/instructions.py -- python build.py --quiet

Forked processes are counted; a program the command starts (Pagefind) is not, as cachegrind
does not follow exec by default, so the figure is the builder's own work. Under cachegrind
the command runs about 50 times slower: use a small project (100 guides take about 2 minutes).
Needs the `valgrind` command (Debian's package `valgrind`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def counts(folder: Path) -> dict[int, tuple[str, int]]:
    """Return each process's (command line, instructions) from its cachegrind file."""
    found = {}
    for path in folder.glob("cachegrind.*"):
        text = path.read_text("utf-8", "replace")
        command = re.search(r"^cmd: (.*)$", text, re.MULTILINE)
        summary = re.search(r"^summary: (\d+)", text, re.MULTILINE)
        if summary is not None:
            pid = int(path.suffix.lstrip("."))
            found[pid] = (command.group(1) if command else "?", int(summary.group(1)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="+", help="the command to run (after --)")
    options = parser.parse_args()
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("needs valgrind (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [
                valgrind,
                "--tool=cachegrind",
                "--cache-sim=no",
                f"--cachegrind-out-file={folder}/cachegrind.%p",
                *options.command,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            sys.exit(f"the command failed (exit code {done.returncode})")
        found = counts(Path(folder))
    for pid, (command, instructions) in sorted(found.items()):
        print(f"{pid:8} {instructions / 1e9:8.3f} G instructions  {command[:60]}")
    total = sum(instructions for _, instructions in found.values())
    print(f"total {total / 1e9:.3f} G instructions in {len(found)} processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
