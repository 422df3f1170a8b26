"""Parallel and cached builds write exactly what a cold serial build writes.

A fixture project grown to 20 guides is edited by a seeded random sequence of changes
(records, prose, links between guides, front matter, additions, deletions, renames,
templates, settings, rules);
after each one a build that reuses the cache and renders over two processes must give the
same pages and the same findings as a serial build with no cache. A build killed while it
writes the cache, or a damaged entry, must not change what the next build writes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.model.models import BuildReport
from site_builder.output import unchanged
from site_builder.pipeline import build
from site_builder.render import pages as render
from site_builder.render import site_pages
from site_builder.runtime import files
from site_builder.verify import records as verify
from tests.conftest import Project, tree_digest, without_waiting
from tests.new_guide import probe_record

WORDS = [
    "scheduler",
    "warmup",
    "canary",
    "rollout",
    "kernel",
    "fusion",
    "quantised",
    "tokenizer",
    "prefix",
    "cache",
    "eviction",
    "topology",
    "bandwidth",
    "interconnect",
    "watchdog",
    "restart",
    "budget",
    "headroom",
    "fragmentation",
    "overlap",
    "pipeline",
    "stage",
    "speculative",
    "draft",
    "verifier",
    "rejection",
    "sampling",
    "window",
    "cluster",
    "placement",
]


EDITS = (
    "record",
    "prose",
    "title",
    "tags",
    "add",
    "delete",
    "rename",
    "template",
    "settings",
    "rules",
    "record-file-rename",
    "verdict",
    "checked",
    "link",
)


def grow(project: Project, count: int, seed: int = 7) -> None:
    """Add `count` probe guides of distinct words to the project."""
    rng = random.Random(seed)
    for index in range(count):
        add_guide(project, f"probe-{index:02d}", rng)


def add_guide(project: Project, name: str, rng: random.Random) -> None:
    """Write one probe record and its prose, with words and numbers drawn from `rng`."""
    words = rng.sample(WORDS, 6)
    operation_id = f"20261101{rng.randrange(10**6):06d}-{name}"
    record = probe_record(operation_id, status=f"pinned-{'-'.join(words[:3])}")
    record["latencyProbe"]["byPromptLength"]["short"]["p50Ms"] = rng.randrange(100, 400)
    project.save_record(f"{name}.json", record)
    front = {
        "title": f"GLM-5.2 {words[0]} {words[1]} and {words[2]}: {name}",
        "description": f"When {words[3]} and {words[4]} decide {words[5]} for GLM-5.2 on SGLang, "
        f"step by step ({name}).",
        "slug": f"glm-5-2-{name}",
        "record": operation_id,
        "reader_job": f"Decide on {words[0]} {words[3]} for {name}.",
        "tags": ["sglang", words[0]],
        "published": "2026-11-02",
    }
    body = f"## {words[1].title()}\n\n{' '.join(rng.choices(WORDS, k=40))}.\n"
    project.write(f"content/{name}.md", f"---\n{yaml.safe_dump(front)}---\n{body}")


def outcome(report: BuildReport) -> tuple[dict[str, bytes], list[Any]]:
    """Return what a user sees of a build: every page's bytes, and the findings."""
    return {page.path: page.content for page in report.pages}, list(report.findings)


def build_both(root: Path) -> tuple[BuildReport, BuildReport]:
    """Build `root` with cache and two processes, then cold and serial."""
    cached = build(BuildConfig.for_root(root, jobs=2), write=False)
    cold = build(BuildConfig.for_root(root, cache=False), write=False)
    return cached, cold


def probes(project: Project) -> list[Path]:
    """Return the probe guides' prose files."""
    return sorted((project.root / "content").glob("probe-*.md"))


