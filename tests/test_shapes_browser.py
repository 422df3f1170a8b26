"""A guide of new shapes in a real browser (Debian chromium via Playwright), served as Netlify
serves it: charts span the main column at 1,280 px with their texts at reading size, nothing
scrolls sideways at 375 px, key/value tables show their long values whole, and the guide is
photographed at desktop and phone widths in light and dark schemes into
tests/screenshots/probe-guide-*.png for a human to look at
(`pytest tests/test_shapes_browser.py` makes them again).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from tests.conftest import copy_project
from tests.netlify_server import serve_netlify
from tests.new_guide import SLUG, probe_record, write_probe_guide
from tests.test_site_browser import (
    CSP_LISTENER,
    DESKTOP,
    OVERFLOWING,
    PHONE,
    Tab,
    launch_chromium,
    photograph,
)

GUIDE = f"/guides/{SLUG}/"
# Beside the probe's list of lists (latencyProbe.chunkSizes, charted) and its keyed table
# (byPromptLength, charted): a paired table with a row caveat and a key/value table of values
# that do not break by themselves (an image URL, a digest, one long word) and times.
EXTRA: dict[str, Any] = {
    "warmupRows": [
        {"region": "eu-west", "coldStartMsBaseline": 1310, "coldStartMsCandidate": 1200.5},
        {"region": "us-east", "coldStartMsBaseline": 980, "claimBoundary": "one run, one node"},
        {"region": "ap-south", "coldStartMsBaseline": -12, "coldStartMsCandidate": 40},
    ],
    "probeHost": {
        "image": "https://example.org/registry/sglang/very/long/path/to/an/image/that/does/not"
        "/break:v0.6.2-cu129-with-extra-build-tags",
        "digest": "sha256:" + "c" * 64,
        "commit": "d" * 40,
        "startedAt": "2026-11-01T08:15:00Z",
        "note": "aprefillchunkwordwithoutanyspaceorhyphenthatcannotbreakbyitself_and_more",
    },
}
# Every text of every chart, with its chart, that is not drawn inside its chart's box.
TEXT_OUTSIDE = """
() => [...document.querySelectorAll('figure.chart svg')].flatMap((svg) => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('text')].filter((t) => {
    const r = t.getBoundingClientRect();
    return r.left < box.left - 0.5 || r.right > box.right + 0.5;
  }).map((t) => `${svg.id || svg.getAttribute('aria-labelledby')}: ${t.textContent}`);
})
"""
# Each key/value table's cells whose content is cut off: past the window's right edge, past
# its table's scroll box, or wider than the cell itself (clipped or hidden by an ellipsis).
KV_CUT_OFF = """
() => [...document.querySelectorAll('table.kv')].flatMap((table) => {
  const box = table.closest('.table-scroll') || table.parentElement;
  const edge = Math.min(window.innerWidth, box.getBoundingClientRect().right);
  const hidden = box.scrollWidth > box.clientWidth + 1;
  return [...table.querySelectorAll('th, td')].filter((cell) => {
    const parts = [cell, ...cell.querySelectorAll('*')];
    return hidden || parts.some((el) => el.getBoundingClientRect().right > edge + 0.5 ||
      el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible');
  }).map((cell) => cell.textContent.trim().slice(0, 40));
})
"""


@pytest.fixture(scope="module")
def probe_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed project plus the probe guide (with EXTRA sections), built once."""
    project = copy_project(tmp_path_factory.mktemp("probe-site") / "project")
    write_probe_guide(project.root)
    project.save_record("900_latency_probe.json", probe_record(**EXTRA))
    out = project.root / "_site"
    build(BuildConfig.for_root(project.root, out))
    assert (out / GUIDE.strip("/") / "index.html").is_file()
    return out


@pytest.fixture(scope="module")
def base_url(probe_site: Path) -> Iterator[str]:
    """The built site served with netlify.toml's rules (and its CSP)."""
    with serve_netlify(probe_site) as url:
        yield url


@pytest.fixture(scope="module")
def browser(probe_site: Path) -> Iterator[Any]:
    """One chromium for the module, started after the site is built."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture
def open_guide(browser: Any, base_url: str) -> Iterator[Any]:
    """Return a function opening the probe guide in a fresh tab at a viewport size; the tab
    records console errors, uncaught exceptions, failed requests and CSP violations."""
    contexts: list[Any] = []

    def opener(viewport: dict[str, int]) -> Tab:
        context = browser.new_context(viewport=viewport)
        context.add_init_script(CSP_LISTENER)
        contexts.append(context)
        tab = Tab(context)
        tab.open(base_url + GUIDE)
        return tab

    yield opener
    for context in contexts:
        context.close()


def test_charts_span_the_main_column_on_a_desktop(open_guide: Any) -> None:
    tab = open_guide(DESKTOP)
    page = tab.page
    column = page.evaluate(
        """() => { const main = document.querySelector('main'); const s = getComputedStyle(main);
             return main.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }"""
    )
    widths = page.evaluate(
        "[...document.querySelectorAll('figure.chart svg')]"
        ".map((svg) => svg.getBoundingClientRect().width)"
    )
    assert len(widths) >= 3, "the probe guide should have charts (list of lists, keyed, paired)"
    assert column > 1000
    assert all(width >= 0.9 * column for width in widths), (widths, column)
    # texts keep their reading size instead of growing with the chart
    sizes = page.evaluate(
        "[...document.querySelectorAll('figure.chart text')]"
        ".map((t) => t.getBoundingClientRect().height)"
    )
    assert sizes and max(sizes) < 20, max(sizes)
    assert page.evaluate(TEXT_OUTSIDE) == []
    assert tab.problems + tab.csp_violations() == []


def test_nothing_scrolls_sideways_on_a_phone_and_charts_fit(open_guide: Any) -> None:
    page = open_guide(PHONE).page
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= PHONE["width"], page.evaluate(OVERFLOWING)
    widths = page.evaluate(
        "[...document.querySelectorAll('figure.chart svg')]"
        ".map((svg) => svg.getBoundingClientRect().right)"
    )
    assert widths and max(widths) <= PHONE["width"]
    assert page.evaluate(TEXT_OUTSIDE) == []


def test_key_value_tables_are_not_cut_off_on_a_phone(open_guide: Any) -> None:
    page = open_guide(PHONE).page
    assert page.evaluate("document.querySelectorAll('table.kv').length") >= 3
    assert page.evaluate(KV_CUT_OFF) == []
    # the long values are on screen whole, not shortened
    shown = page.evaluate("[...document.querySelectorAll('table.kv td')].map((td) => td.innerText)")
    text = " ".join(shown).replace("\n", "")
    for key, value in EXTRA["probeHost"].items():
        if not key.endswith("At"):  # times read 2026-11-01 08:15 UTC
            assert value in text, value


def test_probe_guide_screenshots_at_desktop_and_phone_in_light_and_dark(
    browser: Any, base_url: str
) -> None:
    photograph(browser, base_url + GUIDE, "probe-guide")
