"""A site indexed in several shards (content/site.yaml `search_shard_pages`) is searched whole:
in Chromium, the search page finds every guide, whichever shard holds it, and shows its verdict.
The bundle holds one full Pagefind bundle and, for each other shard, its index alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project, copy_project
from tests.netlify_server import serve_netlify
from tests.test_site_browser import Tab, assert_result_with_verdict, html_of, launch_chromium


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The seed project built with one guide page a shard."""
    project = copy_project(tmp_path_factory.mktemp("sharded") / "project")
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
    assert merged, "one shard only"  # four guides, one a shard: hashing may leave some empty
    assert (bundle / "pagefind-ui.js").is_file() and list(bundle.glob("wasm.*.pagefind"))
    for path in merged:
        shard = sharded.out / path.strip("/")
        assert (shard / "pagefind-entry.json").is_file() and list(shard.glob("*.pf_meta"))
        assert (shard / "index").is_dir() and (shard / "fragment").is_dir()
        assert not list(shard.glob("*.js")) and not list(shard.glob("wasm.*")), path


def test_the_search_page_finds_a_guide_of_every_shard(sharded: Project, desktop: Any) -> None:
    guides = guides_of(sharded.out)
    assert len(guides) == 4, guides
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


def test_a_site_within_one_shard_has_one_bundle(site: Path) -> None:
    bundle = Path(site) / "pagefind"
    assert json.loads((bundle / "shards.json").read_text("utf-8")) == []
    assert not (bundle / "shards").exists()
