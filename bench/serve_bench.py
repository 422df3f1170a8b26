"""Benchmark the live preview: save a record, time until an open chromium tab shows the change.

For each site size (a temp copy of the real 4-guide project, plus synthetic guides derived from
the real records up to the requested count) the script checks `build.py --audit` exits 0, times
a cold `build.py --out tmp`, then starts `build.py --serve --port 0`, opens the edited guide in
Debian's chromium (Playwright) and, per edit, changes the record's decision classification and
times (time.perf_counter) until the tab has a new body (swapped in place, or reloaded) and
`code.classification` shows the new value. The first figure is when the browser painted the new
page, by its own clock (the first frame after the swap, or the paint entry of a reloaded
document; Playwright notices the new DOM some 0.1 s later). Each
edit is split by our own watcher (the preview's watchfiles settings) and our own Server-Sent
Events client: save -> watcher fires -> reload event (rebuild done) -> new DOM.

    .venv/bin/python bench/serve_bench.py [--guides 4,1000] [--edits 7] [--search]
    .venv/bin/python bench/serve_bench.py --project DIR [--edits 10] [--search]

With `--search` a second tab is opened on the search page half a second before each save,
searching for a word only the edit brings; each edit also times until that tab lists the
edited guide (the preview serves the
new search index a moment after the page, and an open search page starts over on it). The
second tab updates with the first, so the guide tab's figures are then a little slower.

With `--project DIR` it times a project of your own instead, in place (it edits DIR's
`records/003_d837ec4df0827390.json`, the seed record, puts the record's bytes back when done,
and keeps its build cache), such as the referee's 10,000-guide corpus; no audit or cold build
is timed first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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

from site_builder.preview.watching import bursts  # noqa: E402
from tests import preview_helpers  # noqa: E402
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, GUIDE, RECORD  # noqa: E402

COPIED = ("records", "content", "templates", "build.py", "site_builder")
DROPPED = ("overlapAudit", "aiHot", "aiHotCandidate", "serp", "discovery")
SEED = 52
KEPT_KEY = re.compile(
    r"^(calculated|computed)[A-Z]|(?i:commit|revision|head|sha|tag|release)$|[a-z](At|LastModified)$"
)
"""Derived fields, and keys whose values site_builder/verify/records.py checks by key: kept as is."""
COMMAND_TIMEOUT = 900  # seconds for one audit, cold build or preview start
EDIT_TIMEOUT_MS = 900_000  # one save -> new DOM (a 1,000-guide rebuild takes minutes)
QUIET_SECONDS = 1.0  # nothing changed nor reloaded for this long before the next edit
MARK = """() => {
  window.edited = true;
  window.swapPainted = undefined;
  new MutationObserver((changes, observer) => {
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => {
      window.swapPainted = performance.timeOrigin + performance.now();
    }));
  }).observe(document.documentElement, {
    childList: true, subtree: true, characterData: true, attributes: true
  });
}"""
"""Before an edit: time the first frame after the page changes (in place, all at once)."""
SHOWN = "v => document.querySelector('code.classification')?.textContent === v"
PAINTED = "() => window.edited ? window.swapPainted : "
PAINTED += "(p => p && performance.timeOrigin + p.startTime)"
PAINTED += "(performance.getEntriesByName('first-contentful-paint')[0])"
"""When the new page was first painted, by the browser's clock (milliseconds since the epoch,
as `time.time() * 1000`): swapped in place, the first frame after the swap; reloaded, the new
document's first paint. Playwright notices the new DOM some 0.1 s later."""
WATCH_LISTED = """selector => {
  window.listedAt = undefined;
  new MutationObserver((changes, observer) => {
    if (document.querySelector(selector)) {
      window.listedAt = Date.now();
      observer.disconnect();
    }
  }).observe(document.body, { childList: true, subtree: true });
}"""
"""Before an edit: note when the search page first lists the guide (by the browser's clock)."""
LISTED = "() => window.listedAt"
"""When it did (milliseconds since the epoch, as `time.time() * 1000`)."""


