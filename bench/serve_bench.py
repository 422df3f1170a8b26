"""Benchmark the live preview: save a record, time until an open chromium tab shows the change.

For each site size (a copy of the real 4-guide project, plus synthetic guides derived from the
real records up to the requested count) this script checks `build.py --audit` exits 0, times a
cold `build.py --out`, times warm in-process rebuilds, then starts `build.py --serve --port 0`,
opens the edited guide in Debian's chromium (Playwright) and, for each edit, changes the
record's decision classification and measures with time.perf_counter until the page has
reloaded by itself (Server-Sent Events) and `code.classification` shows the new value. The
server's "Rebuilt" stderr line is timestamped too, splitting each edit into save -> "Rebuilt"
(watcher debounce + rebuild) and "Rebuilt" -> DOM (SSE + reload + page load).

    .venv/bin/python bench/serve_bench.py [--guides 4,1000] [--edits 7] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from watchfiles import watch  # noqa: E402

from site_builder.config import BuildConfig  # noqa: E402
from site_builder.pipeline import build  # noqa: E402
from tests import preview_helpers  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
COPIED = ("records", "content", "templates", "build.py", "site_builder")
RECORD = "records/003_d837ec4df0827390.json"
GUIDE = "guides/glm-5-2-vllm-sequence-parallel-moe/"
DROPPED = ("overlapAudit", "aiHot", "aiHotCandidate", "serp", "discovery")
SEED = 52
COMMAND_TIMEOUT = 900  # seconds for one audit or cold build
EDIT_TIMEOUT_MS = 900_000  # one save -> new DOM (a 1,000-guide rebuild takes minutes)
QUIET_SECONDS = 1.0  # no rebuild logged for this long before the next edit
WARM_RUNS = 3
SHOWN = "v => window.beforeEdit === undefined && "
SHOWN += "document.querySelector('code.classification')?.textContent === v"


def frozen_keys(root: Path) -> frozenset[str]:
    """Return the keys the project's claim rules read or recompute (content/rules.yaml)."""
    path = root / "content" / "rules.yaml"
    rules = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else {}
    texts = [
        str(rule.get(name, ""))
        for group in ("derived", "invariants")
        for rule in (rules or {}).get(group) or []
        for name in ("field", "formula")
    ]
    return frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(texts)))


class Perturber:
    """Give a record new prose, numbers, hashes and URLs while its own claims still verify.

    Kept: scalars (and lists of scalars) under keys the claim rules read or recompute,
    calculated*/computed* fields, and other strings without spaces (tags, times, enum values
    that formulas compare). Hashes and URLs are replaced consistently within a record, so
    fields that must be equal stay equal.
    """

    def __init__(self, rng: random.Random, vocab: list[str], frozen: frozenset[str]) -> None:
        self.rng, self.vocab, self.frozen = rng, vocab, frozen
        self.substitutes: dict[str, str] = {}

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """Return a perturbed copy of one record."""
        self.substitutes = {}
        return self.value(record, False)

    def value(self, value: Any, keep: bool) -> Any:
        """Return a perturbed copy of one JSON value."""
        rng = self.rng
        if isinstance(value, dict):
            return {
                key: self.value(
                    item,
                    keep
                    or (key in self.frozen and not _objects(item))
                    or bool(re.match(r"(calculated|computed)[A-Z]", key)),
                )
                for key, item in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, keep) for item in value]
        if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):
            new = f"{rng.getrandbits(4 * len(value)):0{len(value)}x}"
            return self.substitutes.setdefault(value, new)
        if isinstance(value, str) and re.match(r"https?://", value):
            new = "https://example.org/" + "/".join(rng.choices(self.vocab, k=3))
            return self.substitutes.setdefault(value, new)
        if keep or value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return rng.randrange(1, 2 * abs(value) + 10)
        if isinstance(value, float):
            return round(value * rng.uniform(0.5, 1.5) + rng.random(), 3)
        words = len(value.split())
        return " ".join(rng.choices(self.vocab, k=words)) if words > 1 else value


