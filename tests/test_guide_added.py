"""A guide added (or removed) renders again only the pages it changes.

A guide page's cache key holds the guides the page shows (newer, older, related, nearest) but
not every guide's path: the guide paths its prose links to are noted with the page, and the
page is rendered again when one of them comes or goes. So the editor's daily step, one new
guide, renders that guide and the pages that show it, and the site is still what a cold build
writes.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
import yaml

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.render import pages as render
from site_builder.render import site_pages
from tests.conftest import Project
from tests.test_incremental import add_guide, build_both, grow, outcome

LATER = "/guides/glm-5-2-probe-later/"


def guide_pages(project: Project) -> dict[str, bytes]:
    """Build with the cache, in one process; return every guide page's bytes."""
    report = build(BuildConfig.for_root(project.root, jobs=1), write=False)
    return {p.path: p.content for p in report.pages if p.path.startswith("guides/glm-5-2-")}


def rendered_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Return the list the path of each guide and tag page rendered from here on goes into."""
    rendered: list[str] = []

    def recording(module: Any, name: str) -> None:
        original = getattr(module, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            page = original(*args, **kwargs)
            rendered.append(page.path)
            return page

        monkeypatch.setattr(module, name, recorded)

    recording(render, "render_guide")
    recording(site_pages, "render_page")
    return rendered


@pytest.fixture
def grown(project: Project) -> Project:
    """The seed project with 12 probe guides."""
    grow(project, 12, seed=5)
    return project


def test_a_new_guide_renders_itself_and_the_pages_that_show_it(
    grown: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = guide_pages(grown)
    add_guide(grown, "probe-added", random.Random(11))
    rendered = rendered_paths(monkeypatch)
    after = guide_pages(grown)
    changed = {path for path, content in after.items() if before.get(path) != content}
    assert "guides/glm-5-2-probe-added/index.html" in changed
    assert 1 < len(changed) < len(after) - 4, "the new guide shows on some pages, not all"
    guides = [path for path in rendered if path.startswith("guides/glm-5-2-")]
    assert sorted(guides) == sorted(changed), "rendered again: exactly the pages that changed"
    front = yaml.safe_load(
        (grown.root / "content/probe-added.md").read_text("utf-8").split("---")[1]
    )
    tag_pages = {
        path for path in rendered if path.startswith("tags/") and path != "tags/index.html"
    }
    assert tag_pages == {f"tags/{tag}/index.html" for tag in front["tags"]}, "its tags' alone"
    monkeypatch.undo()
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)


def test_a_prose_link_follows_the_guide_it_names_as_it_comes_and_goes(grown: Project) -> None:
    # A vLLM guide: the new SGLang guide is none of its neighbours or related guides.
    prose = grown.root / "content" / "glm-5-2-vllm-decode-context-parallel.md"
    prose.write_text(prose.read_text("utf-8") + f"\nSee [the later guide]({LATER}).\n", "utf-8")
    path = "guides/glm-5-2-vllm-decode-context-parallel/index.html"
    canonical = re.compile(rf'href="https://[^"/]+{LATER}"'.encode())
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)
    page = {p.path: p.content for p in cached.pages}[path]
    assert canonical.search(page)  # not built here: its absolute canonical URL

    add_guide(grown, "probe-later", random.Random(3))
    record = grown.root / "records" / "probe-later.json"
    data = json.loads(record.read_text("utf-8"))
    data["checkedAt"] = "2026-01-05T09:00:00Z"  # the oldest guide: no neighbour of that page
    record.write_text(json.dumps(data, indent=2), "utf-8")
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)
    page = {p.path: p.content for p in cached.pages}[path]
    assert page.count(f'href="{LATER}"'.encode()) == 1, "the prose link alone names it"
    assert not canonical.search(page)  # built here now: site-relative

    (grown.root / "content" / "probe-later.md").unlink()
    (grown.root / "records" / "probe-later.json").unlink()
    cached, cold = build_both(grown.root)
    assert outcome(cached) == outcome(cold)
    assert canonical.search({p.path: p.content for p in cached.pages}[path])
