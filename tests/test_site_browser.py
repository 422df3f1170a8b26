"""The built site in a real browser (Debian chromium via Playwright), served as Netlify serves it.

Every page loads with no console error, no uncaught exception, no failed request and no
Content-Security-Policy violation, under the CSP header netlify.toml sends; no page scrolls
sideways on a 375 px phone; search finds a guide and shows its verdict, from the search page
and from the header's search box; and one guide is photographed at desktop and phone widths in
light and dark schemes into tests/screenshots/ for a human to look at.

The first tests check the Netlify emulator itself (tests/netlify_server.py), without a browser.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from bs4 import BeautifulSoup

from tests.netlify_server import pages_under_test, serve_netlify, site_under_test
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
PHONE = {"width": 375, "height": 800}
DESKTOP = {"width": 1280, "height": 900}
SECURITY_HEADERS = (
    "Content-Security-Policy",
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Permissions-Policy",
)
PAGES = pages_under_test()
# Records every CSP violation a page reports, from before its first script runs.
CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(
    `${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}` +
    ` (${e.sourceFile || 'document'}:${e.lineNumber})`);
});
"""
# The elements that stick out to the right of the viewport and are not clipped by a scrolling
# box (an absolutely positioned element escapes a scroller that is not positioned), to name
# in a failure.
OVERFLOWING = """
() => {
  const width = window.innerWidth;
  const scrolls = (s) => ['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX);
  const clipped = (el) => {
    let pos = getComputedStyle(el).position;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      const holds = pos === 'fixed' ? s.transform !== 'none'
        : pos === 'absolute' ? s.position !== 'static' || s.transform !== 'none' : true;
      if (!holds) continue;
      if (scrolls(s) && p !== document.documentElement && p !== document.body) return true;
      pos = s.position;
    }
    return false;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.classList.length ? '.' + [...el.classList].join('.') : '');
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.right > width + 0.5 && box.width > 0 && !clipped(el)) {
      out.push(`${name(el)} in ${name(el.parentElement)} (right edge ${Math.round(box.right)}px)`);
    }
  }
  return [...new Set(out)].slice(0, 8);
}
"""


def launch_chromium(playwright: Any) -> Any:
    """Launch Debian's chromium exactly as tests/test_browser.py does, or skip/fail like it."""
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run must install Debian's chromium")
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


# --- the Netlify emulator -------------------------------------------------------------------


def get(base_url: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One raw GET (no redirect following), returning status, headers and body."""
    split = urlsplit(base_url)
    connection = http.client.HTTPConnection(split.hostname, split.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


@pytest.fixture
def toy_site(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny site with a netlify.toml of its own."""
    site = tmp_path / "site"
    for relative, text in {
        "index.html": "home",
        "404.html": "missing",
        "guides/a/index.html": "guide a",
        "assets/app.js": "js",
        "pagefind/wasm.en.pagefind": "x",
        "pagefind/index/en_1.pf_index": "x",
        "pagefind/pagefind.wasm": "x",
        "feed.xml": "<feed/>",
        "_redirects": "# aliases\n/old-a /guides/a/ 301\n/legacy/* /guides/:splat 302\n"
        "/guides/a/ /elsewhere/ 301\n/forced /guides/a/ 200!\n",
    }.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text, "utf-8")
    (tmp_path / "outside.html").write_text("secret", "utf-8")
    config = tmp_path / "netlify.toml"
    config.write_text(
        '[[headers]]\n  for = "/*"\n  [headers.values]\n    X-Everywhere = "1"\n'
        '[[headers]]\n  for = "/assets/*"\n  [headers.values]\n    Cache-Control = "immutable"\n'
        '[[headers]]\n  for = "/guides/a/"\n  [headers.values]\n    X-Exact = "yes"\n'
        '[[redirects]]\n  from = "/toml-old"\n  to = "/guides/a/"\n  status = 308\n',
        "utf-8",
    )
    return site, config


def test_emulator_serves_files_folders_and_the_404_page(toy_site: tuple[Path, Path]) -> None:
    with serve_netlify(*toy_site) as base_url:
        status, headers, body = get(base_url, "/guides/a/")
        assert (status, body, headers["Content-Type"]) == (
            200,
            b"guide a",
            "text/html; charset=utf-8",
        )
        assert (headers["X-Everywhere"], headers["X-Exact"]) == ("1", "yes")
        status, headers, _ = get(base_url, "/guides/a")
        assert (status, headers["Location"]) == (301, "/guides/a/")
        status, headers, body = get(base_url, "/no/such/page")
        assert (status, body, headers["X-Everywhere"]) == (404, b"missing", "1")
        for path in ("/../outside.html", "/%2e%2e/outside.html", "/_redirects", "/guides/a/%00"):
            assert get(base_url, path)[0] == 404, path


