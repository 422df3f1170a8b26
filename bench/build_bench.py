"""Build times at scale: cold, warm and one-change builds, per stage, with peak memory.

For each size N in --guides the script copies the project's tracked files into a temporary
folder and grows it to N guides with the referee's generator (../shared/bench/same-pages/
corpus.py, run where it is, never copied), then times `python build.py --timings` R times
each way and prints medians:

- cold: the output folder and the build cache (`.cache/`) deleted first;
- warm: nothing changed since the last build (the output folder is there);
- one prose: one guide's prose changed since the last build;
- one record: one guide's record changed (a note added) since the last build;
- one added: one guide (record and prose) added since the last build, the editor's daily
  step: the next guide a corpus one guide bigger has, so it is in the corpus's own style.

Each run reports its wall time, the stage times the builder prints, the builder's own peak
RSS, the largest of its worker processes' (forked: their RSS counts the pages they share with
the builder) and the largest of any child's (a worker, or the Pagefind indexer). With --referee ROWS (the rows.txt that
`bash ../shared/bench/same-pages/run.sh` writes), the cold median is set against Hugo +
Pagefind on the same corpus. With --shard-pages N the corpus's search index is kept in
shards of N guide pages (`search_shard_pages`). Run from the project root:

    .venv/bin/python bench/build_bench.py --guides 100,1000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "bench" / "same-pages" / "corpus.py"
# Runs build.py in-process so the builder's own peak RSS is read apart from Pagefind's.
RUNNER = """
import os, resource, runpy, sys
sys.argv = ["build.py", *sys.argv[1:]]
leave, builder = os._exit, os.getpid()

def report_peak(code):
    if os.getpid() != builder:  # a forked worker leaving (multiprocessing uses os._exit too)
        worker = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"WORKER {worker}", file=sys.stderr, flush=True)
        leave(code)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print(f"PEAK {own} {children}", file=sys.stderr, flush=True)
    leave(code)

os._exit = report_peak  # build.py leaves with os._exit once its output is flushed
try:
    runpy.run_path("build.py", run_name="__main__")
except SystemExit as stop:
    report_peak(stop.code or 0)
"""


def make_corpus(guides: int, folder: Path, shard_pages: int | None = None) -> Path:
    """Copy the project's tracked files into `folder` and grow it to `guides` guides (with
    `shard_pages`, its site settings set `search_shard_pages`)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = folder / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    subprocess.run(
        [sys.executable, str(CORPUS), str(folder), str(guides)], check=True, capture_output=True
    )
    if shard_pages is not None:
        settings = folder / "content" / "site.yaml"
        settings.write_text(f"{settings.read_text()}search_shard_pages: {shard_pages}\n")
    return folder


