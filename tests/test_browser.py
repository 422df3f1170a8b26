"""A real browser (Debian chromium via Playwright) sees the preview reload by itself."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

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


def test_open_guide_reloads_by_itself_when_its_record_changes(
    browser: object, project: Project
) -> None:
    preview = start_preview(project.root)
    try:
        page = browser.new_page()  # type: ignore[attr-defined]
        page.add_init_script(LISTENED_AFTER_PAINT)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(preview.url + GUIDE)
        assert page.locator("code.classification").inner_text() == OLD_VERDICT
        page.evaluate("window.loadedBeforeEdit = true")
        # The page listens for reloads once it is on screen (the preview's checks wait for
        # open tabs to be back): its stream opens after its first paint.
        page.wait_for_function("() => window.listenedAfterPaint.length > 0", timeout=10_000)
        assert page.evaluate("window.listenedAfterPaint") == [True]
        path = project.root / RECORD
        path.write_text(
            path.read_text("utf-8").replace(OLD_VERDICT, "edited-in-the-browser-test"), "utf-8"
        )
        page.wait_for_function(
            "() => window.loadedBeforeEdit === undefined && "
            "document.querySelector('code.classification').textContent === "
            "'edited-in-the-browser-test'",
            timeout=30_000,
        )
        page.wait_for_function("() => window.listenedAfterPaint.length > 0", timeout=10_000)
        assert page.evaluate("window.listenedAfterPaint") == [True]
        assert errors == []
        page.close()
    finally:
        preview.stop()


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
