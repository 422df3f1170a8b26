"""A site indexed in several shards (content/site.yaml `search_shard_pages`) is searched whole:
in Chromium, the search page finds every guide, whichever shard holds it, and shows its verdict.
The bundle holds one full Pagefind bundle and, for each other shard, its index alone. A build
indexes again only the shards whose pages changed (the others come from the build cache), and
writes exactly what a cold build writes; so does the preview's background indexer."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.errors import OutputError
from site_builder.model.models import BuildReport, Page
from site_builder.model.schema import SiteSettings
from site_builder.output import search, shard_cache, shards
from site_builder.output.write import StagedSite
from site_builder.pipeline import build
from site_builder.preview.builds import Previewer
from site_builder.runtime import workers
from tests.conftest import Project, copy_project, tree_digest
from tests.netlify_server import serve_netlify
from tests.new_guide import SLUG as PROBE
from tests.new_guide import write_probe_guide
from tests.preview_helpers import Preview, start_preview
from tests.test_site_browser import Tab, assert_result_with_verdict, html_of, launch_chromium


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The seed project and the probe guide built with one guide page a shard: five guides,
    each in a shard of its own."""
    project = copy_project(tmp_path_factory.mktemp("sharded") / "project")
    write_probe_guide(project.root)
    settings = project.root / "content" / "site.yaml"
    settings.write_text(settings.read_text("utf-8") + "search_shard_pages: 1\n", "utf-8")
    result = project.run("--quiet")
    assert result.returncode == 0, result.stderr
    return project


@pytest.fixture(scope="module")
def desktop(sharded: Project) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with serve_netlify(sharded.out) as url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        context = browser.new_context()
        context.base_url = url  # type: ignore[attr-defined]
        yield context
        browser.close()


def guides_of(site: Path) -> list[str]:
    """The URL paths of the built guide pages."""
    return sorted(f"/guides/{path.parent.name}/" for path in site.glob("guides/*/index.html"))


def test_each_shard_but_the_first_keeps_its_index_alone(sharded: Project) -> None:
    bundle = sharded.out / "pagefind"
    merged = json.loads((bundle / "shards.json").read_text("utf-8"))
    assert len(merged) == 4, merged  # five guides, one a shard
    assert (bundle / "pagefind-ui.js").is_file() and list(bundle.glob("wasm.*.pagefind"))
    for path in merged:
        shard = sharded.out / path.strip("/")
        assert (shard / "pagefind-entry.json").is_file() and list(shard.glob("*.pf_meta"))
        assert (shard / "index").is_dir() and (shard / "fragment").is_dir()
        assert not list(shard.glob("*.js")) and not list(shard.glob("wasm.*")), path


def test_the_search_page_finds_a_guide_of_every_shard(sharded: Project, desktop: Any) -> None:
    guides = guides_of(sharded.out)
    assert len(guides) == 5, guides
    tab = Tab(desktop)
    try:
        for guide in guides:
            page = html_of(sharded.out, guide)
            title = page.h1.get_text(" ", strip=True)
            verdict = page.select_one(".verdict-line strong").get_text(" ", strip=True)
            tab.open(f"{desktop.base_url}/search/?q={title}")
            assert_result_with_verdict(tab.page, (title, guide, verdict))
            assert not tab.problems, tab.problems
    finally:
        tab.page.close()