def edit(project: Project, rng: random.Random, step: int) -> str:
    """Make one random change of the kinds an editor makes; return what it was."""
    prose = probes(project)
    chosen = rng.choice(prose)
    record = project.root / "records" / f"{chosen.stem}.json"
    kind = rng.choice(EDITS)
    if kind in {"record", "verdict", "checked"}:
        data = json.loads(record.read_text("utf-8"))
        if kind == "record":
            data["latencyProbe"]["chunkSizes"][0][1] = round(rng.random(), 2)
        elif kind == "verdict":
            data["decision"]["classification"] = f"hold-{rng.choice(WORDS)}-until-{step}"
        else:  # a newer check moves the guide in the newer/older order
            data["checkedAt"] = f"2026-11-{rng.randrange(1, 29):02d}T09:00:00Z"
        record.write_text(json.dumps(data, indent=2), "utf-8")
    elif kind in {"prose", "title", "tags", "rename"}:
        text = chosen.read_text("utf-8")
        _, front_text, body = text.split("---\n", 2)
        front = yaml.safe_load(front_text)
        if kind == "prose":
            body += f"\nA new paragraph {step} on {rng.choice(WORDS)}.\n"
        elif kind == "title":
            front["title"] = f"{front['title']} revised {step}"
        elif kind == "tags":
            front["tags"] = [*front["tags"], rng.choice(WORDS)]
        else:
            front["slug"] = f"{front['slug']}-r{step}"
        chosen.write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", "utf-8")
    elif kind == "add":
        add_guide(project, f"probe-new-{step}", rng)
    elif kind == "link":  # to a guide that may be renamed or deleted, or added by the next step
        other = rng.choice([*(path.stem for path in prose), f"probe-new-{step + 1}"])
        with chosen.open("a", encoding="utf-8") as stream:
            stream.write(f"\nSee [{other}](/guides/glm-5-2-{other}/).\n")
    elif kind == "delete" and len(prose) > 2:
        chosen.unlink()
        record.unlink()
    elif kind == "template":
        footer = project.root / "templates" / "base.html"
        footer.write_text(footer.read_text("utf-8").replace("</footer>", f"{step} </footer>"))
    elif kind == "settings":
        settings = project.root / "content" / "site.yaml"
        data = yaml.safe_load(settings.read_text("utf-8"))
        data["title"] = f"{data['title']} {step}"
        settings.write_text(yaml.safe_dump(data), "utf-8")
    elif kind == "rules":
        rules = project.root / "content" / "rules.yaml"
        data = yaml.safe_load(rules.read_text("utf-8"))
        data.setdefault("undecidable", {})["oneSourceReceipt"] = f"checked by hand ({step})"
        rules.write_text(yaml.safe_dump(data), "utf-8")
    elif kind == "record-file-rename":
        record.rename(record.with_name(f"{record.stem}-moved.json"))
        chosen.rename(chosen.with_name(f"{chosen.stem}-moved.md"))
    return kind


@pytest.fixture
def grown(project: Project) -> Project:
    """The seed project with 16 probe guides (20 guides: enough to render over 2 processes)."""
    grow(project, 16)
    return project


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_build_what_a_cold_serial_build_does(grown: Project, seed: int) -> None:
    rng = random.Random(seed)
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)
    for step in range(8):
        kind = edit(grown, rng, step)
        cached, cold = build_both(grown.root)
        assert outcome(cached) == outcome(cold), f"after edit {step} ({kind})"


