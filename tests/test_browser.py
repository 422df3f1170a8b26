"""A real browser (Debian chromium via Playwright) sees the preview update by itself."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from tests.preview_helpers import start_preview

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RECORD = "records/003_d837ec4df0827390.json"
GUIDE = "guides/glm-5-2-vllm-sequence-parallel-moe/"
OLD_VERDICT = "fail-closed-low-load-canary-before-tp-dp-ep-promotion"
LISTENED_AFTER_PAINT = """
window.listenedAfterPaint = [];
const OriginalEventSource = window.EventSource;
window.EventSource = function (url) {
  window.listenedAfterPaint.push(performance.getEntriesByType("paint").length > 0);
  return new OriginalEventSource(url);
};
"""
"""Record, each time the page opens a live-reload stream, whether it had painted yet."""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's chromium, driven by Playwright; CI installs it, elsewhere the test is skipped."""
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium")
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


PROSE = "content/glm-5-2-vllm-sequence-parallel-moe.md"
SHOWS = "v => document.querySelector('code.classification').textContent === v"
SHOWN_BODY = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll("details").forEach((box) => box.removeAttribute("open"));
  return body.outerHTML;
}"""
"""The page's body as shown, whether the reader opened its details or not."""
SHOWN_VERSION = "() => [...document.scripts].find((s) => s.dataset.version).dataset.version"
"""The preview's version of the site a page shows (its reload script says)."""
SHOWN_VERSIONS = """() => {
  const script = [...document.scripts].find((s) => s.dataset.version);
  return `${script.dataset.version} ${script.dataset.index}`;
}"""
"""The preview's versions of the site and of its search index a page shows."""


def _edit_record(project: Project, old: str, new: str) -> None:
    path = project.root / RECORD
    path.write_text(path.read_text("utf-8").replace(old, new), "utf-8")


@contextmanager
def shown_in_preview(
    browser: object, project: Project, path: str
) -> Iterator[tuple[Any, list[str]]]:
    """Serve the project, open `path` in a tab and wait for its first paint; mark the
    document (`window.sameDocument`) so a reload shows. Yield the tab and the console errors
    it logs from the start; stop both after."""
    preview = start_preview(project.root)
    try:
        page = browser.new_page()  # type: ignore[attr-defined]
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(preview.url + path)
        page.wait_for_function("() => performance.getEntriesByType('paint').length > 0")
        page.evaluate("window.sameDocument = true")
        yield page, errors
        page.close()
    finally:
        preview.stop()