def frozen_keys(root: Path) -> frozenset[str]:
    """Return every name in the claim rules (content/rules.yaml): keys they read or recompute."""
    path = root / "content" / "rules.yaml"
    rules = (yaml.safe_load(path.read_text("utf-8")) if path.is_file() else None) or {}
    groups = (rules.get("derived") or [], rules.get("invariants") or [])
    text = " ".join(
        f"{rule.get('field', '')} {rule.get('formula', '')}" for g in groups for rule in g
    )
    return frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def make_project(folder: Path, guides: int) -> Path:
    """Copy the project into `folder`, adding synthetic records up to `guides` guides.

    Each synthetic record gets new prose, numbers, hashes and URLs, yet its claims still verify:
    scalars (and lists of scalars) under keys the claim rules name and KEPT_KEY fields are kept,
    and hashes and URLs are replaced consistently within a record, so equal fields stay equal.
    """
    root = folder / "project"
    for name in COPIED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, root / name)
    bases = [json.loads(path.read_text("utf-8")) for path in sorted(root.glob("records/*.json"))]
    vocab = sorted({word for base in bases for word in re.findall(r"[a-z]{4,}", str(base).lower())})
    rng, frozen, substitutes = random.Random(SEED), frozen_keys(root), dict[str, str]()

    def objects(value: Any) -> bool:  # the rules read the fields of objects, not the whole
        return isinstance(value, dict) or (isinstance(value, list) and any(map(objects, value)))

    def perturb(value: Any, keep: bool) -> Any:
        if isinstance(value, dict):
            kept = {k for k, v in value.items() if k in frozen and not objects(v)}
            return {
                k: perturb(v, keep or k in kept or bool(KEPT_KEY.search(k)))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [perturb(item, keep) for item in value]
        if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):
            new = f"{rng.getrandbits(4 * len(value)):0{len(value)}x}"
            return substitutes.setdefault(value, new)
        if isinstance(value, str) and re.match(r"https?://", value):
            new = "https://example.org/" + "/".join(rng.choices(vocab, k=3))
            return substitutes.setdefault(value, new)
        if keep or value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            return rng.randrange(1, 2 * abs(value) + 10)
        if isinstance(value, float):
            return round(value * rng.uniform(0.5, 1.5) + rng.random(), 3)
        if len(value.split()) > 1:
            return " ".join(rng.choices(vocab, k=len(value.split())))
        return "-".join(rng.choices(vocab, k=len(re.split(r"[-_./:]+", value))))

    for i in range(max(0, guides - len(bases))):
        base = bases[i % len(bases)]
        substitutes.clear()
        record = perturb({k: v for k, v in base.items() if k not in DROPPED}, False)
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
    started, command = time.perf_counter(), [sys.executable, "build.py", *args]
    result = subprocess.run(
        command, cwd=root, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )
    return time.perf_counter() - started, result


def offline_figures(root: Path) -> None:
    """Print the audit and cold build times; stop if the audit fails."""
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


class ReloadClock(preview_helpers.EventStream):
    """A Server-Sent Events client on the preview that timestamps every reload event."""

    def __init__(self, preview: preview_helpers.Preview) -> None:
        self.times: list[float] = []
        super().__init__(preview)

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            for raw in self.response.fp:
                if raw.startswith(b"event: reload"):
                    self.times.append(time.perf_counter())


def start_preview(root: Path, cleanup: contextlib.ExitStack) -> preview_helpers.Preview:
    """Start `build.py --serve --port 0` like tests/preview_helpers.start_preview, except that
    stopping it (and removing its folder) is registered first, so a failed start leaks nothing."""
    command = [sys.executable, "build.py", "--serve", "--port", "0"]
    pipe = subprocess.PIPE
    process = subprocess.Popen(command, cwd=root, stdout=pipe, stderr=pipe, text=True, bufsize=1)
    preview = preview_helpers.Preview(process, "", root)
    cleanup.callback(stop_preview, preview)
    for stream, lines in ((process.stdout, preview.stdout), (process.stderr, preview.stderr)):
        threading.Thread(target=preview_helpers._drain, args=(stream, lines), daemon=True).start()
    deadline = time.monotonic() + COMMAND_TIMEOUT
    while not (urls := [re.search(r"http://\S+/", line) for line in preview.stdout]):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the preview did not start: {preview.stderr[-5:]}")
        time.sleep(0.1)
    preview.url = urls[0][0] if urls[0] else ""
    return preview


