"""A preview rebuild at scale, in process: how soon a saved record is served, and checked.

For each size N in --guides the script grows a copy of the project to N guides (as
`build_bench.py` does), builds it once the way `--serve` does (drafts included, the build
cache held in memory), then saves one record --edits times, each with a new decision
classification (a value the index, tag pages and feed show too), and rebuilds after each
save exactly as the preview's watcher does (`Previewer.rebuild`, told the saved file). It prints, per edit and as
medians: "shown", the seconds from the call until the new site is published to open tabs,
and "checked", until the site checks are done; the rebuild's own stage times come from
`build`. The watcher's debounce (about 0.1 s after the last write) and the browser's reload
are not included: `serve_bench.py` measures those end to end in Chromium. Run from the
project root:

    .venv/bin/python bench/rebuild_bench.py --guides 1000 --edits 10

`--project DIR` measures an existing generated project in place (the referee's corpus, copied
first: its first `*_bench.json` record is edited); `--settle` waits, before each save, until
the last save's search index is done, so Pagefind does not share the cores with the rebuild.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.build_bench import make_corpus
from site_builder.config import BuildConfig
from site_builder.preview.builds import Previewer


def edit_record(project: Path, number: int) -> Path:
    """Give the first generated record a new decision classification; return its path."""
    path = sorted((project / "records").glob("*_bench.json"))[0]
    record = json.loads(path.read_text("utf-8"))
    decision = record["decision" if "decision" in record else "rolloutDecision"]
    decision["classification"] = f"bench-edit-{number}"
    path.write_text(json.dumps(record, indent=2), "utf-8")
    return path.resolve()


def measure(guides: int, edits: int, settle: bool) -> None:
    """Build a grown copy once, then time `edits` rebuilds after a record save."""
    with tempfile.TemporaryDirectory(prefix="rebuild-bench-") as folder:
        measure_project(make_corpus(guides, Path(folder) / "project"), edits, settle)


def measure_project(project: Path, edits: int, settle: bool) -> None:
    """Build `project` once the way the preview does, then time `edits` rebuilds after a
    record save (with `settle`, each save waits until the last search index is done)."""
    lines: list[str] = []
    previewer = Previewer(BuildConfig.for_root(project), lines.append)
    try:
        start = time.perf_counter()
        assert previewer.rebuild(), lines
        guides = len(list((project / "records").glob("*.json")))
        print(f"{guides} records: first build {time.perf_counter() - start:.2f} s")
        shown, checked = [], []
        for number in range(edits):
            if settle:
                for indexer in list(previewer._indexers):
                    indexer.join()
            saved = edit_record(project, number)
            version = previewer.state.version
            start = time.perf_counter()
            previewer.rebuild({str(saved)})  # what the watcher reports
            checked.append(time.perf_counter() - start)
            line = lines[-1]
            shown.append(float(line.split("Shown in ")[1].split(" s")[0]))
            assert previewer.state.version > version, line
            print(f"  edit {number + 1}: shown {shown[-1]:.2f} s, checked {checked[-1]:.2f} s")
        print(
            f"  median of {edits}: shown {statistics.median(shown):.2f} s "
            f"(min {min(shown):.2f}, max {max(shown):.2f}), "
            f"checked {statistics.median(checked):.2f} s"
        )
    finally:
        previewer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guides", default="1000", help="sizes, comma-separated")
    parser.add_argument("--edits", type=int, default=10, help="record saves per size")
    parser.add_argument(
        "--project",
        type=Path,
        help="measure this generated project in place instead (its first *_bench.json record "
        "is edited), e.g. a copy of the referee's corpus",
    )
    parser.add_argument(
        "--settle",
        action="store_true",
        help="before each save, wait for the search index of the last one",
    )
    args = parser.parse_args()
    if args.project is not None:
        measure_project(args.project.resolve(), args.edits, args.settle)
        return 0
    for guides in (int(size) for size in args.guides.split(",")):
        measure(guides, args.edits, args.settle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