def test_open_guide_updates_in_place_when_its_record_changes(
    browser: object, project: Project
) -> None:
    prose = project.root / PROSE
    prose.write_text(prose.read_text("utf-8") + "\n```console\n$ echo launched\nlaunched\n```\n")
    (project.root / "content/acknowledged.yaml").unlink()  # the seeds' warnings box comes back
    preview = start_preview(project.root)
    try:
        page = browser.new_page(viewport={"width": 1000, "height": 600})  # type: ignore[attr-defined]
        page.add_init_script(LISTENED_AFTER_PAINT)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(preview.url + GUIDE)
        assert page.locator("code.classification").inner_text() == OLD_VERDICT
        assert page.locator(".code-block .code-copy").count() == 1
        # The page listens for reloads once it is on screen (the preview's checks wait for
        # open tabs to be back): its stream opens after its first paint.
        page.wait_for_function("() => window.listenedAfterPaint.length > 0", timeout=10_000)
        assert page.evaluate("window.listenedAfterPaint") == [True]
        page.evaluate("window.scrollTo(0, 700); window.sameDocument = true")
        scrolled = page.evaluate("window.scrollY")
        assert scrolled > 0
        page.locator("#glm52-build-warnings summary").click()
        heading = page.evaluate_handle("document.querySelector('h1')")

        _edit_record(project, OLD_VERDICT, "edited-in-the-browser-test")
        page.wait_for_function(SHOWS, arg="edited-in-the-browser-test", timeout=30_000)
        # Changed in place: the same document (no reload) and the same nodes where nothing
        # changed, the scroll and the opened warnings kept, the page's script run once over the
        # new content, and a new stream for the next save.
        assert page.evaluate("window.sameDocument") is True
        assert page.evaluate("h => h === document.querySelector('h1')", heading) is True
        assert page.evaluate("window.scrollY") == scrolled
        assert page.locator("#glm52-build-warnings li").first.is_visible()
        assert page.locator(".code-block .code-copy").count() == 1
        page.wait_for_function("() => window.listenedAfterPaint.length > 1", timeout=10_000)
        assert page.evaluate("window.listenedAfterPaint") == [True, True]

        # A prose edit that adds a section near the top moves every node after it: the tab
        # still ends up showing exactly what a freshly opened tab shows.
        text = prose.read_text("utf-8").replace(
            "## Who it is for", "## Added in the test\n\nA new paragraph.\n\n## Who it is for"
        )
        logged = preview.rebuilds()
        prose.write_text(text, "utf-8")
        page.wait_for_function("() => document.getElementById('added-in-the-test') !== null")
        assert page.evaluate("window.sameDocument") is True
        preview.wait_for_rebuilds(logged + 1, timeout=30)  # its checks done: the last version
        fresh = browser.new_page(viewport={"width": 1000, "height": 600})  # type: ignore[attr-defined]
        fresh.goto(preview.url + GUIDE)
        fresh.wait_for_function("() => document.querySelector('.code-copy') !== null")
        # Both tabs on the same site and search index (the index follows the rebuild, and
        # each tab's stream tells it when it is served, so one tab may be told a moment
        # before the other: the two are read until they agree or the time is up).
        deadline = time.monotonic() + 30
        while True:
            shown = [
                tab.evaluate(f"[({SHOWN_VERSIONS})(), ({SHOWN_BODY})()]") for tab in (page, fresh)
            ]
            if shown[0] == shown[1] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert shown[0] == shown[1], "the edited tab does not show what a fresh tab shows"
        assert page.title() == fresh.title()
        assert page.locator(".code-block .code-copy").count() == 1
        assert errors == []
        fresh.close()
        page.close()
    finally:
        preview.stop()


def test_open_guide_reloads_whole_when_its_stylesheet_changes(
    browser: object, project: Project
) -> None:
    with shown_in_preview(browser, project, GUIDE) as (page, _):
        style = project.root / "templates/assets/style.css"
        style.write_text(
            style.read_text("utf-8") + "\nbody { outline: 3px solid rgb(1, 2, 3); }\n", "utf-8"
        )
        # A page that loads another stylesheet cannot be swapped: it is reloaded, and styled.
        page.wait_for_function(
            "() => window.sameDocument === undefined && "
            "getComputedStyle(document.body).outlineColor === 'rgb(1, 2, 3)'",
            timeout=30_000,
        )
        assert page.locator("code.classification").inner_text() == OLD_VERDICT


def test_warnings_box_opens_to_list_the_warnings_and_a_draft_shows_its_banner(
    browser: object, project: Project
) -> None:
    from tests.new_guide import SLUG, write_probe_guide

    (project.root / "content/acknowledged.yaml").unlink()  # the seeds' warnings come back
    write_probe_guide(project.root, draft=True)
    preview = start_preview(project.root)
    try:
        page = browser.new_page(viewport={"width": 375, "height": 800})  # type: ignore[attr-defined]
        page.goto(preview.url + f"guides/{SLUG}/")
        banner = page.locator(".draft-banner")
        assert banner.is_visible() and "Draft, not published" in banner.inner_text()
        box = page.locator("#glm52-build-warnings")
        summary = box.locator("summary")
        assert summary.is_visible() and "warning(s) in this build" in summary.inner_text()
        items = box.locator("li")
        assert not items.first.is_visible()
        summary.click()
        assert items.first.is_visible()
        assert any("would answer 404" in text for text in items.all_inner_texts())
        page.close()
    finally:
        preview.stop()