def stop_preview(preview: preview_helpers.Preview) -> None:
    """Ctrl-C the preview (killed after 15 s) and remove its temporary folder if it did not."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        preview.stop()
    for found in (re.match(r"Building into (\S+)", line) for line in preview.stderr):
        if found:
            shutil.rmtree(found[1], ignore_errors=True)


def measure(
    browser: Any, root: Path, label: str, edits: int, search: bool = False
) -> list[tuple[float, ...]]:
    """Edit the record `edits` times; return (save -> DOM, -> watcher, -> reload event, ->
    painted, and with `search` -> found by an open search page) each."""
    fired: list[float] = []  # perf_counter of each burst our own watcher reports
    stop, results = threading.Event(), []

    def observe() -> None:  # the preview's own watcher (site_builder/preview/builds.py)
        for _ in bursts([root / "records"], stop):
            fired.append(time.perf_counter())

    path = root / RECORD
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(path.write_bytes, path.read_bytes())  # last: once the preview stopped
        preview = start_preview(root, cleanup)
        threading.Thread(target=observe, daemon=True).start()
        cleanup.callback(stop.set)
        clock = ReloadClock(preview)
        cleanup.callback(clock.close)
        page = browser.new_page()
        cleanup.callback(page.close)
        page.goto(preview.url + GUIDE, timeout=EDIT_TIMEOUT_MS)
        finder = browser.new_page() if search else None
        if finder is not None:
            cleanup.callback(finder.close)
        for number in range(edits):
            wait_quiet(fired, clock.times)
            # Letters alone, ending in "x": Pagefind's stemmer leaves it whole ("zebued" was
            # taken for "zebu", a prefix of the last edit's word).
            digits = f"{label}{number}"
            word = "zebu" + "".join(chr(ord("a") + int(digit)) for digit in digits) + "qx"
            value = f"bench-{label}-edit-{number + 1}-{word}"
            listing = f'.pagefind-ui__result-link[href$="/{GUIDE}"]'
            if finder is not None:  # the guide does not have the word yet
                finder.goto(f"{preview.url}search/?q={word}", timeout=EDIT_TIMEOUT_MS)
                finder.wait_for_selector(".pagefind-ui__message", timeout=EDIT_TIMEOUT_MS)
                # Pagefind answers a word it lacks with its longest prefix it has: other
                # guides may be listed, the edited one must not be.
                if finder.locator(listing).count():
                    raise SystemExit(f"edit {number + 1}: the guide is listed before the save")
                # As a reader's: the page it left has closed its stream (the preview stops
                # counting it within 0.2 s; a save before that waits up to 1 s for it).
                finder.wait_for_timeout(500)
                finder.evaluate(WATCH_LISTED, listing)
            data = json.loads(path.read_text("utf-8"))
            data["decision" if "decision" in data else "rolloutDecision"]["classification"] = value
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            page.evaluate(MARK)
            burst, event, logged = len(fired), len(clock.times), preview.rebuilds()
            saved_at, started = time.time() * 1000, time.perf_counter()
            path.write_text(text, "utf-8")
            page.wait_for_function(SHOWN, arg=value, timeout=EDIT_TIMEOUT_MS)
            shown = time.perf_counter() - started
            paint = page.wait_for_function(PAINTED, timeout=EDIT_TIMEOUT_MS).json_value()
            painted = (paint - saved_at) / 1000
            how = "in place" if page.evaluate("window.edited === true") else "reloaded"
            preview.wait_for_rebuilds(logged + 1, timeout=60)  # logged after the old site is pruned
            line = [x for x in preview.stderr if x.startswith("Rebuil")][logged]
            if not line.startswith("Rebuilt") or len(fired) <= burst or len(clock.times) <= event:
                raise SystemExit(f"edit {number + 1}: {line}; watcher {fired}; SSE {clock.times}")
            watched, published = fired[burst] - started, clock.times[event] - started
            found = []
            if finder is not None:
                listed = finder.wait_for_function(LISTED, timeout=EDIT_TIMEOUT_MS).json_value()
                found = [(listed - saved_at) / 1000]
                print(
                    f"    edit {number + 1}: the open search page lists it {found[0]:.3f} s after the save"
                )
            results.append((shown, watched, published, painted, *found))
            own = re.search(r"Shown in ([\d.]+) s", line)
            print(
                f"    edit {number + 1}: painted {painted:.3f} s; seen {shown:.3f} s = watcher "
                f"{watched:.3f} + rebuild {published - watched:.3f} + update ({how}) "
                f"{shown - published:.3f}; the preview's own count: shown in "
                f"{own[1] if own else '?'} s"
            )
        wait_quiet(fired, clock.times)
        if preview.rebuilds() != edits + 1:
            print(f"  note: {preview.rebuilds() - 1} rebuilds for {edits} edits")
    return results


def wait_quiet(*times: list[float]) -> None:
    """Wait until nothing was recorded in `times` for QUIET_SECONDS (at most 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (
            time.perf_counter() - max([0.0, *(t for seen in times for t in seen[-1:])])
            > QUIET_SECONDS
        ):
            return
        time.sleep(0.05)


def report(label: str, results: list[tuple[float, ...]]) -> str:
    """Print the figures of one size; return its one-line summary."""
    paints = [painted for _, _, _, painted, *_ in results]
    total = [shown for shown, *_ in results]
    watcher = statistics.median(watched for _, watched, *_ in results)
    rebuild = statistics.median(published - watched for _, watched, published, *_ in results)
    rest = statistics.median(shown - published for shown, _, published, *_ in results)
    painted = (
        f"median {statistics.median(paints):.3f} s, min {min(paints):.3f}, max {max(paints):.3f}"
    )
    print(f"  save -> new page painted (the browser's clock) over {len(paints)} edits: {painted}")
    median = statistics.median(total)
    line = f"median {median:.3f} s, min {min(total):.3f}, max {max(total):.3f}"
    print(f"  save -> new DOM seen by Playwright: {line}")
    print(
        f"  split (medians): watcher debounce {watcher:.3f} s, rebuild until the reload event "
        f"{rebuild:.3f} s, reload event -> new DOM seen {rest:.3f} s (fetch and swap, or reload)"
    )
    summary = f"{label:>6} guides: painted {painted}; seen {line}; rebuild {rebuild:.3f} s"
    if found := [result[4] for result in results if len(result) > 4]:
        listed = (
            f"median {statistics.median(found):.3f} s, min {min(found):.3f}, max {max(found):.3f}"
        )
        print(f"  save -> the open search page lists the guide: {listed}")
        summary += f"; search page lists it {listed}"
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guides", default="4,1000", help="site sizes, comma separated")
    parser.add_argument("--edits", type=int, default=7, help="edits per size (default 7)")
    parser.add_argument("--project", type=Path, help="time this project (in place) instead")
    parser.add_argument(
        "--search", action="store_true", help="also time an open search page finding the edit"
    )
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still clean up when killed
    describe = ["git", "-C", str(ROOT), "describe", "--always", "--dirty"]
    source = lambda: subprocess.run(describe, capture_output=True, text=True).stdout.strip()  # noqa: E731
    load = lambda: " ".join(f"{value:.2f}" for value in os.getloadavg())  # noqa: E731
    from playwright.sync_api import sync_playwright

    summary = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            if args.project:
                root = args.project.resolve()
                label = f"{len(list(root.glob('records/*.json')))}"
                print(f"== {root}: {label} records, code {source()}, load average {load()} ==")
                measured = measure(browser, root, label, args.edits, args.search)
                summary.append(report(label, measured))
            for size in [int(size) for size in args.guides.split(",")] if not args.project else []:
                print(f"== {size} guides: copy of {source()}, load average {load()} ==")
                with tempfile.TemporaryDirectory(prefix="serve-bench-") as folder:
                    root = make_project(Path(folder), size)
                    offline_figures(root)
                    measured = measure(browser, root, str(size), args.edits, args.search)
                    summary.append(report(str(size), measured))
                print(f"  load average after: {load()}")
        finally:
            browser.close()
    print("== summary: save a record -> open tab shows it ==")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
