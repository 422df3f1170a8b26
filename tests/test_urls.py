"""One normal form per page: scheme, host, case, slash, query, fragment and index.html agree."""

from __future__ import annotations

import pytest

from site_builder.urls import canonical_url, page_key

BASE = "https://glm52.ai"


@pytest.mark.parametrize(
    "url",
    [
        "https://glm52.ai/guides/x/",
        "https://glm52.ai/guides/x",
        "http://glm52.ai/guides/x/",
        "https://www.glm52.ai/guides/x/",
        "https://GLM52.AI/Guides/X/",
        "https://glm52.ai:443/guides/x/",
        "/guides/x",
        "/guides/x/",
        "/guides/x/index.html",
        "/guides/x/?utm_source=feed",
        "/guides/x/#verdict",
        "/guides//x/",
        "/guides/y/../x/",
        "/guides/%78/",
    ],
)
def test_every_spelling_of_a_page_has_one_key(url: str) -> None:
    assert page_key(url, BASE) == "/guides/x/"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("/", "/"),
        ("https://glm52.ai", "/"),
        ("/index.html", "/"),
        ("/sitemap.xml", "/sitemap.xml"),
        ("/404.html", "/404.html"),
    ],
)
def test_site_root_and_files_keep_their_form(url: str, key: str) -> None:
    assert page_key(url, BASE) == key


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/guides/x/",
        "ftp://glm52.ai/x",
        "javascript:alert(1)",
        "guides/x/",
        "mailto:a@glm52.ai",
        "https://[::1",
    ],
)
def test_other_sites_and_non_urls_have_no_key(url: str) -> None:
    assert page_key(url, BASE) is None


def test_canonical_url_is_absolute() -> None:
    assert canonical_url("/guides/x/", BASE) == "https://glm52.ai/guides/x/"