def test_emulator_content_types_and_header_patterns(toy_site: tuple[Path, Path]) -> None:
    with serve_netlify(*toy_site) as base_url:
        status, headers, _ = get(base_url, "/assets/app.js")
        assert status == 200
        assert headers["Content-Type"] == "text/javascript; charset=utf-8"
        assert (headers["Cache-Control"], headers["X-Everywhere"]) == ("immutable", "1")
        assert "X-Exact" not in headers
        assert "Cache-Control" not in get(base_url, "/")[1]
        expected = {
            "/pagefind/wasm.en.pagefind": "application/octet-stream",
            "/pagefind/index/en_1.pf_index": "application/octet-stream",
            "/pagefind/pagefind.wasm": "application/wasm",
            "/feed.xml": "application/xml; charset=utf-8",
        }
        for path, content_type in expected.items():
            assert get(base_url, path)[1]["Content-Type"] == content_type, path


def test_emulator_applies_redirects_like_netlify(toy_site: tuple[Path, Path]) -> None:
    with serve_netlify(*toy_site) as base_url:
        for path, status, location in (
            ("/old-a", 301, "/guides/a/"),  # _redirects
            ("/legacy/b/", 302, "/guides/b/"),  # a splat
            ("/toml-old", 308, "/guides/a/"),  # [[redirects]] in netlify.toml
        ):
            answer, headers, _ = get(base_url, path)
            assert (answer, headers.get("Location")) == (status, location), path
        # an existing file shadows an unforced rule; a forced 200 rewrites
        assert get(base_url, "/guides/a/")[0] == 200
        status, _, body = get(base_url, "/forced")
        assert (status, body) == (200, b"guide a")


# --- the built site -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def published(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site as Netlify publishes it."""
    return site_under_test(request)


@pytest.fixture(scope="module")
def base_url(published: Path) -> Iterator[str]:
    """The published site served with netlify.toml's rules."""
    with serve_netlify(published) as url:
        yield url


@pytest.fixture(scope="module")
def browser(published: Path) -> Iterator[Any]:
    """One chromium for the whole module, started after the site is built."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def desktop(browser: Any) -> Iterator[Any]:
    """A desktop context that records CSP violations."""
    context = browser.new_context(viewport=DESKTOP)
    context.add_init_script(CSP_LISTENER)
    yield context
    context.close()


@pytest.fixture(scope="module")
def phone(browser: Any) -> Iterator[Any]:
    """A 375 px wide phone context."""
    context = browser.new_context(viewport=PHONE)
    yield context
    context.close()


class Tab:
    """A browser page that records console errors, uncaught exceptions and failed requests
    (and, in the desktop context, CSP violations), reused from one navigation to the next."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        self.page.on("requestfailed", self._request_failed)

    def _request_failed(self, request: Any) -> None:
        # ERR_ABORTED: a late fetch (the favicon) cut short by the next navigation of the tab
        if "ERR_ABORTED" not in (request.failure or ""):
            self.problems.append(f"request failed: {request.url} {request.failure}")

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def open(self, url: str, wait_until: str = "load") -> Any:
        """Navigate, forgetting what the previous page reported."""
        self.problems.clear()
        return self.page.goto(url, wait_until=wait_until)

    def csp_violations(self) -> list[str]:
        """The CSP violations the page reported (desktop context only)."""
        return [f"CSP violation: {v}" for v in self.page.evaluate("window.__cspViolations || []")]


@pytest.fixture(scope="module")
def tabs(desktop: Any, phone: Any) -> dict[str, Tab]:
    """One reused tab per device, for the page-by-page tests."""
    return {"desktop": Tab(desktop), "phone": Tab(phone)}


def html_of(published: Path, url_path: str) -> BeautifulSoup:
    """Parse the built file behind a URL path."""
    relative = url_path.lstrip("/")
    file = published / (relative + "index.html" if url_path.endswith("/") else relative)
    return BeautifulSoup(file.read_text("utf-8"), "html.parser")


def guide_paths(published: Path) -> list[str]:
    """The URL paths of the guide pages of the built site."""
    return sorted(
        "/" + path.parent.relative_to(published).as_posix() + "/"
        for path in published.glob("guides/*/index.html")
    )


