"""The editor's Markdown: raw HTML is shown as text, and only safe targets become links."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from site_builder.present.ids import PageIds
from site_builder.render.markdown import is_safe_target, render_markdown


def parsed(text: str) -> BeautifulSoup:
    """Render Markdown and parse the HTML."""
    return BeautifulSoup(render_markdown(text).html, "html.parser")


def test_raw_html_is_escaped_not_emitted() -> None:
    doc = parsed('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">\n')
    assert doc.find("script") is None
    assert doc.find("img") is None
    assert "<script>alert(1)</script>" in doc.get_text()


@pytest.mark.parametrize(
    "target",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "vbscript:x",
        "data:text/html,x",
        "file:///etc/passwd",
        "//evil.example/x",
        "mailto:a@b.c",
        "ftp://x.example/",
    ],
)
def test_unsafe_targets_are_not_links(target: str) -> None:
    doc = parsed(f"[click]({target}) ![img]({target}) <{target}>")
    assert doc.find("a") is None
    assert doc.find("img") is None
    assert not is_safe_target(target)


@pytest.mark.parametrize(
    "target", ["https://example.org/x", "http://a.b/", "/guides/x/", "#verdict"]
)
def test_http_site_and_fragment_targets_are_links(target: str) -> None:
    assert parsed(f"[ok]({target})").a["href"] == target


def test_headings_get_anchors_and_feed_the_table_of_contents() -> None:
    rendered = render_markdown("## What *this* answers\n\ntext\n\n### Detail\n")
    assert [(h.anchor, h.text) for h in rendered.headings] == [
        ("what-this-answers", "What this answers")
    ]
    assert '<h3 id="detail">' in rendered.html


def test_tables_render_with_a_header_row() -> None:
    doc = parsed("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert [th.text for th in doc.select("thead th")] == ["a", "b"]


def test_prose_headings_never_reuse_the_pages_own_ids() -> None:
    rendered = render_markdown(
        "## Sources\n\n## Shape rows\n", ids=PageIds({"sources", "shape-rows"})
    )
    assert [h.anchor for h in rendered.headings] == ["sources-2", "shape-rows-2"]


def test_images_become_links_to_the_image_named_by_their_alt_text() -> None:
    doc = parsed(
        "See ![GPU *memory* chart](https://example.org/a.png) and ![](https://e.org/b.png)"
    )
    assert doc.find("img") is None
    links = [(a["href"], a.get_text()) for a in doc.find_all("a")]
    assert links == [
        ("https://example.org/a.png", "Image: GPU memory chart"),
        ("https://e.org/b.png", "Image: https://e.org/b.png"),
    ]