def run_build(project: Path, out: Path) -> dict[str, float]:
    """Run one build; return wall seconds, each stage's seconds and the peak RSS (MB)."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, "--out", str(out), "--quiet", "--timings"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env=user_environment(),
    )
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"build failed ({result.returncode}):\n{result.stderr[-2000:]}")
    line = next(line for line in result.stderr.splitlines() if line.startswith("Stage times:"))
    stages = {
        name.strip(): float(seconds)
        for name, seconds in re.findall(r"([a-z ]+) (\d+\.\d+) s", line.split(":", 1)[1])
    }
    own, children = re.search(r"PEAK (\d+) (\d+)", result.stderr).groups()
    workers = max(map(float, re.findall(r"WORKER (\d+)", result.stderr)), default=0.0)
    peaks = {"builder MB": float(own), "workers MB": workers, "children MB": float(children)}
    return {"wall": wall, **stages, **peaks}


def user_environment() -> dict[str, str]:
    """Return this environment as a user's shell has it: Python keeps the compiled code of
    the builder's modules (some sandboxes set PYTHONDONTWRITEBYTECODE, which makes every run
    compile them again, about 0.3 s)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def change_one_guide(project: Path, round_number: int) -> None:
    """Add one sentence to the first generated guide's prose."""
    prose = sorted((project / "content").glob("bench-*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + f"\nEdit {round_number}.\n", "utf-8")


def change_one_record(project: Path, round_number: int) -> None:
    """Add a note to the first generated record (a new section on its page only)."""
    path = sorted((project / "records").glob("*_bench.json"))[0]
    record = json.loads(path.read_text("utf-8"))
    record["benchNote"] = f"edited in round {round_number}"
    path.write_text(json.dumps(record, indent=2), "utf-8")


def more_guides(project: Path, more: Path) -> list[tuple[Path, Path]]:
    """Return the record and prose file of each guide the bigger corpus `more` has beyond
    `project`'s, in the order the generator made them (it makes the same guides first)."""
    records = sorted(
        path
        for path in (more / "records").glob("*_bench.json")
        if not (project / "records" / path.name).exists()
    )
    prose = sorted(
        path
        for path in (more / "content").glob("bench-*.md")
        if not (project / "content" / path.name).exists()
    )
    if len(records) != len(prose):
        raise SystemExit("the bigger corpus's new records and prose files do not pair up")
    return list(zip(records, prose, strict=True))


def referee_ratio(rows: Path, guides: int, ours: float) -> str:
    """Return ours / (Hugo + Pagefind) from the referee's rows.txt, if it has this size."""
    times: dict[str, list[float]] = defaultdict(list)
    for line in rows.read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] == str(guides):
            times[parts[1]].append(float(parts[2]))
    if not times.get("hugo") or not times.get("pagefind"):
        return "no referee rows for this size"
    both = statistics.median(times["hugo"]) + statistics.median(times["pagefind"])
    return f"Hugo + Pagefind {both:.2f} s: ratio {ours / both:.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guides", default="100,1000", help="sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="builds of each kind per size")
    parser.add_argument("--referee", type=Path, help="the referee's rows.txt, for the ratio")
    parser.add_argument(
        "--shard-pages", type=int, help="search_shard_pages for the corpus (default: the site's)"
    )
    args = parser.parse_args()
    if not CORPUS.is_file():
        raise SystemExit(f"{CORPUS} is missing: the referee's corpus generator is needed")
    for guides in (int(size) for size in args.guides.split(",")):
        with tempfile.TemporaryDirectory(prefix="build-bench-") as temporary:
            project = make_corpus(guides, Path(temporary) / "project", args.shard_pages)
            more = make_corpus(guides + args.repeat, Path(temporary) / "more", args.shard_pages)
            added = more_guides(project, more)
            out = Path(temporary) / "out"
            runs: dict[str, list[dict[str, float]]] = defaultdict(list)
            for round_number in range(args.repeat):
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(project / ".cache", ignore_errors=True)
                runs["cold"].append(run_build(project, out))
                runs["warm"].append(run_build(project, out))
                change_one_guide(project, round_number)
                runs["one prose"].append(run_build(project, out))
                change_one_record(project, round_number)
                runs["one record"].append(run_build(project, out))
                copies = [project / source.relative_to(more) for source in added[round_number]]
                for source, copy in zip(added[round_number], copies, strict=True):
                    shutil.copy2(source, copy)
                runs["one added"].append(run_build(project, out))
                for copy in copies:  # the next round's cold build has N guides again
                    copy.unlink()
            print(f"N={guides} ({args.repeat} runs each, medians):")
            for kind, results in runs.items():
                keys = list(dict.fromkeys(k for result in results for k in result if k != "wall"))
                median = {
                    key: statistics.median(r.get(key, 0.0) for r in results)
                    for key in ["wall", *keys]
                }
                stages = ", ".join(
                    f"{key} {median[key]:.2f}" for key in keys if not key.endswith("MB")
                )
                print(
                    f"  {kind:10} {median['wall']:7.2f} s ({1000 * median['wall'] / guides:.1f}"
                    f" ms/guide); peak RSS builder {median['builder MB']:.0f} MB, a worker "
                    f"{median['workers MB']:.0f} MB, any child {median['children MB']:.0f} MB;"
                    f" stages (s): {stages}"
                )
            if args.referee and args.referee.is_file():
                cold = statistics.median(r["wall"] for r in runs["cold"])
                print(f"  cold vs {referee_ratio(args.referee, guides, cold)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
