"""Reading a guide in a real browser: a long table keeps its header row in view, a wide table
scrolls inside its own box on a phone, verdict columns stand out, focus is visible, the colour
scheme follows the system, and printing drops navigation and prints tables whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.netlify_server import serve_netlify
from tests.test_site_browser import launch_chromium

LONG_TABLE_GUIDE = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
LONG_TABLE = "#shape-rows ~ .table-scroll.long"
WIDE_TABLE_GUIDE = "/guides/glm-5-2-sglang-dsa-indexer-fusion/"
WIDE_TABLE = "#reported-memory-rows + .table-scroll"


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    """The built site, served with netlify.toml's rules."""
    with serve_netlify(site) as url:
        yield url


@pytest.fixture(scope="module")
def tab() -> Iterator[Any]:
    """One chromium page with a phone viewport."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser.new_page(viewport={"width": 375, "height": 700})
        browser.close()


def test_a_long_tables_header_row_stays_in_view_while_it_scrolls(tab: Any, base: str) -> None:
    tab.goto(base + LONG_TABLE_GUIDE)
    box = tab.locator(LONG_TABLE)
    assert box.evaluate("b => b.querySelectorAll('tbody tr').length") > 40
    assert box.evaluate("b => b.scrollHeight > b.clientHeight + 200")
    box.evaluate("b => { b.scrollTop = b.scrollHeight / 2; }")
    box_top, header_top, first_row_top = box.evaluate(
        """b => [b.getBoundingClientRect().top,
                 b.querySelector('thead th').getBoundingClientRect().top,
                 b.querySelector('tbody tr').getBoundingClientRect().top]"""
    )
    assert abs(header_top - box_top) <= 2  # the header sits at the top of the scrolled box
    assert first_row_top < box_top  # while the first rows have scrolled out of view


def test_a_wide_table_scrolls_inside_its_box_not_the_page(tab: Any, base: str) -> None:
    tab.goto(base + WIDE_TABLE_GUIDE)
    box = tab.locator(WIDE_TABLE)
    scroll_width, client_width = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
    assert scroll_width > client_width * 1.5  # more columns than the phone shows
    assert box.evaluate("b => getComputedStyle(b).overflowX") == "auto"
    assert tab.evaluate("document.documentElement.scrollWidth") <= 375
    box.evaluate("b => { b.scrollLeft = 200; }")
    assert box.evaluate("b => b.scrollLeft") == 200
    assert tab.evaluate("window.scrollX") == 0


def test_verdict_columns_are_tinted_and_bold(tab: Any, base: str) -> None:
    tab.goto(base + WIDE_TABLE_GUIDE)
    verdict, plain = tab.evaluate(
        """() => {
            const style = el => { const s = getComputedStyle(el);
                                  return [s.backgroundColor, s.fontWeight]; };
            return [style(document.querySelector('td.verdict')),
                    style(document.querySelector('td:not(.verdict):not(.num)'))];
        }"""
    )
    assert verdict[0] != plain[0]
    assert int(verdict[1]) >= 600 > int(plain[1])


def test_keyboard_focus_is_visible(tab: Any, base: str) -> None:
    tab.goto(base + WIDE_TABLE_GUIDE)
    tab.keyboard.press("Tab")
    focused = tab.evaluate("document.activeElement.className")
    assert focused == "skip-link"
    tab.keyboard.press("Tab")
    style, width = tab.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return [s.outlineStyle, parseFloat(s.outlineWidth)]; }"""
    )
    assert style == "solid" and width >= 2


def test_colour_scheme_follows_the_system_setting(tab: Any, base: str) -> None:
    colours = {}
    for scheme in ("light", "dark"):
        tab.emulate_media(color_scheme=scheme)
        tab.goto(base + WIDE_TABLE_GUIDE)
        colours[scheme] = tab.evaluate(
            "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
        )
    tab.emulate_media(color_scheme="light")
    assert colours["light"][0] == "rgb(255, 255, 255)"
    assert colours["dark"][0] != colours["light"][0] and colours["dark"][1] != colours["light"][1]


def test_print_drops_navigation_and_prints_tables_whole(tab: Any, base: str) -> None:
    tab.goto(base + LONG_TABLE_GUIDE)
    tab.emulate_media(media="print")
    try:
        hidden = tab.evaluate(
            """() => ['.site-search', '.site-header nav', '.toc', '.guide-nav', '.site-footer']
                .map(s => getComputedStyle(document.querySelector(s)).display)"""
        )
        box = tab.locator(LONG_TABLE)
        overflow, clipped = box.evaluate(
            "b => [getComputedStyle(b).overflowY, b.scrollHeight > b.clientHeight + 1]"
        )
    finally:
        tab.emulate_media(media="screen")
    assert hidden == ["none"] * 5
    assert overflow == "visible" and not clipped