def test_every_page_is_sent_with_the_security_headers(base_url: str) -> None:
    missing = {}
    for path in PAGES:
        status, headers, _ = get(base_url, path)
        assert status == 200, f"{path}: HTTP {status}"
        absent = [name for name in SECURITY_HEADERS if name.lower() not in map(str.lower, headers)]
        if absent:
            missing[path] = absent
    names = sorted({name for absent in missing.values() for name in absent})
    assert not missing, f"netlify.toml sends no {names} on {sorted(missing)}"


def test_every_redirect_of_the_built_site_lands_on_a_page(published: Path, base_url: str) -> None:
    redirects = published / "_redirects"
    if not redirects.is_file():
        pytest.skip("the built site has no _redirects (no guide has aliases yet)")
    broken = []
    for line in redirects.read_text("utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        source, target, *_ = line.split()
        status, headers, _ = get(base_url, source)
        landed = get(base_url, urlsplit(target).path)[0]
        if status != 301 or headers.get("Location") != target or landed != 200:
            broken.append(f"{source} -> HTTP {status} {headers.get('Location')} -> HTTP {landed}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_errors_under_its_csp(
    tabs: dict[str, Tab], base_url: str, path: str
) -> None:
    tab = tabs["desktop"]
    # the search page loads Pagefind's files after `load`; the other pages fetch nothing late
    response = tab.open(base_url + path, "networkidle" if path == "/search/" else "load")
    assert response is not None
    assert response.status == 200, f"{path}: HTTP {response.status}"
    problems = tab.problems + tab.csp_violations()
    assert not problems, f"{path}:\n  " + "\n  ".join(problems)
    assert "content-security-policy" in response.headers, (
        f"{path} is served without a Content-Security-Policy header (netlify.toml [[headers]])"
    )


def test_missing_page_gets_the_404_page_with_status_404(desktop: Any, base_url: str) -> None:
    page = desktop.new_page()
    try:
        response = page.goto(base_url + "/guides/no-such-guide/")
        assert response is not None and response.status == 404
        assert page.locator("h1").inner_text() == "Page not found"
    finally:
        page.close()


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_page_does_not_scroll_sideways(
    tabs: dict[str, Tab], base_url: str, device: str, path: str
) -> None:
    """No page is wider than the window (tables scroll inside their own box), on a 375 px
    phone above all, and at 1280 px."""
    viewport = PHONE if device == "phone" else DESKTOP
    tab = tabs[device]
    tab.open(base_url + path)
    scroll_width, inner_width = tab.page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert scroll_width <= inner_width == viewport["width"], (
        f"{path} at {viewport['width']}x{viewport['height']}: the page is {scroll_width}px "
        f"wide, the window {inner_width}px; sticking out: {tab.page.evaluate(OVERFLOWING)}"
    )


# --- search ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def search_case(published: Path) -> tuple[str, str, str]:
    """(term, guide URL path, verdict label): a word of one guide's title that no other guide's
    title has (preferably in no other guide's text at all), and that guide's verdict."""
    guides = {path: html_of(published, path) for path in guide_paths(published)}
    assert guides, "the built site has no guide pages"

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z]{5,}", text.lower())}

    titles = {path: words(doc.h1.get_text()) for path, doc in guides.items()}
    texts = {path: words(doc.get_text(" ")) for path, doc in guides.items()}
    best: tuple[int, str, str] | None = None
    for path, title in titles.items():
        for word in sorted(title):
            others = [p for p in guides if p != path]
            if any(word in titles[p] for p in others):
                continue
            rank = sum(word in texts[p] for p in others)
            if best is None or rank < best[0]:
                best = (rank, word, path)
    assert best is not None, f"every title word is shared between guides: {titles}"
    _, term, path = best
    verdict = guides[path].select_one(".verdict-line strong")
    assert verdict is not None, f"{path} has no .verdict-line strong"
    return term, path, verdict.get_text(" ", strip=True)


RESULT_LINKS = """() => [...document.querySelectorAll('.pagefind-ui__result-link')]
  .map((a) => new URL(a.href, location.href).pathname)"""


def assert_result_with_verdict(page: Any, case: tuple[str, str, str]) -> None:
    """Wait for the guide among Pagefind's results, then check the verdict it shows."""
    term, guide, verdict = case
    try:
        page.wait_for_function(f"() => ({RESULT_LINKS})().includes({guide!r})", timeout=15_000)
    except Exception as error:  # Playwright's TimeoutError
        raise AssertionError(
            f"search for {term!r} on {page.url}: {guide} is not among the Pagefind results "
            f"(.pagefind-ui__result-link) {page.evaluate(RESULT_LINKS)}"
        ) from error
    result = page.locator(".pagefind-ui__result").filter(
        has=page.locator(f'.pagefind-ui__result-link[href$="{guide}"]')
    )
    tags = result.first.locator('.pagefind-ui__result-tag[data-pagefind-ui-meta="verdict"]')
    assert tags.count(), f"search for {term!r}: the result for {guide} shows no verdict tag"
    shown = tags.first.inner_text()
    assert verdict.casefold() in shown.casefold(), (
        f"search for {term!r}: {guide} shows verdict {shown!r}, the page says {verdict!r}"
    )


