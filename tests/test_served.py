"""The preview's in-memory site answers exactly the files a build made, by request path."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from site_builder.model.models import Page
from site_builder.preview.builds import PreviewState
from site_builder.preview.served import ServedSite

SITE = ServedSite(
    [
        Page("index.html", b"home"),
        Page("404.html", b"missing"),
        Page("guides/one/index.html", b"one"),
        Page("assets/site.css", b"css"),
        Page("pagefind/pagefind.js", b"old index"),
        Page("tags/empty/.keep", b""),
    ]
)


@pytest.mark.parametrize(
    ("request_path", "answer"),
    [
        ("/", ("index.html", HTTPStatus.OK)),
        ("/index.html", ("index.html", HTTPStatus.OK)),
        ("/guides/one/", ("guides/one/index.html", HTTPStatus.OK)),
        ("/guides//one/", ("guides/one/index.html", HTTPStatus.OK)),
        ("/guides/%6fne/", ("guides/one/index.html", HTTPStatus.OK)),
        ("/guides/one", (None, HTTPStatus.MOVED_PERMANENTLY)),
        ("/guides", (None, HTTPStatus.MOVED_PERMANENTLY)),
        ("/tags/empty/", (None, HTTPStatus.NOT_FOUND)),
        ("/guides/two/", (None, HTTPStatus.NOT_FOUND)),
        ("/guides/one/index.htm", (None, HTTPStatus.NOT_FOUND)),
        ("/../etc/passwd", (None, HTTPStatus.FORBIDDEN)),
        ("/guides/%2e%2e/%2e%2e/etc/passwd", (None, HTTPStatus.FORBIDDEN)),
        ("/guides/./one/", (None, HTTPStatus.FORBIDDEN)),
        ("/guides%5cone", (None, HTTPStatus.BAD_REQUEST)),
        ("/index.html%00", (None, HTTPStatus.BAD_REQUEST)),
        ("/%ff", (None, HTTPStatus.BAD_REQUEST)),
        ("guides/one/", (None, HTTPStatus.BAD_REQUEST)),
    ],
)
def test_a_request_path_maps_to_a_file_of_the_build_or_a_refusal(
    request_path: str, answer: tuple[str | None, HTTPStatus]
) -> None:
    assert SITE.resolve(request_path) == answer


def test_a_new_search_index_replaces_only_the_bundle() -> None:
    indexed = SITE.with_files([Page("pagefind/pagefind.js", b"new index")], "pagefind")
    assert indexed.files["pagefind/pagefind.js"] == b"new index"
    assert {path: body for path, body in indexed.files.items() if "pagefind" not in path} == {
        path: body for path, body in SITE.files.items() if "pagefind" not in path
    }
    assert SITE.files["pagefind/pagefind.js"] == b"old index", "the served site is unchanged"


def test_a_replaced_site_keeps_only_its_assets_and_search_index_for_pages_still_loading() -> None:
    state = PreviewState()
    state.publish(SITE, ())
    state.publish(ServedSite([Page("index.html", b"new")]), ())
    [replaced] = state.recent()
    assert replaced.files == {"assets/site.css": b"css", "pagefind/pagefind.js": b"old index"}
    assert replaced.resolve("/assets/site.css") == ("assets/site.css", HTTPStatus.OK)


def test_a_new_search_index_keeps_the_last_one_for_tabs_reading_it_and_wakes_every_stream() -> None:
    # A tab's Pagefind reads its index's files a few at a time: those of the index it started
    # on are still served (their names are their contents' hash), and its stream is woken.
    state = PreviewState()
    state.publish(SITE, ())
    version, indexed = state.version, state.indexed
    new_index = SITE.with_files([Page("pagefind/pagefind.en_new.pf_meta", b"new")], "pagefind")
    state.publish_search(new_index)
    assert state.wait(version, indexed, timeout=0) == (version, indexed + 1)
    assert state.site is new_index
    assert state.site.file("pagefind/pagefind.js") is None
    [replaced] = state.recent()
    assert replaced.file("pagefind/pagefind.js") == b"old index"


def test_a_rebuild_serves_the_last_search_index_without_copying_it() -> None:
    bundle = SITE.under("pagefind")
    rebuilt = ServedSite(
        [Page("index.html", b"new home"), Page("pagefind/stale.js", b"not served")],
        {"pagefind": bundle},
    )
    assert rebuilt.under("pagefind") is bundle
    assert rebuilt.resolve("/pagefind/pagefind.js") == ("pagefind/pagefind.js", HTTPStatus.OK)
    assert rebuilt.file("pagefind/pagefind.js") == b"old index"
    assert rebuilt.resolve("/pagefind") == (None, HTTPStatus.MOVED_PERMANENTLY)
    assert rebuilt.resolve("/pagefind/stale.js") == (None, HTTPStatus.NOT_FOUND)
    assert rebuilt.resolve("/") == ("index.html", HTTPStatus.OK)
    assert rebuilt.files == {"index.html": b"new home", "pagefind/pagefind.js": b"old index"}
    indexed = rebuilt.with_files([Page("pagefind/pagefind.js", b"new index")], "pagefind")
    assert indexed.files == {"index.html": b"new home", "pagefind/pagefind.js": b"new index"}
    assert rebuilt.file("pagefind/pagefind.js") == b"old index", "the served site is unchanged"