def test_an_unchanged_build_verifies_and_renders_nothing_again(
    grown: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(grown.root)
    first = build(config, write=False)
    verified, rendered = (
        count_calls(monkeypatch, verify, "verify"),
        count_calls(monkeypatch, render, "render_guide"),
    )
    assert outcome(build(config, write=False)) == outcome(first)
    assert (verified, rendered) == ([], [])
    prose = probes(grown)[0]
    prose.write_text(prose.read_text("utf-8") + "\nOne more line.\n", "utf-8")
    build(config, write=False)
    assert (len(verified), len(rendered)) == (0, 1)  # the prose changed, not the record
    record = grown.root / "records" / f"{prose.stem}.json"
    data = json.loads(record.read_text("utf-8"))
    data["latencyProbe"]["chunkSizes"][1][1] = 0.7
    record.write_text(json.dumps(data), "utf-8")
    build(config, write=False)
    assert (len(verified), len(rendered)) == (1, 2)
    _, front_text, body = prose.read_text("utf-8").split("---\n", 2)
    front = yaml.safe_load(front_text)
    front["title"] = f"Renamed: {front['title']}"
    prose.write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", "utf-8")
    report = build(config, write=False)
    # Rendered again: the renamed guide's page and each guide page showing its title.
    title = front["title"].encode("utf-8")
    guide_pages = [p for p in report.pages if p.path.count("/") == 2 and p.path[:7] == "guides/"]
    showing = [p for p in guide_pages if title in p.content]
    assert len(rendered) - 2 == len(showing) < len(guide_pages)


def test_a_tag_page_is_rendered_again_only_when_a_guide_it_lists_changed(
    grown: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(grown.root)
    build(config, write=False)
    rendered: list[str] = []
    original = site_pages.render_page

    def counted(env: Any, path: str, template: str, *args: Any, **kwargs: Any) -> Any:
        if template == "tag.html":
            rendered.append(path)
        return original(env, path, template, *args, **kwargs)

    monkeypatch.setattr(site_pages, "render_page", counted)
    build(config, write=False)
    assert rendered == []
    prose = probes(grown)[0]
    prose.write_text(prose.read_text("utf-8") + "\nThe word quokkafication is new.\n", "utf-8")
    report = build(config, write=False)
    [page] = [p for p in report.pages if p.path.startswith("guides/") and b"quokkaf" in p.content]
    url = ("/" + page.path.removesuffix("index.html")).encode()
    tag_pages = [p for p in report.pages if p.path.startswith("tags/") and p.path.count("/") == 2]
    listing = sorted(p.path for p in tag_pages if b'href="' + url + b'"' in p.content)
    assert sorted(rendered) == listing
    assert 0 < len(listing) < len(tag_pages)
    assert outcome(report) == outcome(
        build(BuildConfig.for_root(grown.root, cache=False), write=False)
    )


def count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[None]:
    """Count calls of `module.name` from now on (in this process)."""
    calls: list[None] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(None)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_damaged_entries_are_rebuilt_not_served(grown: Project) -> None:
    config = BuildConfig.for_root(grown.root)
    cold = outcome(build(BuildConfig.for_root(grown.root, cache=False), write=False))
    build(config, write=False)
    entries = sorted((grown.root / ".cache").rglob("*"))
    files = [path for path in entries if path.is_file()]
    assert len(files) >= 40  # a verification and a page per guide
    for index, path in enumerate(files):
        data = path.read_bytes()
        if index % 3 == 0:
            path.write_bytes(data[: len(data) // 2])  # cut short
        elif index % 3 == 1:
            path.write_bytes(data.replace(b"GLM", b"GLN"))  # changed after it was written
    (files[0].parent / ".tmp-left-by-a-kill").write_bytes(b"half an entr")
    assert outcome(build(config, write=False)) == cold


def test_a_build_killed_while_writing_the_cache_is_followed_by_a_correct_one(
    grown: Project, tmp_path: Path
) -> None:
    cache = grown.root / ".cache"
    process = subprocess.Popen(
        [sys.executable, "build.py", "--out", str(tmp_path / "killed"), "--jobs", "1"],
        cwd=grown.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(cache.rglob("*"))) < 12:
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert list(cache.rglob("*")), "the build was killed before it wrote any cache entry"
    after = grown.run("--out", str(tmp_path / "after"))
    cold = grown.run("--out", str(tmp_path / "cold"), "--no-cache")
    assert after.returncode == cold.returncode, after.stderr
    assert tree_digest(tmp_path / "after") == tree_digest(tmp_path / "cold")


def test_an_entry_replaced_by_a_symlink_a_fifo_or_a_folder_is_a_miss_not_a_wait(
    tmp_path: Path,
) -> None:
    cache = BuildCache(tmp_path / "cache")
    payload = b"<html>one</html>"
    outside = tmp_path / "outside"
    outside.write_bytes(cache_entry_bytes(cache, payload))  # what the entry held, elsewhere
    plants: dict[str, Callable[[Path], object]] = {
        "linked": lambda path: path.symlink_to(outside),
        "endless": lambda path: path.symlink_to("/dev/zero"),
        "fifo": os.mkfifo,
        "folder": os.mkdir,
    }
    for key, plant in plants.items():
        for read in (BuildCache.read, BuildCache.read_head):
            cache.write("page", key, payload)
            entry = cache.file("page", key)
            if not entry.is_dir():  # the folder planted for the first read is still there
                entry.unlink()
                plant(entry)
            assert without_waiting(partial(read, cache, "page", key)) is None, key
            left = os.path.lexists(entry)  # removed as a damaged entry is (not a folder)
            assert not left or (key == "folder" and entry.is_dir()), f"the {key} entry is left"
            if key != "folder":
                cache.write("page", key, payload)
                assert cache.read("page", key) == payload  # and written again
    assert outside.read_bytes() == cache_entry_bytes(cache, payload)  # never touched


def cache_entry_bytes(cache: BuildCache, payload: bytes) -> bytes:
    """The bytes of an entry holding `payload`, as the cache writes it."""
    cache.write("probe", "entry", payload)
    return cache.file("probe", "entry").read_bytes()


def test_cache_entries_are_checked_on_read(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    cache.write("page", "abc", b"<html>one</html>")
    assert BuildCache(tmp_path).read("page", "abc") == b"<html>one</html>"
    entry = next(path for path in tmp_path.rglob("abc"))
    entry.write_bytes(entry.read_bytes()[:-3])
    assert BuildCache(tmp_path).read("page", "abc") is None
    assert not entry.exists()  # a damaged entry is removed, so it is written again


def test_a_build_with_nothing_changed_does_nothing_and_says_so(project: Project) -> None:
    first = project.run()
    assert first.returncode == 0, first.stderr
    written = tree_digest(project.out)
    again = project.run("--timings")
    assert again.returncode == 0, again.stderr
    assert "Up to date: nothing changed since" in again.stdout
    assert "Stage times: unchanged" in again.stderr and "render" not in again.stderr
    assert tree_digest(project.out) == written
    assert again.stderr.count("warning") == first.stderr.count("warning")  # same report


@pytest.mark.parametrize("cached", [False, True])
def test_inputs_saved_while_a_build_runs_are_seen_even_with_the_same_size_and_time(
    project: Project, cached: bool
) -> None:
    config = BuildConfig.for_root(project.root)
    cache = BuildCache(project.root / ".cache") if cached else None
    for path in (project.root / "records").glob("*.json"):  # settled long ago
        os.utime(path, ns=(time.time_ns() - 10**10, time.time_ns() - 10**10))
    record = next((project.root / "records").glob("*.json"))
    os.utime(record)  # saved just before the build began
    since = time.time_ns()
    times, key = unchanged.input_times(config), unchanged.inputs_key(config, cache)
    assert unchanged.inputs_unchanged(config, times, key, since, cache)
    status = record.stat()
    data = record.read_bytes()
    record.write_bytes(data.replace(b"GLM", b"GLN", 1))  # same size
    os.utime(record, ns=(status.st_atime_ns, status.st_mtime_ns))  # same time
    assert unchanged.input_times(config) == times
    # A recent file is judged by its bytes.
    assert not unchanged.inputs_unchanged(config, times, key, since, cache)
    record.write_bytes(data + b" ")
    assert not unchanged.inputs_unchanged(config, times, key, since - 10**10, cache)  # by size


def test_the_up_to_date_check_reads_only_the_inputs_whose_status_changed(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unchanged, "RECENT_NS", 0)  # every file's last change is settled
    config = BuildConfig.for_root(project.root)
    cache = BuildCache(project.root / ".cache")
    key = unchanged.inputs_key(config, cache)
    read: list[str] = []
    original, regular = Path.read_bytes, files.regular_bytes

    def counted(path: str | Path) -> bytes:
        if ".cache" not in Path(path).parts:  # the cache's own entry is read, as any other
            read.append(Path(path).name)
        return regular(path)

    monkeypatch.setattr(files, "regular_bytes", counted)
    assert unchanged.inputs_key(config, cache) == key
    assert read == []
    record = next((project.root / "records").glob("*.json"))
    status = record.stat()
    record.write_bytes(original(record).replace(b"GLM", b"GLN", 1))  # same size
    os.utime(record, ns=(status.st_atime_ns, status.st_mtime_ns))  # same modification time
    changed = unchanged.inputs_key(config, cache)
    assert changed != key and record.name in read  # its change time gave it away
    assert changed == unchanged.inputs_key(config)  # what reading every file gives


def test_an_up_to_date_build_reports_the_records_verifications_as_the_build_did(
    project: Project,
) -> None:
    first = project.run("--format", "json", "--timings")
    assert first.returncode == 0, first.stderr
    again = project.run("--format", "json", "--timings")
    assert "Stage times: unchanged" in again.stderr and "render" not in again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)
    assert len(json.loads(again.stdout)["records"]) == 4
    # Without the verifications it would list, the build is not taken as up to date.
    for entry in (project.root / ".cache").glob("v*/verify/*"):
        entry.unlink()
    rebuilt = project.run("--format", "json", "--timings")
    assert "verify" in rebuilt.stderr
    assert json.loads(rebuilt.stdout) == json.loads(first.stdout)


def _findings(stderr: str) -> list[str]:
    """The report's lines, without the stage times."""
    return [line for line in stderr.splitlines() if not line.startswith("Stage times")]


def test_an_audit_with_nothing_changed_reads_the_checks_back(project: Project) -> None:
    first = project.run("--audit")
    assert first.returncode == 0, first.stderr
    again = project.run("--audit", "--timings")
    assert again.returncode == 0, again.stderr
    assert "Audited (nothing changed since the last check)" in again.stdout
    assert "Stage times: unchanged" in again.stderr and "render" not in again.stderr
    assert _findings(again.stderr) == _findings(first.stderr)
    assert not project.out.exists()  # an audit writes no site
    # A build with the same inputs gives the same findings, which the next audit reads back.
    assert project.run().returncode == 0
    as_json = project.run("--audit", "--format", "json", "--timings")
    assert "render" not in as_json.stderr
    cold = project.run("--audit", "--format", "json", "--no-cache")
    assert json.loads(as_json.stdout) == json.loads(cold.stdout)
    assert len(json.loads(as_json.stdout)["records"]) == 4


def test_an_audit_checks_again_after_any_change_and_keeps_its_errors(project: Project) -> None:
    assert project.run("--audit").returncode == 0
    name = "000_f07234cca5c1d19d.json"
    data = project.record(name)
    data["sourceReceipts"][0]["sha256"] = "abc123"  # a contradiction: a check error
    project.save_record(name, data)
    failed = project.run("--audit", "--timings")
    assert failed.returncode == 1 and "render" in failed.stderr
    assert "sourceReceipts.0.sha256: expected 64 lower-case hex digits" in failed.stderr
    again = project.run("--audit", "--timings")
    assert again.returncode == 1 and "render" not in again.stderr
    assert _findings(again.stderr) == _findings(failed.stderr)
    cold = project.run("--audit", "--no-cache")
    assert _findings(cold.stderr) == _findings(failed.stderr)
    # A verification pruned since is checked again, not reported from memory.
    for entry in (project.root / ".cache").glob("v*/verify/*"):
        entry.unlink()
    assert "verify" in project.run("--audit", "--timings").stderr


@pytest.mark.parametrize(
    "change",
    ["record", "prose", "template", "static", "output-edited", "output-removed", "date"],
)
def test_any_change_to_inputs_or_output_builds_again(project: Project, change: str) -> None:
    assert project.run().returncode == 0
    env: dict[str, str] = {}
    if change == "record":
        data = project.record("000_f07234cca5c1d19d.json")
        project.save_record("000_f07234cca5c1d19d.json", {**data, "status": data["status"] + "-x"})
    elif change == "prose":
        prose = next((project.root / "content").glob("glm-*.md"))
        prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    elif change == "template":
        base = project.root / "templates" / "base.html"
        base.write_text(base.read_text("utf-8").replace("</footer>", " </footer>"), "utf-8")
    elif change == "static":
        project.write("static/extra.txt", "a file served as it is\n")
    elif change == "output-edited":
        page = next(project.out.glob("guides/*/index.html"))
        page.write_text(page.read_text("utf-8") + "<!-- edited by hand -->", "utf-8")
    elif change == "output-removed":
        (project.out / "sitemap.xml").unlink()
    elif change == "date":
        env["SOURCE_DATE_EPOCH"] = str(int(time.time()) + 400 * 86400)
    result = project.run(env=env)
    assert result.returncode == 0, result.stderr
    assert "Up to date" not in result.stdout
    cold = project.root / "_cold"
    assert project.run("--no-cache", "--out", str(cold), env=env).returncode == 0
    assert tree_digest(project.out) == tree_digest(cold)


@pytest.mark.parametrize(("name", "end"), [("guide.html", "</article>"), ("tag.html", "</h1>")])
def test_a_template_that_lists_every_guide_keeps_every_page_fresh(
    grown: Project, name: str, end: str
) -> None:
    template = grown.root / "templates" / name
    listing = '<ul class="all">{% for g in site.guides %}<li>{{ g.title }}</li>{% endfor %}</ul>'
    template.write_text(template.read_text("utf-8").replace(end, end + listing))
    assert outcome(build_both(grown.root)[0]) == outcome(build_both(grown.root)[1])
    prose = probes(grown)[-1]
    _, front_text, body = prose.read_text("utf-8").split("---\n", 2)
    front = yaml.safe_load(front_text)
    front["title"] = f"Shown everywhere: {front['title']}"
    prose.write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", "utf-8")
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)
    shown = [p for p in cold.pages if p.path.count("/") == 2 and p.path[:5] in "guides/tags/"]
    listing = [p for p in shown if b'<ul class="all">' in p.content]
    assert len(listing) > 2 and all(front["title"].encode() in page.content for page in listing)


def test_random_edits_write_the_site_a_cold_build_writes_staged_in_the_spare_site(
    grown: Project, tmp_path: Path
) -> None:
    """A written build stages into the site the one before it replaced (kept in the cache)."""
    rng, kind = random.Random(5), "none"
    for step in range(7):
        if step:
            kind = edit(grown, rng, step)
        build(BuildConfig.for_root(grown.root, jobs=2))
        cold = tmp_path / f"cold-{step}"
        build(BuildConfig.for_root(grown.root, out_dir=cold, cache=False))
        assert tree_digest(grown.out) == tree_digest(cold), f"after edit {step} ({kind})"
        spares = list((grown.root / ".cache").glob("v*/spare-site"))
        assert len(spares) == (step > 0), "the replaced site is the next build's staging"
        assert not list(cold.parent.glob(f".{cold.name}.*")), "a build with no cache keeps none"