def test_search_page_keeps_working_after_an_update_in_place(
    browser: object, project: Project
) -> None:
    with shown_in_preview(browser, project, "search/?q=canary") as (page, errors):
        found = f'.pagefind-ui__result-link[href$="/{GUIDE}"]'
        page.wait_for_selector(found, timeout=15_000)
        before = page.evaluate(SHOWN_VERSION)
        _edit_record(project, OLD_VERDICT, "edited-in-the-browser-test")
        page.wait_for_function(f"v => ({SHOWN_VERSION})() !== v", arg=before, timeout=30_000)
        # The page's scripts ran again over the new content: one search box, and the query
        # of the address searched again.
        page.wait_for_selector(found, timeout=15_000)
        assert page.evaluate("window.sameDocument") is True
        assert page.locator("#search input").count() == 1
        assert page.locator("#search input").input_value() == "canary"
        assert errors == []


REMOVED = "guides/glm-5-2-sglang-dsa-indexer-fusion/"
FOUND_GUIDES = """() => [...new Set([...document.querySelectorAll('.pagefind-ui__result-link')]
  .map((link) => new URL(link.href).pathname))].sort()"""
"""The guides the search page lists, each once (a result's sub-results link its sections)."""


def test_an_open_search_page_follows_each_new_search_index(
    browser: object, project: Project
) -> None:
    # A guide a shard: removing one changes which shards the search page has to merge. The
    # preview serves each new index a moment after the rebuild, without reloading tabs.
    settings = project.root / "content/site.yaml"
    settings.write_text(settings.read_text("utf-8") + "search_shard_pages: 1\n", "utf-8")
    with shown_in_preview(browser, project, "search/?q=GLM") as (page, errors):
        page.wait_for_function(f"() => ({FOUND_GUIDES})().length === 4", timeout=20_000)
        assert f"/{REMOVED}" in page.evaluate(FOUND_GUIDES)
        (project.root / "records/000_f07234cca5c1d19d.json").unlink()
        (project.root / "content/glm-5-2-sglang-dsa-indexer-fusion.md").unlink()
        page.wait_for_function(f"() => ({FOUND_GUIDES})().length === 3", timeout=60_000)
        assert f"/{REMOVED}" not in page.evaluate(FOUND_GUIDES)

        # A word no guide has yet, typed into the box: found as soon as the saved guide's
        # shard is indexed again, and the box still holds what was typed.
        page.fill("#search input", "quokkafication")
        page.wait_for_selector(".pagefind-ui__message >> text=No results", timeout=20_000)
        prose = project.root / PROSE
        prose.write_text(prose.read_text("utf-8") + "\nThe word quokkafication is new.\n")
        page.wait_for_function(
            f"() => JSON.stringify(({FOUND_GUIDES})()) === JSON.stringify(['/{GUIDE}'])",
            timeout=60_000,
        )
        assert page.locator("#search input").input_value() == "quokkafication"
        assert page.evaluate("window.sameDocument") is True
        assert errors == []


def test_a_failed_rebuild_shows_its_banner_in_place_and_the_fix_removes_it(
    browser: object, project: Project
) -> None:
    with shown_in_preview(browser, project, GUIDE) as (page, _):
        path = project.root / RECORD
        good = path.read_text("utf-8")
        path.write_text(good[: len(good) // 2], "utf-8")  # a save cut short: not JSON
        banner = page.locator("#glm52-build-error")
        banner.wait_for(timeout=30_000)
        assert RECORD in banner.inner_text()
        # The last good site stays under the banner, and the tab was not reloaded.
        assert page.locator("code.classification").inner_text() == OLD_VERDICT
        path.write_text(good.replace(OLD_VERDICT, "fixed-in-the-browser-test"), "utf-8")
        page.wait_for_function(SHOWS, arg="fixed-in-the-browser-test", timeout=30_000)
        assert banner.count() == 0
        assert page.evaluate("window.sameDocument") is True
