"""Run a command and print, for it and every process it starts, the CPU each used and when
each was alive: where a build's time goes between the builder, its workers and Pagefind.

    python bench/process_cpu.py -- python build.py --quiet

Linux only: it reads /proc every `--every` seconds (default 0.05), so a process that lives
less than that may be missed, and each figure is as of the last reading before it ended.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Seen:
    """One process as last read: its name, CPU seconds, and when it was first and last seen."""

    name: str
    cpu: float
    first: float
    last: float


def processes() -> dict[int, tuple[str, int, float]]:
    """Return every process's (name, parent id, CPU seconds: user and system)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stream:
                stat = stream.read()
        except OSError:
            continue
        close = stat.rfind(")")
        fields = stat[close + 2 :].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICKS
        found[int(entry)] = (stat[stat.find("(") + 1 : close], int(fields[1]), cpu)
    return found


def watch(command: list[str], every: float) -> tuple[float, dict[int, Seen]]:
    """Run `command` to its end; return its wall seconds and what was seen of each process."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree, seen = {process.pid}, {}
    while process.poll() is None:
        now = time.monotonic() - started
        running = processes()
        grown = True
        while grown:  # children of children, in any order
            grown = False
            for pid, (_, parent, _) in running.items():
                if parent in tree and pid not in tree:
                    tree.add(pid)
                    grown = True
        for pid in tree & running.keys():
            name, _, cpu = running[pid]
            earlier = seen.get(pid)
            name = "command" if pid == process.pid else name
            seen[pid] = Seen(name, cpu, earlier.first if earlier else now, now)
        time.sleep(every)
    return time.monotonic() - started, seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.05, help="seconds between readings")
    parser.add_argument("--least", type=float, default=0.2, help="list processes over this CPU")
    parser.add_argument("command", nargs="+", help="the command to run (after --)")
    options = parser.parse_args()
    if not os.path.isdir("/proc"):
        sys.exit("needs Linux's /proc")
    wall, seen = watch(options.command, options.every)
    print(f"wall {wall:.2f} s")
    by_name: dict[str, float] = defaultdict(float)
    for pid, process in sorted(seen.items(), key=lambda item: item[1].first):
        by_name[process.name] += process.cpu
        if process.cpu >= options.least:
            alive = f"{process.first:7.2f} to {process.last:7.2f} s"
            print(f"{pid:8} {process.name[:20]:20} cpu {process.cpu:7.2f} s  alive {alive}")
    print("CPU by name: " + ", ".join(f"{name} {cpu:.2f} s" for name, cpu in by_name.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