def test_search_page_finds_a_guide_and_shows_its_verdict(
    desktop: Any, base_url: str, search_case: tuple[str, str, str]
) -> None:
    tab = Tab(desktop)
    try:
        response = tab.open(f"{base_url}/search/?q={search_case[0]}")
        assert response is not None and response.status == 200, "no /search/ page"
        assert_result_with_verdict(tab.page, search_case)
        problems = tab.problems + tab.csp_violations()
        assert not problems, f"/search/?q={search_case[0]}: {problems}"
    finally:
        tab.page.close()


def test_header_search_box_lands_on_the_results(
    desktop: Any, base_url: str, search_case: tuple[str, str, str]
) -> None:
    tab = Tab(desktop)
    page = tab.page
    try:
        tab.open(base_url + "/")
        box = page.locator("header form[role=search] input[name=q]")
        assert box.count() == 1, "the home page's header has no form[role=search] input[name=q]"
        box.fill(search_case[0])
        box.press("Enter")
        page.wait_for_url(re.compile(r"/search/\?"), timeout=10_000)
        split = urlsplit(page.url)
        assert split.path == "/search/"
        assert parse_qs(split.query).get("q") == [search_case[0]], page.url
        assert_result_with_verdict(page, search_case)
        problems = tab.problems + tab.csp_violations()
        assert not problems, problems
    finally:
        page.close()


def test_search_results_do_not_scroll_sideways_on_a_phone(
    phone: Any, base_url: str, search_case: tuple[str, str, str]
) -> None:
    page = phone.new_page()
    try:
        page.goto(f"{base_url}/search/?q={search_case[0]}")
        page.wait_for_selector(".pagefind-ui__result", timeout=15_000)
        page.wait_for_timeout(300)  # let the excerpts and sub-results render
        scroll_width, inner_width = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert scroll_width <= inner_width, (
            f"/search/?q={search_case[0]} at {PHONE['width']}x{PHONE['height']}: the page is "
            f"{scroll_width}px wide; sticking out: {page.evaluate(OVERFLOWING)}"
        )
    finally:
        page.close()


# --- screenshots ----------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    """The width and height in a PNG's IHDR chunk (asserting it is a PNG)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def photograph(browser: Any, url: str, stem: str) -> dict[tuple[str, str], bytes]:
    """Photograph a page whole at desktop and phone widths in the light and dark schemes into
    tests/screenshots/<stem>-<device>-<scheme>.png, checking each shot is of that scheme."""
    SCREENSHOTS.mkdir(exist_ok=True)
    shots: dict[tuple[str, str], bytes] = {}
    for device, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport=viewport, color_scheme=scheme)
            try:
                page = context.new_page()
                page.goto(url, wait_until="networkidle")
                background = page.evaluate(
                    """() => { for (const el of [document.body, document.documentElement]) {
                         const c = getComputedStyle(el).backgroundColor;
                         if (!/rgba\\(0, 0, 0, 0\\)|transparent/.test(c)) return c; }
                       return 'rgb(255, 255, 255)'; }"""
                )
                path = SCREENSHOTS / f"{stem}-{device}-{scheme}.png"
                page.screenshot(path=str(path), full_page=True)
            finally:
                context.close()
            data = path.read_bytes()
            width, height = png_size(data)
            assert width >= viewport["width"], f"{path.name} is {width}px wide"
            assert height >= viewport["height"], f"{path.name} is {height}px tall"
            assert len(data) > 20_000, f"{path.name} is only {len(data)} bytes"
            red, green, blue = (int(c) for c in re.findall(r"\d+", background)[:3])
            luminance = (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255
            assert (luminance < 0.5) == (scheme == "dark"), (
                f"{url} in the {scheme} scheme has background {background}"
            )
            shots[device, scheme] = data
    for device in ("desktop", "phone"):
        assert shots[device, "light"] != shots[device, "dark"], f"{device}: light == dark"
    return shots


def test_guide_screenshots_at_desktop_and_phone_in_light_and_dark(
    browser: Any, base_url: str, published: Path
) -> None:
    # the guide with the least HTML, to keep four full-page shots quick
    guide = min(guide_paths(published), key=lambda p: len(str(html_of(published, p))))
    photograph(browser, base_url + guide, "guide")
