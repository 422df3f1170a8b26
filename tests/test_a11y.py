"""axe-core (axe-playwright-python) on the served site, at desktop and phone widths.

Every page a reader lands on, except that one tag page stands for all of them (they share a
template): no violation of impact "serious" or "critical" (the publication's bar), and none
of impact "moderate" either (the seeds have none; a new one is a regression). A failure lists
each rule with its impact, help text, help URL, the first target selectors and what axe says
is wrong with the first one. Minor findings are printed (`pytest -rA` or `-s`), not asserted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.netlify_server import pages_under_test, serve_netlify, site_under_test
from tests.test_site_browser import launch_chromium

VIEWPORTS = {
    "1280x900": ({"width": 1280, "height": 900}, "light"),
    "375x800": ({"width": 375, "height": 800}, "light"),
    # The dark scheme has colours of its own: contrast is checked there too.
    "1280x900-dark": ({"width": 1280, "height": 900}, "dark"),
}
BLOCKING = ("critical", "serious", "moderate")
# The search page is also checked showing results: every guide is about GLM-5.2.
SEARCH_WITH_RESULTS = "/search/?q=glm"
SHOWN_TARGETS = 4


def pages_to_check() -> list[Any]:
    """Every page but the tag pages, plus the first tag page (or a skipped placeholder), and
    the search page with results."""
    pages = pages_under_test()
    tags = sorted(p for p in pages if p.startswith("/tags/") and p.count("/") == 3)
    chosen: list[Any] = [p for p in pages if not p.startswith("/tags/") or p == "/tags/"]
    if "/search/" in pages:
        chosen.append(SEARCH_WITH_RESULTS)
    if tags:
        chosen.append(tags[0])
    else:
        chosen.append(
            pytest.param(
                "/tags/<tag>/",
                marks=pytest.mark.skip(reason="the built site has no /tags/<tag>/ page yet"),
            )
        )
    return chosen


@pytest.fixture(scope="module")
def base_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The built site, served with netlify.toml's rules."""
    with serve_netlify(site_under_test(request)) as url:
        yield url


@pytest.fixture(scope="module")
def pages(base_url: str) -> Iterator[dict[str, Any]]:
    """One browser; one page per viewport, reused by every test of the module. Started after
    the site is built and served."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        # bypass_csp: axe is injected into the page; the CSP itself is tested elsewhere.
        contexts = {
            name: browser.new_context(viewport=viewport, color_scheme=scheme, bypass_csp=True)
            for name, (viewport, scheme) in VIEWPORTS.items()
        }
        yield {name: context.new_page() for name, context in contexts.items()}
        browser.close()


def describe(violation: dict[str, Any]) -> str:
    """One violation as the lines a failure shows."""
    nodes = violation["nodes"]
    targets = [" ".join(map(str, node["target"])) for node in nodes[:SHOWN_TARGETS]]
    more = f" (+{len(nodes) - SHOWN_TARGETS} more)" if len(nodes) > SHOWN_TARGETS else ""
    summary = " ".join((nodes[0].get("failureSummary") or "").split()) if nodes else ""
    return (
        f"{violation['id']} ({violation['impact']}): {violation['help']}\n"
        f"    {len(nodes)} element(s): {', '.join(targets)}{more}\n"
        f"    first: {summary[:300]}\n"
        f"    {violation['helpUrl']}"
    )


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("path", pages_to_check())
def test_no_serious_accessibility_violations(
    pages: dict[str, Any], base_url: str, path: str, viewport: str
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    page = pages[viewport]
    response = page.goto(base_url + path, wait_until="load")
    assert response is not None and response.status == 200, (
        f"{path}: HTTP {response and response.status}"
    )
    if path == SEARCH_WITH_RESULTS:
        page.wait_for_selector(".pagefind-ui__result", timeout=15_000)
    violations = Axe().run(page).response["violations"]
    blocking = [v for v in violations if v["impact"] in BLOCKING]
    milder = [v for v in violations if v["impact"] not in BLOCKING]
    if milder:
        print(f"{path} at {viewport}, not asserted:\n" + "\n".join(map(describe, milder)))
    assert not blocking, (
        f"{path} at {viewport}: {len(blocking)} critical/serious/moderate axe violation(s)\n"
        + "\n".join(map(describe, blocking))
    )


def test_every_guide_is_checked() -> None:
    """The parametrization above covers every guide page (catches a wrong page list)."""
    chosen = {p if isinstance(p, str) else p.values[0] for p in pages_to_check()}
    guides = {p for p in pages_under_test() if p.startswith("/guides/") and p != "/guides/"}
    assert guides and guides <= chosen
    assert {"/", "/guides/"} <= chosen
    assert all(Path(p.split("?")[0]).suffix in ("", ".html") for p in chosen)