def _objects(value: Any) -> bool:
    """Return whether a value holds objects (a rule reads their fields, not the whole)."""
    return isinstance(value, dict) or (isinstance(value, list) and any(map(_objects, value)))


def make_project(folder: Path, guides: int) -> Path:
    """Copy the project into `folder`, adding synthetic records up to `guides` guides."""
    root = folder / "project"
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / name)
    bases = [json.loads(path.read_text("utf-8")) for path in sorted(root.glob("records/*.json"))]
    vocab = sorted({word for base in bases for word in re.findall(r"[a-z]{4,}", str(base).lower())})
    rng = random.Random(SEED)
    perturber = Perturber(rng, vocab, frozen_keys(root))
    for i in range(max(0, guides - len(bases))):
        base = bases[i % len(bases)]
        record = perturber.record({k: v for k, v in base.items() if k not in DROPPED})
        record.update(
            schemaVersion=base["schemaVersion"],
            operationId=f"synthetic-{i:04d}-{rng.getrandbits(32):08x}",
            status=f"synthetic-{i:04d}-" + "-".join(rng.sample(vocab, 4)),
        )
        decision = "decision" if "decision" in record else "rolloutDecision"
        record[decision]["classification"] = f"verdict-{i:04d}-" + "-".join(rng.sample(vocab, 2))
        (root / "records" / f"9{i:03d}_synthetic.json").write_text(json.dumps(record, indent=2))
    return root