def test_the_search_page_asks_every_shard_at_once(sharded: Project, desktop: Any) -> None:
    """Each shard's first request is held until every shard has sent its own: merged one after
    the other (Pagefind UI's `mergeIndex` option), the next shard waited for the one held.
    Over a reader's network that took a search of ten shards 1.5 s longer (docs/site.md)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    listed = json.loads((sharded.out / "pagefind" / "shards.json").read_text("utf-8"))
    held: list[Any] = []
    released = threading.Event()

    def entry(url: str) -> bool:
        return "/pagefind/shards/" in url and "/pagefind-entry.json" in url

    def hold(route: Any) -> None:
        if released.is_set():
            route.continue_()
        else:
            held.append(route)

    context = desktop.browser.new_context()  # no search worker of another test's page
    tab = Tab(context)
    try:
        tab.page.route(entry, hold)
        tab.open(f"{desktop.base_url}/search/?q=GLM")
        for _ in range(100):  # 10 s at most
            if len(held) == len(listed):
                break
            tab.page.wait_for_timeout(100)
        asking = len(held)
        released.set()
        for route in held:
            route.continue_()
        # The route stays (letting every later request through) rather than being removed:
        # with `unroute` here, about one run in a hundred on a busy machine never showed a
        # result, the page saying "Searching for GLM..." with no error, as if one of the
        # web worker's requests had stayed paused; none in 300 runs with the route kept.
        shown = tab.page.locator(".pagefind-ui__result-link").first
        try:
            shown.wait_for(timeout=15_000)
        except PlaywrightTimeout:  # say what the page said
            pytest.fail(f"no result once the shards were let through: {tab.problems}")
        assert asking == len(listed), f"{asking} of {len(listed)} shards asked at once"
        assert not tab.problems, tab.problems
    finally:
        context.close()


SHOWN_RESULTS = """() => [...document.querySelectorAll('.pagefind-ui__result-inner')]
  .filter((result) => result.querySelector(':scope > p > .pagefind-ui__result-link'))
  .map((result) => [
    new URL(result.querySelector(':scope > p > .pagefind-ui__result-link').href).pathname,
    result.querySelector(':scope > .pagefind-ui__result-excerpt').innerText,
  ])"""
"""Each result Pagefind UI has drawn (a placeholder until its page's data is loaded): its
page and its excerpt (not its sub-results')."""


def test_every_shards_results_show_excerpts_of_the_same_length(
    sharded: Project, desktop: Any
) -> None:
    # Pagefind UI set its excerpt length (12 words with sub-results) on the first shard only:
    # the other shards' results showed 30 words.
    guides = guides_of(sharded.out)
    tab = Tab(desktop)
    try:
        tab.open(f"{desktop.base_url}/search/?q=GLM")
        tab.page.wait_for_function(
            f"() => ({SHOWN_RESULTS})().length === {len(guides)}", timeout=15_000
        )
        shown = dict(tab.page.evaluate(SHOWN_RESULTS))
        assert sorted(shown) == guides
        lengths = {guide: len(excerpt.split()) for guide, excerpt in shown.items()}
        assert all(6 <= words <= 12 for words in lengths.values()), lengths
        assert not tab.problems, tab.problems
    finally:
        tab.page.close()


def test_the_search_page_run_again_merges_no_shard_twice(sharded: Project, desktop: Any) -> None:
    # The preview swaps in a page it rebuilt and runs its scripts again, in the same document:
    # Pagefind's module stays loaded, and the search starts over on it (each shard merged
    # once more, into a fresh index), with the same results.
    guides = guides_of(sharded.out)
    tab = Tab(desktop)
    try:
        tab.open(f"{desktop.base_url}/search/?q=GLM")
        message = tab.page.locator(".pagefind-ui__message").first
        message.wait_for(timeout=15_000)
        tab.page.wait_for_function(
            f"() => ({SHOWN_RESULTS})().length === {len(guides)}", timeout=15_000
        )
        first = message.inner_text()
        tab.page.evaluate(
            """() => {
              document.querySelector('#search').replaceChildren();
              const script = document.querySelector('script[src*="/assets/search."]');
              const copy = document.createElement('script');
              copy.src = script.src;
              script.replaceWith(copy);
            }"""
        )
        tab.page.wait_for_function(
            f"() => ({SHOWN_RESULTS})().length === {len(guides)}", timeout=15_000
        )
        tab.page.wait_for_timeout(1000)  # every shard's results, were one merged twice
        assert tab.page.locator(".pagefind-ui__message").first.inner_text() == first
        assert len(tab.page.evaluate(SHOWN_RESULTS)) == len(guides)
        assert not tab.problems, tab.problems
    finally:
        tab.page.close()


def test_a_shard_that_never_loads_does_not_stop_the_search_from_starting_over(
    sharded: Project, desktop: Any
) -> None:
    # In the preview a new index makes the search page start over ("preview:search-index"):
    # it lets the last merges settle first, but not for ever (3 s).
    guides = guides_of(sharded.out)
    first_shard = json.loads((sharded.out / "pagefind" / "shards.json").read_text("utf-8"))[0]
    held: list[Any] = []

    def entry(url: str) -> bool:
        return f"{first_shard}pagefind-entry.json" in url

    def hold(route: Any) -> None:
        if held:
            route.continue_()  # the search starting over asks again: answered
        else:
            held.append(route)  # the first ask is never answered

    context = desktop.browser.new_context()
    tab = Tab(context)
    try:
        tab.page.route(entry, hold)
        tab.open(f"{desktop.base_url}/search/?q=GLM")
        for _ in range(100):  # 10 s at most
            if held:
                break
            tab.page.wait_for_timeout(100)
        assert len(held) == 1, "the shard's index was never asked for"
        tab.page.evaluate(
            """() => {
              window.firstBox = document.querySelector('#search input');
              window.dispatchEvent(new Event('preview:search-index'));
            }"""
        )
        started_over = "() => document.querySelector('#search input') !== window.firstBox"
        tab.page.wait_for_function(started_over, timeout=20_000)
        tab.page.wait_for_function(
            f"() => ({SHOWN_RESULTS})().length === {len(guides)}", timeout=20_000
        )
        # Only what waited on the index given up reports it gone (its worker is ended).
        abandoned = {"uncaught exception: Pagefind worker terminated"}
        assert set(tab.problems) <= abandoned, tab.problems
    finally:
        context.close()


def test_a_site_within_one_shard_has_one_bundle(site: Path) -> None:
    bundle = Path(site) / "pagefind"
    assert json.loads((bundle / "shards.json").read_text("utf-8")) == []
    assert not (bundle / "shards").exists()


@pytest.mark.parametrize(
    ("pages", "count"),
    [(0, 1), (100, 1), (101, 2), (1_000, 10), (4_000, 10), (10_000, 10), (10_001, 11)],
)
def test_a_site_is_split_into_shards_of_100_pages_and_at_most_ten(pages: int, count: int) -> None:
    """By default an edit re-indexes about 100 pages (0.75 s of Pagefind, not 8 s at 1,000);
    past 1,000 pages shards grow rather than multiply (each search fetches every shard), and
    past 10,000 they multiply again so none holds over 1,000 (Pagefind's memory)."""
    assert (
        shards.shard_count(pages, SiteSettings.model_fields["search_shard_pages"].default) == count
    )


def test_the_default_shard_size_reaches_the_indexer() -> None:
    default = SiteSettings.model_fields["search_shard_pages"].default
    assert default == shards.SHARD_PAGES == BuildReport((), (), 0).search_shard_pages
    html = b"<html><body><main data-pagefind-body>x</main></body></html>"
    pages = [Page(f"guides/g{n}/index.html", html) for n in range(600)]
    split = shards.sharded(pages, SiteSettings.model_fields["search_shard_pages"].default)
    assert len(split) == 6 and sum(map(len, split.values())) == 600
    assert all(60 <= len(listed) <= 140 for listed in split.values())


def shard_project(tmp_path: Path) -> Project:
    """A copy of the seed project with one guide page a search shard."""
    project = copy_project(tmp_path / "project")
    settings = project.root / "content" / "site.yaml"
    settings.write_text(settings.read_text("utf-8") + "search_shard_pages: 1\n", "utf-8")
    return project


def indexed_sites(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record, for each Pagefind launch, the guide pages of each shard it indexes."""
    launches: list[list[str]] = []
    command = search._command

    def spy(sites: list[Path], bundles: list[Path], language: str, at_once: int) -> list[str]:
        launches.append(sorted(p.parent.name for site in sites for p in site.rglob("*.html")))
        return command(sites, bundles, language, at_once)

    monkeypatch.setattr(search, "_command", spy)
    return launches


EDITED = "glm-5-2-sglang-weight-cache-daemon"


def built_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, between: Callable[[Project], None]
) -> tuple[Project, list[list[str]], dict[str, str]]:
    """Build a one-page-a-shard project cold, run `between`, add a line to one guide's prose
    and build again; return the project, the guides each Pagefind launch indexed and the
    cold build's files."""
    project = shard_project(tmp_path)
    launches = indexed_sites(monkeypatch)
    config = BuildConfig.for_root(project.root)
    build(config)
    assert len(launches) == 1 and len(launches[0]) == 4, launches  # cold: every shard
    cold = tree_digest(project.out)
    between(project)
    prose = project.root / "content" / f"{EDITED}.md"
    prose.write_text(prose.read_text("utf-8") + "\nOne more line of prose.\n", "utf-8")
    build(config)
    return project, launches, cold


def test_a_one_change_build_indexes_only_the_changed_guides_shard_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, launches, _ = built_twice(tmp_path, monkeypatch, lambda project: None)
    assert launches[1] == [EDITED], launches
    warm = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")
    build(BuildConfig.for_root(project.root))
    assert len(launches[2]) == 4
    assert tree_digest(project.out) == warm  # byte-identical to a cold build


def test_a_change_to_what_search_does_not_read_indexes_no_shard_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shard is known by what Pagefind reads of its pages (their titles and search bodies),
    # so a footer on every page, or a new guide in other pages' related links, indexes only
    # what changed there: nothing, or the new guide's shard.
    project = shard_project(tmp_path)
    launches = indexed_sites(monkeypatch)
    config = BuildConfig.for_root(project.root)
    build(config)
    base = project.root / "templates" / "base.html"
    base.write_text(base.read_text("utf-8").replace("</footer>", "A new footer. </footer>"))
    build(config)
    assert b"A new footer." in (project.out / "guides" / EDITED / "index.html").read_bytes()
    assert len(launches) == 1, launches  # the cold build's alone
    write_probe_guide(project.root)
    build(config)
    assert len(launches) == 2 and PROBE in launches[1] and len(launches[1]) < 5, launches
    warm = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")
    build(config)
    assert len(launches[2]) == 5 and tree_digest(project.out) == warm


GB = 1 << 30


@pytest.mark.parametrize(
    ("sizes", "cores", "memory", "at_once"),
    [
        ([250] * 4, 2, 20 * GB, 2),
        ([250] * 4, 8, 20 * GB, 4),
        ([250], 2, 20 * GB, 1),
        ([1_000] * 10, 2, 20 * GB, 2),  # two 1,000-page runs: about 2 GB
        ([1_000] * 10, 8, 5 * GB, 2),  # half of 5 GB holds two
        ([1_000] * 10, 2, 3 * GB // 2, 1),  # half of 1.5 GB holds none: one at a time
        ([250] * 4, 2, None, 2),  # memory unknown: 1,000 pages at once
        ([1_000] * 10, 2, None, 1),
        ([], 2, 20 * GB, 1),
    ],
)
def test_shards_are_indexed_a_core_each_within_half_the_available_memory(
    sizes: list[int], cores: int, memory: int | None, at_once: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "cores", lambda: cores)
    monkeypatch.setattr(shards, "available_memory", lambda: memory)
    assert shards.runs_at_once(sizes) == at_once


def test_the_available_memory_is_in_bytes_and_within_the_machines() -> None:
    available = workers.available_memory()
    if not Path("/proc/meminfo").exists():
        assert available is None
        return
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert available is not None and 64 << 20 < available <= physical  # bytes, not kB


def test_shards_indexed_at_once_make_the_site_shards_indexed_in_turn_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "cores", lambda: 2)
    project = shard_project(tmp_path)
    launches: list[int] = []
    command = search._command

    def spy(sites: list[Path], bundles: list[Path], language: str, at_once: int) -> list[str]:
        launches.append(at_once)
        return command(sites, bundles, language, at_once)

    monkeypatch.setattr(search, "_command", spy)
    build(BuildConfig.for_root(project.root, cache=False))
    at_once = tree_digest(project.out)
    monkeypatch.setattr(search, "runs_at_once", lambda sizes: 1)
    build(BuildConfig.for_root(project.root, cache=False))
    assert launches == [2, 1]  # four one-page shards, two at a time on two cores; then in turn
    assert tree_digest(project.out) == at_once


FAKE_PAGEFIND = """
import sys, time
from pathlib import Path
site = Path(sys.argv[sys.argv.index("--site") + 1])
if site == sorted(site.parent.glob("site-*"))[1]:  # the second shard fails at once
    print("Error: shard one exploded", file=sys.stderr)
    sys.exit(3)
time.sleep(2)  # the first is still running when the second fails
"""


def test_a_shard_that_fails_while_another_is_indexed_fails_the_build_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = shard_project(tmp_path / "project")
    assert project.run("--quiet").returncode == 0
    before = tree_digest(project.out)
    fake = tmp_path / "pagefind"  # Pagefind's own variable names the binary to run
    fake.write_text(f"#!{sys.executable}\n{FAKE_PAGEFIND}", "utf-8")
    fake.chmod(0o755)
    shutil.rmtree(project.root / ".cache")  # every shard is indexed again
    started = time.monotonic()
    done = project.run("--quiet", env={"PAGEFIND_BINARY_PATH": str(fake)})
    assert done.returncode == 1, done.stderr
    assert "search index failed: Error: shard one exploded" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 30
    assert tree_digest(project.out) == before


SLOW_LAST_SHARD = """
import os, subprocess, sys, time
from pathlib import Path
site = Path(sys.argv[sys.argv.index("--site") + 1])
indexed = subprocess.run([os.environ["REAL_PAGEFIND"], *sys.argv[1:]]).returncode
if site == max(site.parent.glob("site-*")):  # a shard's folder goes once it is indexed
    time.sleep(2)  # the last shard ends well after the others
sys.exit(indexed)
"""


def test_each_shards_bundle_is_written_as_soon_as_it_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build writes each shard's bundle into the site it stages when that shard's run
    ends, not once every run has: at 10,000 guides, ten shards' bundles are 12,000 files."""
    project = shard_project(tmp_path / "project")
    build(BuildConfig.for_root(project.root, cache=False))
    expected = tree_digest(project.out)
    fake = tmp_path / "pagefind"
    fake.write_text(f"#!{sys.executable}\n{SLOW_LAST_SHARD}", "utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("REAL_PAGEFIND", search._indexer())
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(fake))
    staged: list[tuple[float, list[str]]] = []
    add = StagedSite.add

    def timed(site: StagedSite, pages: list[Page]) -> None:
        staged.append((time.monotonic(), [page.path for page in pages]))
        add(site, pages)

    monkeypatch.setattr(StagedSite, "add", timed)
    assert build(BuildConfig.for_root(project.root, cache=False)).written
    ended = time.monotonic()
    bundles = [(at, paths) for at, paths in staged if paths[0].startswith("pagefind/")]
    shard_count = len(json.loads((project.out / "pagefind" / "shards.json").read_bytes())) + 1
    assert shard_count > 1 and len(bundles) == shard_count + 1  # and the list of shards
    assert ended - bundles[0][0] > 1.5  # the first shard's, while the last one was indexed
    assert bundles[-1][1] == ["pagefind/shards.json"]
    assert tree_digest(project.out) == expected


def test_the_site_links_each_bundle_file_the_cache_keeps_instead_of_writing_it_again(
    tmp_path: Path,
) -> None:
    project = shard_project(tmp_path)
    for _ in range(2):  # indexed, then read back from the cache into a new output folder
        shutil.rmtree(project.out, ignore_errors=True)
        assert build(BuildConfig.for_root(project.root)).written
        kept = {
            path.stat().st_ino: path.read_bytes()
            for path in project.root.glob(f".cache/v*/{shard_cache.FILE_ENTRY}/*")
        }
        bundle = [path for path in (project.out / "pagefind").rglob("*") if path.is_file()]
        assert len(bundle) > 10
        for path in bundle:
            if path.name == search.SHARD_LIST:  # made by the builder, not the indexer
                continue
            assert kept.get(path.stat().st_ino) == path.read_bytes(), path
    cold = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")
    assert build(BuildConfig.for_root(project.root, cache=False)).written
    assert tree_digest(project.out) == cold


def damage_the_bundle_files(project: Project) -> None:
    """Change the last byte of every cached bundle file (each then fails its checksum)."""
    for path in (project.root / ".cache").glob(f"v*/{shard_cache.FILE_ENTRY}/*"):
        path.write_bytes(path.read_bytes()[:-1] + b"!")


def test_damaged_shard_entries_are_indexed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, launches, _ = built_twice(tmp_path, monkeypatch, damage_the_bundle_files)
    assert len(launches) == 2 and len(launches[1]) == 4, launches  # every shard again
    cold = tree_digest(project.out)
    shutil.rmtree(project.root / ".cache")
    build(BuildConfig.for_root(project.root))
    assert tree_digest(project.out) == cold


def served_page_count(preview: Preview) -> int:
    """The guide pages the preview's search index holds, over every shard it lists."""
    listed = json.loads(preview.get("/pagefind/shards.json")[2])
    total = 0
    for bundle in ["/pagefind/", *listed]:
        status, _, body = preview.get(f"{bundle}pagefind-entry.json")
        assert status == 200, bundle
        total += json.loads(body)["languages"]["en"]["page_count"]
    return total


def test_the_preview_serves_every_shard(tmp_path: Path) -> None:
    project = shard_project(tmp_path)
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1, timeout=60)
        assert json.loads(preview.get("/pagefind/shards.json")[2]), "one shard only"
        assert served_page_count(preview) == 4
    finally:
        preview.stop()


def test_the_preview_indexes_only_the_changed_guides_shard_after_an_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its background indexer reads the other shards' bundles from the build cache (the
    # rebuilds do not prune them) the first time, then holds them in memory; and it serves
    # what a cold build with drafts writes.
    project = shard_project(tmp_path)
    launches = indexed_sites(monkeypatch)
    restores: list[bool] = []
    read = search.cached_bundle

    def cached_bundle(*args: Any) -> dict[str, bytes] | None:
        restores.append(read(*args) is not None)
        return read(*args)

    monkeypatch.setattr(search, "cached_bundle", cached_bundle)
    lines: list[str] = []
    previewer = Previewer(BuildConfig.for_root(project.root), lines.append)
    try:
        assert previewer.rebuild(), lines
        assert len(launches) == 1 and len(launches[0]) == 4, launches
        prose = project.root / "content" / f"{EDITED}.md"
        read_back = []
        for line in ("One more line of prose.", "And another.", "And a third."):
            prose.write_text(prose.read_text("utf-8") + f"\n{line}\n", "utf-8")
            restores.clear()
            assert previewer.rebuild(), lines
            for indexer in previewer._indexers:
                indexer.join(timeout=120)
            read_back.append(list(restores))
        assert launches[1:] == [[EDITED], [EDITED], [EDITED]], launches
        # The unchanged shards come from the cache once, then from memory: the cache is
        # asked only for the changed shard's bundle (which it does not have).
        assert True in read_back[0] and read_back[1:] == [[False], [False]], read_back
        site = previewer.state.site
        assert site is not None
        served = {
            path: hashlib.sha256(data).hexdigest()
            for path, data in site.files.items()
            if path.startswith("pagefind/")
        }
    finally:
        previewer.close()
    result = project.run("--drafts", "--no-cache", "--out", str(tmp_path / "cold"))
    assert result.returncode == 0, result.stderr
    cold = tree_digest(tmp_path / "cold")
    assert served == {path: sha for path, sha in cold.items() if path.startswith("pagefind/")}


def test_a_cached_bundle_is_read_back_whole_or_not_at_all(tmp_path: Path) -> None:
    project = shard_project(tmp_path)
    build(BuildConfig.for_root(project.root))
    cache = BuildCache(project.root / ".cache")
    keys = sorted(path.name for path in cache.folder.glob(f"{shard_cache.SHARD_ENTRY}/*"))
    assert len(keys) > 1  # one entry a shard with pages
    cached = shard_cache.cached_bundle(cache, keys[0])
    assert cached is not None
    files, entries = cached
    assert "pagefind-entry.json" in files and list(files) == sorted(files)
    assert {name: path.read_bytes() for name, path in entries.items()} == files
    entry = cache.read(shard_cache.SHARD_ENTRY, keys[1])
    assert entry is not None
    names = json.loads(entry)
    cache.write(shard_cache.SHARD_ENTRY, keys[1], json.dumps([["../x", names[0][1]]]).encode())
    assert shard_cache.cached_bundle(cache, keys[1]) is None  # a name leaving the bundle
    damage_the_bundle_files(project)
    assert shard_cache.cached_bundle(cache, keys[0]) is None  # a file failing its checksum


def test_a_stopped_index_keeps_what_it_read_and_leaves_its_folder_until_idle(
    tmp_path: Path,
) -> None:
    # The preview stops its indexer on every save; the bundles it already read from the
    # cache stay held for the next one, and its folder (thousands of files at 10,000
    # guides) is removed only once the rebuild that stopped it has shown its site.
    project = shard_project(tmp_path)
    report = build(BuildConfig.for_root(project.root))
    cache = BuildCache(project.root / ".cache")
    pages = [
        replace(page, content=page.read() + b"<!-- changed -->", stored=None, search_sha256="")
        if f"/{EDITED}/" in f"/{page.path}"  # known by its bytes, as a page with no cut is
        else page
        for page in report.pages
    ]
    held, stopped, idle = shard_cache.HeldBundles(), threading.Event(), threading.Event()
    out = tmp_path / "preview" / "site"
    index = search.SearchIndex(pages, report.language, out, stopped, 1, cache, held, idle)
    shards = len(json.loads((project.out / "pagefind" / "shards.json").read_bytes())) + 1
    assert len(held.bundles) == shards - 1  # every shard but the changed guide's
    stopped.set()
    index.stop()
    with pytest.raises(OutputError):
        index.pages()
    closing = threading.Thread(target=index.close)
    closing.start()
    closing.join(timeout=0.5)
    assert closing.is_alive() and index._folder.is_dir()
    idle.set()
    closing.join(timeout=30)
    assert not closing.is_alive() and not index._folder.exists()
