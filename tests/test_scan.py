"""Reading back a built page (canonical, links, ids, visible text), and timing the build."""

from __future__ import annotations

import re

from site_builder.models import Page
from site_builder.scan import scan_pages, scan_with_text
from tests.conftest import Project

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Head title</title>
<link rel="canonical" href="https://glm52.ai/guides/x/">
<link rel="stylesheet" href="/assets/style.1.css">
<meta property="og:url" content="https://glm52.ai/guides/x/">
<meta name="robots" content="noindex, follow">
<script src="/assets/search.js"></script>
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
    [scan] = scan_pages([Page("guides/x/index.html", PAGE.encode("utf-8"))])
    assert scan.key == "/guides/x/"
    assert scan.canonical == "https://glm52.ai/guides/x/"
    assert scan.og_url == scan.canonical
    assert scan.noindex is True
    assert scan.links == (
        "/assets/style.1.css",
        "/assets/search.js",
        "#main",
        "/img/a.png",
        "/search/",
        "https://example.org/x?a=1&b=2",
        "/guides/y/#verdict",
        "/tags/",
    )
    assert scan.ids == frozenset({"top", "main", "t", "q"})
    assert scan.duplicate_ids == ("t",)
    # Only <main>'s text, entities decoded; no script, style, template or SVG title text.
    page = Page("guides/x/index.html", PAGE.encode("utf-8"))
    assert scan_with_text(page) == (
        scan,
        "Tokens & GPUs Before after <b> bar 12 out y duplicate id",
    )


def test_only_html_files_are_scanned_in_path_order() -> None:
    pages = [
        Page("b/index.html", b"<main><p>b</p></main>"),
        Page("sitemap.xml", b"<urlset/>"),
        Page("a.html", b"<main><p>a</p></main>"),
    ]
    assert [scan.path for scan in scan_pages(pages)] == ["a.html", "b/index.html"]


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
