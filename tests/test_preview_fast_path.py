"""What keeps a preview rebuild short: tabs first, nothing waited for, nothing redone.

In process on the seed project, over the real preview server: a tab is a live-reload stream
that names the version its page shows (what the reload script opens). The checks, Pagefind
and Python's cycle collector take the CPU the reloading tabs need, so they wait until every
tab told to reload came back with the new version, or TABS_SECONDS. A stopped indexer cleans
up on its own thread. The vocabulary and every guide whose inputs did not change are the
same objects from one rebuild to the next, so what is remembered about them is reused.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from site_builder import pipeline
from site_builder.cache import store as cache
from site_builder.config import BuildConfig
from site_builder.inputs import load
from site_builder.inputs.assemble import assemble
from site_builder.inputs.load import load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.models import Guide
from site_builder.output.search import SearchIndex
from site_builder.preview import builds as preview
from site_builder.preview.builds import LISTED_BURST, Previewer
from site_builder.preview.serve import PreviewHandler
from site_builder.preview.server import PreviewServer
from site_builder.render import scan, site_pages, stored_pages
from tests.conftest import Project
from tests.preview_helpers import EventStream


@dataclass
class Served:
    """A previewer that has built once, and the preview server showing its state."""

    previewer: Previewer
    port: int


@pytest.fixture
def served(project: Project) -> Iterator[Served]:
    lines: list[str] = []
    previewer = Previewer(BuildConfig.for_root(project.root), lines.append)
    try:
        assert previewer.rebuild(), lines
        server = PreviewServer("127.0.0.1", 0, previewer.state, PreviewHandler)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        try:
            yield Served(previewer, server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()
    finally:
        previewer.close()


def edit_prose(project: Project, word: str) -> None:
    """Append a sentence to every seed guide's prose."""
    for prose in sorted((project.root / "content").glob("glm-5-2-*.md")):
        prose.write_text(prose.read_text("utf-8") + f"\nThe word {word} is new.\n", "utf-8")


def watch_checks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, bool]]:
    """Record when the checks start, and whether the cycle collector is on then."""
    started: list[tuple[float, bool]] = []
    original = pipeline.run_checks

    def recorded(*args: Any, **kwargs: Any) -> Any:
        started.append((time.monotonic(), gc.isenabled()))
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run_checks", recorded)
    return started


def test_the_checks_wait_until_the_open_tab_shows_the_new_site(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = served.previewer.state
    version = state.version
    tab = EventStream(served, str(version))  # type: ignore[arg-type]
    other_client = EventStream(served)  # names no version: not a tab, not waited for
    started = watch_checks(monkeypatch)
    edit_prose(project, "tabsfirst")
    rebuild = threading.Thread(target=served.previewer.rebuild)
    rebuild.start()
    try:
        tab.wait_for("reload")
        other_client.wait_for("reload")
        time.sleep(0.4)
        assert started == [], "the checks ran before the tab came back"
        back = time.monotonic()
        reloaded = EventStream(served, str(state.version))  # type: ignore[arg-type]
        rebuild.join(timeout=30)
        assert not rebuild.is_alive()
        assert len(started) == 1
        at, collecting = started[0]
        assert back <= at < back + 0.5
        assert collecting, "the cycle collector is back on once the tab shows the new site"
        assert state.version == version + 1
        reloaded.close()
    finally:
        rebuild.join(timeout=30)
        tab.close()
        other_client.close()


def test_a_tab_that_never_comes_back_delays_the_checks_only_so_long(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preview, "TABS_SECONDS", 0.5)
    tab = EventStream(served, str(served.previewer.state.version))  # type: ignore[arg-type]
    started = watch_checks(monkeypatch)
    edit_prose(project, "closedtab")
    begun = time.monotonic()
    try:
        assert served.previewer.rebuild()
    finally:
        tab.close()
    assert len(started) == 1
    assert 0.5 <= started[0][0] - begun < 10


def test_without_open_tabs_the_checks_follow_at_once(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preview, "TABS_SECONDS", 30.0)
    started = watch_checks(monkeypatch)
    rendered: list[bool] = []
    original = pipeline.render_site

    def recorded(*args: Any, **kwargs: Any) -> Any:
        rendered.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "render_site", recorded)
    edit_prose(project, "notabs")
    begun = time.monotonic()
    assert served.previewer.rebuild()
    assert len(started) == 1 and started[0][0] - begun < 10
    assert rendered == [False], "no cycle collection while the pages are rendered"
    assert gc.isenabled()


def wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll `condition` until it holds; fail with `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_tab_that_left_is_no_longer_waited_for(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page the reader navigated away from (or closed) closes its live-reload stream. The
    # preview stops counting it as an open tab at once, not at its next write (a keep-alive
    # every 5 s), so a save right after does not hold the checks and the search index up to
    # TABS_SECONDS for a tab that will never come back.
    monkeypatch.setattr(preview, "TABS_SECONDS", 30.0)
    state = served.previewer.state
    left = EventStream(served, str(state.version))  # type: ignore[arg-type]
    wait_until(lambda: state.tabs == 1, 5, "the tab's stream was never counted")
    left.close()
    wait_until(lambda: state.tabs == 0, 2, "the closed stream still counts as an open tab")
    started = watch_checks(monkeypatch)
    edit_prose(project, "lefttab")
    assert served.previewer.rebuild()
    assert state.awaited == 0, "the rebuild waited for a tab that had left"
    assert len(started) == 1


def test_a_rebuild_does_not_wait_for_a_stopped_indexer_to_clean_up(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = SearchIndex.close
    closing, release, closed = threading.Event(), threading.Event(), threading.Event()

    def held_close(index: SearchIndex) -> None:
        closing.set()
        release.wait(30)  # its folder goes only once the test has seen the rebuild return
        original(index)
        closed.set()

    monkeypatch.setattr(SearchIndex, "close", held_close)
    edit_prose(project, "slowclose")
    assert served.previewer.rebuild()  # its index starts in the background
    edit_prose(project, "again")
    assert served.previewer.rebuild()  # stops that index, whose folder has not gone yet
    assert closing.wait(5)
    assert not closed.is_set(), "the rebuild waited for the stopped indexer's folder to go"
    release.set()
    served.previewer.close()  # waits for every indexer: nothing is left behind
    assert not served.previewer.workdir.exists()


def test_an_unchanged_vocabulary_is_the_same_object_from_one_rebuild_to_the_next(
    served: Served, project: Project
) -> None:
    # Its spelling remembers the headings it made: a rebuild spells only new keys.
    config, cache = served.previewer.config, served.previewer.cache
    assert cache is not None
    first = normalize(load_inputs(config, cache), cache).vocabulary
    cache.begin()
    assert normalize(load_inputs(config, cache), cache).vocabulary is first
    vocabulary = project.root / "content" / "vocabulary.yaml"
    vocabulary.write_text(vocabulary.read_text("utf-8") + "\n# edited\n", "utf-8")
    cache.begin()
    changed = normalize(load_inputs(config, cache), cache).vocabulary
    assert changed is not first and changed == first


def test_unchanged_guides_are_the_same_objects_from_one_rebuild_to_the_next(
    served: Served, project: Project
) -> None:
    # Their digests and summaries are remembered by identity: a rebuild after one edit
    # digests only the guide that changed.
    config, cache = served.previewer.config, served.previewer.cache
    assert cache is not None

    def guides() -> dict[str, Guide]:
        cache.begin()
        normalized = normalize(load_inputs(config, cache), cache)
        site = assemble(normalized, config.build_date, cache=cache)
        return {guide.source: guide for guide in site.guides}

    first = guides()
    again = guides()
    assert len(first) == 4 and all(again[source] is first[source] for source in first)
    edited = sorted((project.root / "content").glob("glm-5-2-*.md"))[0]
    edited.write_text(edited.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    after = guides()
    source = edited.relative_to(project.root).as_posix()
    assert after[source] is not first[source]
    assert after[source].body.endswith("One more sentence.\n")
    assert all(after[other] is first[other] for other in first if other != source)


def test_a_rebuild_draws_the_cards_and_feed_entries_of_changed_guides_only(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[tuple[str, str, tuple[Any, ...]]] = []
    original = site_pages.template_macro

    def counted(env: Any, name: str, user: str) -> Any:
        macro = original(env, name, user)

        def draw(*args: Any) -> Any:
            guide = next(arg for arg in args if isinstance(arg, Guide))
            drawn.append((name, guide.slug, args[args.index(guide) + 1 :]))
            return macro(*args)

        return draw

    monkeypatch.setattr(site_pages, "template_macro", counted)
    edited = sorted((project.root / "content").glob("glm-5-2-*.md"))[0]
    edited.write_text(edited.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    assert served.previewer.rebuild()
    site = served.previewer.state.site
    assert site is not None
    link = f'href="/guides/{edited.stem}/"'.encode()
    tags = [path for path, data in site.files.items() if path.startswith("tags/") and link in data]
    # Its card on the guides index, on its tag pages (drawn once for all of them), and its
    # feed entry.
    assert len(tags) >= 2, tags
    assert sorted((name, slug, len(more)) for name, slug, more in drawn) == sorted(
        [
            ("guide_card", edited.stem, 0),
            ("guide_card", edited.stem, 1),
            ("feed_entry", edited.stem, 2),
        ]
    )
    # A template change draws every card and entry again, with the new template.
    drawn.clear()
    macros = project.root / "templates" / "macros.html"
    text = macros.read_text("utf-8")
    assert text.count('<article class="guide-card">') == text.count("<entry>") == 1
    text = text.replace('class="guide-card"', 'class="guide-card redrawn"')
    macros.write_text(text.replace("<entry>", '<entry xml:lang="en">'), "utf-8")
    assert served.previewer.rebuild()
    stems = sorted(path.stem for path in project.root.glob("content/glm-5-2-*.md"))
    assert sorted(slug for name, slug, _ in drawn if name == "feed_entry") == stems
    assert {slug for name, slug, _ in drawn if name == "guide_card"} == set(stems)
    site = served.previewer.state.site
    assert site is not None
    assert site.files["guides/index.html"].count(b'class="guide-card redrawn"') == 4
    assert site.files["atom.xml"].count(b'<entry xml:lang="en">') == 4
    for path in tags:
        assert site.files[path].count(b'class="guide-card redrawn"') >= 1


def test_a_rebuild_writes_its_cache_entries_once_its_site_is_shown(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = served.previewer.config
    assert config.cache_dir is not None
    pages = config.cache_dir / f"v{cache.VERSION}" / stored_pages.HTML

    def stored() -> set[str]:
        return {path.name for path in pages.iterdir() if not path.name.startswith(".tmp-")}

    before = stored()
    at_publish: list[set[str]] = []
    original = preview.PreviewState.publish

    def publish(self: preview.PreviewState, site: Any, *args: Any, **kwargs: Any) -> None:
        if site is not None and not at_publish:
            at_publish.append(stored())
        original(self, site, *args, **kwargs)

    monkeypatch.setattr(preview.PreviewState, "publish", publish)
    edit_prose(project, "writtenlater")
    assert served.previewer.rebuild()
    # Nothing was written on the way to the new site; every page it rendered is on disk
    # after, whole (a build that follows, or the next preview, reads them back).
    assert at_publish == [before]
    fresh = cache.BuildCache(config.cache_dir)
    read = []
    for key in sorted(stored() - before):
        scanned = fresh.read(stored_pages.SCAN, key)
        assert scanned is not None
        _, sha256 = stored_pages.load_scan(scanned)
        read.append(fresh.read_file(stored_pages.HTML, key, sha256))
    assert None not in read
    assert sum(b"The word writtenlater is new." in page for page in read) == 4  # type: ignore[operator]


def test_a_rebuild_scans_the_pages_it_rendered_after_showing_them(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[bool] = []
    scanned: list[tuple[str, bool]] = []
    original_publish = preview.PreviewState.publish
    original_scan = scan._scanned  # every page's scan, guide or listing, goes through it

    def publish(self: preview.PreviewState, site: Any, *args: Any, **kwargs: Any) -> None:
        original_publish(self, site, *args, **kwargs)
        shown.append(site is not None)

    def scanned_page(page: Any, base_url: str) -> Any:
        scanned.append((page.path, any(shown)))
        return original_scan(page, base_url)

    monkeypatch.setattr(preview.PreviewState, "publish", publish)
    monkeypatch.setattr(scan, "_scanned", scanned_page)
    edit_prose(project, "scannedlater")
    assert served.previewer.rebuild()
    guides = [path for path, _ in scanned if path.startswith("guides/glm-5-2-")]
    assert len(guides) == 4, scanned
    assert all(after for _, after in scanned), f"scanned before the site was shown: {scanned}"
    # The checks read the scans: a link the edit breaks is a finding of this rebuild.
    prose = sorted((project.root / "content").glob("glm-5-2-*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + "\nSee [nowhere](/guides/nowhere/).\n", "utf-8")
    assert not served.previewer.rebuild()
    assert any("/guides/nowhere/" in error for error in served.previewer.state.errors)


def test_a_rebuild_reads_only_the_files_the_watcher_named(
    served: Served, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    original = load._read_one

    def counted(config: BuildConfig, entry: Any, *args: Any) -> Any:
        if entry.path.endswith((".json", ".md")):
            read.append(entry.path)
        return original(config, entry, *args)

    monkeypatch.setattr(load, "_read_one", counted)
    prose = sorted((project.root / "content").glob("glm-5-2-*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + "\nThe word quokka is new.\n", "utf-8")
    assert served.previewer.rebuild({str(prose)})
    assert "quokka" in served.previewer.state.site.file(f"guides/{prose.stem}/index.html").decode(
        "utf-8"
    )
    # The registry, named in full, is looked at on every build.
    assert [path for path in read if "registry" not in path] == [str(prose)]

    # A burst too big to trust (the kernel may have dropped events) lists every folder.
    read.clear()
    told = [{str(project.root / "records" / f"{n}.json") for n in range(LISTED_BURST + 1)}]
    monkeypatch.setattr(preview, "bursts", lambda paths, stop: iter(told))
    served.previewer.watch_forever(threading.Event())
    records = len(list((project.root / "records").glob("*.json")))
    assert len([path for path in read if path.endswith(".json")]) >= records
