"""Reading back a built page (canonical, links, ids, visible text), and timing the build."""

from __future__ import annotations

import re

from site_builder.model.models import Page
from site_builder.render.scan import scan_pages, scan_with_text
from tests.conftest import Project

BASE_URL = "https://glm52.ai"
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Head title</title>
<link rel="canonical" href="https://glm52.ai/guides/x/">
<link rel="stylesheet" href="/assets/style.1.css">
<meta property="og:url" content="https://glm52.ai/guides/x/">
<meta name="robots" content="noindex, follow">
<script src="/assets/search.js"></script>
<link rel="help" href="#nowhere"><link rel="author" href="mailto:x@example.org">
<link rel="prev" href="https://GLM52.ai/guides/z/#a"><link rel="next" href="http://[::1">
</head><body>
<a id="top" href="#main">Skip</a>
<main id="main"><h1 id="t">Tokens &amp; <em>GPUs</em></h1>
<p>Before<script>var hidden = 1;</script><style>p{}</style> after &lt;b&gt;</p>
<svg role="img"><title>Chart title</title><text>bar 12</text></svg>
<template><p>never shown</p></template>
<img src="/img/a.png" alt=""><form action="/search/"><input id="q" disabled></form>
<a href="https://example.org/x?a=1&amp;b=2">out</a><a href="/guides/y/#verdict">y</a>
<p id="t">duplicate id</p></main>
<footer><a href="/tags/">Tags</a> footer text</footer></body></html>
"""


def test_a_page_scan_reads_what_the_page_declares() -> None:
    [scan] = scan_pages([Page("guides/x/index.html", PAGE.encode("utf-8"))], BASE_URL)
    assert scan.key == "/guides/x/"
    assert scan.canonical == "https://glm52.ai/guides/x/"
    assert scan.og_url == scan.canonical
    assert scan.noindex is True
    # What the page alone shows (its own anchors, other sites, malformed links) is judged
    # here, in href order; links to the site's paths are left for the site checks.
    assert scan.link_problems == (
        ("#nowhere", "points at #nowhere, which /guides/x/ does not have"),
        ("http://[::1", "is not a valid URL"),
        ("mailto:x@example.org", "is neither an http(s) URL nor a site path"),
    )
    assert scan.site_links == (
        ("/assets/search.js", "/assets/search.js", "/assets/search.js", ""),
        ("/assets/style.1.css", "/assets/style.1.css", "/assets/style.1.css", ""),
        ("/guides/y/#verdict", "/guides/y/", "/guides/y/", "verdict"),
        ("/img/a.png", "/img/a.png", "/img/a.png", ""),
        ("/search/", "/search/", "/search/", ""),
        ("/tags/", "/tags/", "/tags/", ""),
        ("https://GLM52.ai/guides/z/#a", "/guides/z/", "/guides/z/", "a"),
    )  # "#main" is an id of the page, https://example.org/ another site: nothing to check
    assert scan.ids == frozenset({"top", "main", "t", "q"})
    assert scan.duplicate_ids == ("t",)
    # Only <main>'s text, entities decoded; no script, style, template or SVG title text.
    page = Page("guides/x/index.html", PAGE.encode("utf-8"))
    assert scan_with_text(page, BASE_URL) == (
        scan,
        "Tokens & GPUs Before after <b> bar 12 out y duplicate id",
    )


def test_only_html_files_are_scanned_in_path_order() -> None:
    pages = [
        Page("b/index.html", b"<main><p>b</p></main>"),
        Page("sitemap.xml", b"<urlset/>"),
        Page("a.html", b"<main><p>a</p></main>"),
    ]
    assert [scan.path for scan in scan_pages(pages, BASE_URL)] == ["a.html", "b/index.html"]


def test_timings_name_every_stage_of_a_build(project: Project) -> None:
    result = project.run("--timings")
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("Stage times:")]
    stages = re.findall(r"([a-z ]+) (\d+\.\d\d) s", line.removeprefix("Stage times:"))
    assert [name.strip() for name, _ in stages] == [
        "unchanged",
        "load",
        "validate",
        "verify",
        "render",
        "search index",
        "check",
        "write",
        "total",
    ]
    assert float(stages[-1][1]) >= max(float(seconds) for _, seconds in stages[:-1])
