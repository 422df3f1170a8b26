"""Pagefind starts indexing as soon as the guide pages are rendered, before the pages that
list them (it indexes the pages marking `data-pagefind-body`: the guide pages), and still
indexes every marked page when a template marks another page too. The build's stage times
add up: a stage inside another is timed apart."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import pytest

from site_builder import pipeline
from site_builder.config import BuildConfig
from site_builder.render import site_pages
from site_builder.runtime import stopwatch
from site_builder.runtime.stopwatch import Stopwatch
from tests.conftest import Project, tree_digest


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Record each search index started (with the paths it was given) and each tag page
    rendered, in order."""
    seen: list[tuple[str, Any]] = []
    search_index, tag_pages = pipeline.SearchIndex, site_pages._tag_pages

    def started(pages: list[Any], *args: Any, **kwargs: Any) -> Any:
        seen.append(("search", sorted(page.path for page in pages)))
        return search_index(pages, *args, **kwargs)

    def listed(*args: Any, **kwargs: Any) -> Any:
        seen.append(("tag pages", None))
        return tag_pages(*args, **kwargs)

    monkeypatch.setattr(pipeline, "SearchIndex", started)
    monkeypatch.setattr(site_pages, "_tag_pages", listed)
    return seen


def test_the_search_index_starts_before_the_listing_pages(
    project: Project, events: list[tuple[str, Any]]
) -> None:
    report = pipeline.build(BuildConfig.for_root(project.root))
    assert [kind for kind, _ in events] == ["search", "tag pages"]
    paths = [page.path for page in report.pages]
    guide_pages = sorted(p for p in paths if p.startswith("guides/") and p.count("/") == 2)
    assert len(guide_pages) == report.guides == 4
    assert events[0][1] == guide_pages  # the guide pages alone
    assert (project.out / "pagefind" / "pagefind.js").is_file()


def test_a_template_marking_another_page_has_it_indexed_too(
    project: Project, events: list[tuple[str, Any]]
) -> None:
    template = project.root / "templates" / "tags.html"
    html = template.read_text("utf-8")
    marked = html.replace("{% block main %}", "{% block main %}<div data-pagefind-body>", 1)
    marked = marked.replace("{% endblock %}", "</div>{% endblock %}", 1)
    assert marked != html
    template.write_text(marked, "utf-8")
    pipeline.build(BuildConfig.for_root(project.root))
    searched = [paths for kind, paths in events if kind == "search"]
    assert "tags/index.html" in searched[-1]  # the index the site was given
    fragments = (project.out / "pagefind" / "fragment").glob("*.pf_fragment")
    urls = [json.loads(gzip.decompress(f.read_bytes())[12:])["url"] for f in fragments]
    assert "/tags/" in urls and len(urls) == 5  # the four guides and the tags page
    cold = project.root / "cold"
    pipeline.build(BuildConfig.for_root(project.root, cold, cache=False, jobs=1))
    assert tree_digest(project.out) == tree_digest(cold)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """A clock that reads what the test sets."""
    now = [0.0]
    monkeypatch.setattr(stopwatch.time, "perf_counter", lambda: now[0])
    yield now


def test_a_stage_inside_another_is_timed_apart(clock: list[float]) -> None:
    heard: list[str] = []
    watch = Stopwatch(heard.append)
    with watch.stage("render"):
        clock[0] = 2.0
        with watch.stage("search index"):
            clock[0] = 2.5
        clock[0] = 4.0
    with watch.stage("check"):
        clock[0] = 5.0
    assert watch.seconds == {"render": 3.5, "search index": 0.5, "check": 1.0}
    assert list(watch.seconds) == ["render", "search index", "check"]
    assert heard == ["render", "search index", "render", "check"]