def run(root: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run `python build.py ARGS` in the project; return wall seconds and the result."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "build.py", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )
    return time.perf_counter() - started, result


def offline_figures(root: Path, profile: bool) -> float:
    """Print the audit and cold build times; return the median warm in-process build time."""
    seconds, audit = run(root, "--audit", "--format", "json")
    summary = json.loads(audit.stdout)["summary"] if audit.stdout.startswith("{") else {}
    print(f"  audit: exit {audit.returncode} in {seconds:.2f} s ({summary or audit.stderr[-500:]})")
    if audit.returncode != 0:
        raise SystemExit("the generated project fails its audit; not timing it")
    seconds, cold = run(root, "--out", "tmp")
    said = re.search(r"Built (\d+) files.* in ([\d.]+)s", cold.stdout)
    if cold.returncode != 0 or said is None:
        raise SystemExit(f"cold build failed: {cold.stderr[-2000:]}")
    print(f"  cold build: {seconds:.2f} s wall ({said[1]} files; the builder reports {said[2]} s)")
    config = BuildConfig.for_root(root, root / "tmp")
    warm = []
    for _ in range(WARM_RUNS if seconds < 10 else 1):
        started = time.perf_counter()
        build(config)
        warm.append(time.perf_counter() - started)
    print(f"  warm in-process rebuild: median {statistics.median(warm):.2f} s of {warm_list(warm)}")
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(build, config)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(10)
        print("  cProfile of one build, top 10 by cumulative time:")
        print("\n".join("    " + line for line in out.getvalue().strip().splitlines()[-14:]))
    return statistics.median(warm)


def warm_list(values: list[float]) -> str:
    """Format a list of seconds."""
    return "[" + ", ".join(f"{value:.2f}" for value in values) + "]"


def measure(browser: Any, root: Path, label: str, edits: int) -> list[tuple[float, ...]]:
    """Edit the record `edits` times; return (save -> DOM, -> watcher, -> "Rebuilt") each."""
    preview = preview_helpers.start_preview(root)
    logged: list[tuple[float, str]] = []  # (perf_counter, line) of each rebuild line
    fired: list[float] = []  # perf_counter of each burst our own watcher reports
    stop = threading.Event()

    def observe() -> None:  # the preview's watcher settings (site_builder/preview.py)
        for _ in watch(root / "records", debounce=1600, step=100, stop_event=stop):
            fired.append(time.perf_counter())

    def follow() -> None:
        seen = 0
        while not stop.is_set():
            lines = preview.stderr
            for line in lines[seen : len(lines)]:
                if line.startswith("Rebuil"):
                    logged.append((time.perf_counter(), line))
                seen += 1
            time.sleep(0.002)

    threading.Thread(target=follow, daemon=True).start()
    threading.Thread(target=observe, daemon=True).start()
    page = browser.new_page()
    results = []
    try:
        page.goto(preview.url + GUIDE, timeout=EDIT_TIMEOUT_MS)
        path = root / RECORD
        for number in range(edits):
            wait_quiet(logged, fired)
            value = f"bench-{label}-edit-{number + 1}"
            data = json.loads(path.read_text("utf-8"))
            data["decision" if "decision" in data else "rolloutDecision"]["classification"] = value
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            page.evaluate("window.beforeEdit = true")
            before, burst = len(logged), len(fired)
            started = time.perf_counter()
            path.write_text(text, "utf-8")
            page.wait_for_function(SHOWN, arg=value, timeout=EDIT_TIMEOUT_MS)
            shown = time.perf_counter() - started
            deadline = time.monotonic() + 10
            while len(logged) <= before and time.monotonic() < deadline:
                time.sleep(0.01)
            if len(logged) <= before or not logged[before][1].startswith("Rebuilt"):
                raise SystemExit(f"no successful rebuild logged: {preview.stderr[-3:]}")
            rebuilt = logged[before][0] - started
            watched = fired[burst] - started if len(fired) > burst else float("nan")
            results.append((shown, watched, rebuilt))
            print(
                f"    edit {number + 1}: {shown:.3f} s = watcher {watched:.3f} + rebuild "
                f"{rebuilt - watched:.3f} + SSE/reload/load {shown - rebuilt:.3f}"
            )
        wait_quiet(logged, fired)
        if len(logged) != edits + 1:
            print(f"  note: {len(logged) - 1} rebuilds for {edits} edits")
    finally:
        stop.set()
        page.close()
        preview.stop()
        shutil.rmtree(preview.workdir, ignore_errors=True)
    return results


def wait_quiet(logged: list[tuple[float, str]], fired: list[float]) -> None:
    """Wait until no rebuild nor change was seen for QUIET_SECONDS (at most 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        last = max([0.0, *fired[-1:], *(at for at, _ in logged[-1:])])
        if time.perf_counter() - last >= QUIET_SECONDS:
            return
        time.sleep(0.05)


def report(label: str, results: list[tuple[float, ...]], warm: float) -> str:
    """Print the figures of one size; return its one-line summary."""
    median = statistics.median
    total = [shown for shown, _, _ in results]
    watcher = median(watched for _, watched, _ in results)
    rebuild = median(rebuilt - watched for _, watched, rebuilt in results)
    rest = median(shown - rebuilt for shown, _, rebuilt in results)
    line = f"median {median(total):.3f} s, min {min(total):.3f}, max {max(total):.3f}"
    print(f"  save -> new DOM over {len(total)} edits: {line}")
    print(
        f"  split (medians): watcher debounce {watcher:.3f} s, server rebuild {rebuild:.3f} s "
        f"(warm in-process build {warm:.3f} s), 'Rebuilt' -> DOM {rest:.3f} s (SSE, reload, load)"
    )
    return (
        f"{label:>6} guides: {line}; rebuild {rebuild:.3f} s, other {median(total) - rebuild:.3f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guides", default="4,1000", help="site sizes, comma separated")
    parser.add_argument("--edits", type=int, default=7, help="edits per size (default 7)")
    parser.add_argument("--profile", action="store_true", help="cProfile one build per size")
    args = parser.parse_args()
    sizes = [int(size) for size in args.guides.split(",")]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still clean up when killed
    preview_helpers.STARTUP_SECONDS = COMMAND_TIMEOUT  # the first build happens before serving
    from playwright.sync_api import sync_playwright

    summary = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for size in sizes:
                print(f"== {size} guides ==", flush=True)
                with tempfile.TemporaryDirectory(prefix="serve-bench-") as folder:
                    root = make_project(Path(folder), size)
                    warm = offline_figures(root, args.profile)
                    results = measure(browser, root, str(size), args.edits)
                    summary.append(report(str(size), results, warm))
        finally:
            browser.close()
    print("== summary: save a record -> open tab shows it ==")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
