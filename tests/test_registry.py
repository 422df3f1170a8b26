"""--import-sitemap through the real CLI: merge the live sitemap, keep every entry, refuse bad XML."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import FIXTURES, Project

SITEMAPS = FIXTURES / "sitemaps"
INDEX = SITEMAPS / "sitemap_index.xml"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
REGISTRY = "content/registry.json"
KEPT = ("url", "title", "reader_job", "published")
EXPERT = "https://glm52.ai/guides/glm-5-2-expert-parallelism/"
SUMMARY = re.compile(r"(\d+) URLs read, (\d+) added, .*?(\d+) on other hosts ignored")
PROBLEM = re.compile(r"^(?P<path>[^:]+): (?P<location>[^:]+): (?P<message>.+)$")
UNCHANGED = "Aborted: the registry is unchanged."


def normal(url: str) -> str | None:
    """Our own normal form: the lower-case path with a trailing slash, or None off the site."""
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or parts.hostname not in {"glm52.ai", "www.glm52.ai"}:
        return None
    path = (parts.path or "/").lower().removesuffix("index.html")
    return path if path.endswith("/") else path + "/"


def sitemap_urls(path: Path) -> list[tuple[str, str]]:
    """Every (loc, lastmod) of a sitemap, following index entries to the files beside it."""
    root = ET.parse(path).getroot()
    if root.tag == NS + "sitemapindex":
        names = [loc.text.strip().rsplit("/", 1)[-1] for loc in root.iter(NS + "loc")]
        return [url for name in names for url in sitemap_urls(path.parent / name)]
    assert root.tag == NS + "urlset", path
    return [
        (url.findtext(NS + "loc", "").strip(), url.findtext(NS + "lastmod", "").strip())
        for url in root.iter(NS + "url")
    ]


def pages(project: Project) -> list[dict[str, Any]]:
    """The registry's pages as the file now holds them."""
    return json.loads((project.root / REGISTRY).read_text("utf-8"))["pages"]


def by_key(project: Project) -> dict[str, dict[str, Any]]:
    """The registry's pages by our normal form (each key once)."""
    entries = pages(project)
    keyed = {normal(page["url"]): page for page in entries}
    assert len(keyed) == len(entries), "two registry entries share a normal form"
    return keyed


def urls_of(entries: dict[str, dict[str, Any]]) -> set[str]:
    """The registry URLs exactly as spelled."""
    return {page["url"] for page in entries.values()}


def import_ok(project: Project, path: Path) -> tuple[int, int, int]:
    """Import a sitemap expecting success; return the (read, added, ignored) counts printed."""
    result = project.run("--import-sitemap", str(path))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    match = SUMMARY.search(result.stdout)
    assert match, f"no summary line: {result.stdout!r}"
    read, added, ignored = map(int, match.groups())
    return read, added, ignored


def assert_refused(result: subprocess.CompletedProcess[str], name: str) -> str:
    """Exit 1, one `path: location: message` line naming the file, registry untouched."""
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    *problems, summary = result.stderr.splitlines()
    assert summary == UNCHANGED
    assert len(problems) == 1, problems
    match = PROBLEM.match(problems[0])
    assert match, f"not `path: location: message`: {problems[0]!r}"
    assert re.fullmatch(name, Path(match["path"]).name), problems[0]
    return problems[0]


@pytest.fixture
def sitemap() -> list[tuple[str, str]]:
    """Every URL of the nested fixture index, read independently of site_builder."""
    urls = sitemap_urls(INDEX)
    keys = [normal(loc) for loc, _ in urls]
    on_host = [key for key in keys if key]
    assert len(urls) >= 110 and keys.count(None) == 2
    assert len(on_host) > len(set(on_host)), "the fixture should repeat a URL"
    return urls


def test_importing_the_nested_index_adds_every_new_on_host_url_exactly_once(
    project: Project, sitemap: list[tuple[str, str]]
) -> None:
    before = by_key(project)
    keys = {normal(loc) for loc, _ in sitemap} - {None}
    assert set(before) <= keys, "every registered page is in the fixture sitemap"
    respelled = [loc for loc, _ in sitemap if normal(loc) in before and loc not in urls_of(before)]
    assert len(respelled) >= 2, respelled
    new = keys - set(before)

    read, added, ignored = import_ok(project, INDEX)

    after = [normal(page["url"]) for page in pages(project)]
    assert len(after) == len(before) + len(new)
    assert Counter(after) == Counter(set(before) | new)
    assert (read, added, ignored) == (len(sitemap), len(new), 2)


def test_existing_entries_keep_url_title_reader_job_and_published_and_get_the_new_lastmod(
    project: Project, sitemap: list[tuple[str, str]]
) -> None:
    before = by_key(project)
    assert before[normal(EXPERT)]["lastmod"] == ""
    lastmods = {normal(loc): lastmod for loc, lastmod in sitemap if lastmod}

    import_ok(project, INDEX)

    after = by_key(project)
    for key, old in before.items():
        assert {field: after[key][field] for field in KEPT} == {f: old[f] for f in KEPT}
        assert after[key]["lastmod"] == lastmods.get(key, old["lastmod"]), key
    assert after[normal(EXPERT)]["lastmod"] == "2026-09-02T08:15:00+00:00"
    for key in set(after) - set(before):
        assert after[key]["lastmod"] == lastmods.get(key, ""), key


def test_the_registry_is_sorted_and_importing_the_same_sitemap_again_is_byte_identical(
    project: Project,
) -> None:
    import_ok(project, INDEX)
    first = (project.root / REGISTRY).read_bytes()
    keys = [normal(page["url"]) for page in pages(project)]
    assert keys == sorted(keys)

    _, added, _ = import_ok(project, INDEX)

    assert added == 0
    assert (project.root / REGISTRY).read_bytes() == first


def test_after_an_import_with_a_legacy_origin_the_sitemap_lists_every_registry_url_once(
    project: Project,
) -> None:
    import_ok(project, INDEX)
    settings = project.root / "content" / "site.yaml"
    settings.write_text(settings.read_text("utf-8") + "legacy_origin: https://old.glm52.example\n")

    result = project.run("--production")

    assert result.returncode == 0, result.stderr
    tree = ET.parse(project.out / "sitemap.xml")
    listed = Counter(normal(loc.text or "") for loc in tree.iter(NS + "loc"))
    for page in pages(project):
        assert listed[normal(page["url"])] == 1, page["url"]
    assert max(listed.values()) == 1


def _malformed_location() -> str:
    """Where expat stops in broken.xml, as the CLI should say it (columns counted from 1)."""
    with pytest.raises(ET.ParseError) as error:
        ET.parse(SITEMAPS / "broken.xml")
    line, column = error.value.position
    return f"line {line} column {column + 1}"


@pytest.mark.parametrize(
    ("fixture", "named", "location", "fragment"),
    [
        ("broken.xml", "broken.xml", _malformed_location(), "malformed XML"),
        ("entities.xml", "entities.xml", None, "DTD"),
        ("not-a-sitemap.xml", "not-a-sitemap.xml", None, "<rss>"),
        ("index-missing-child.xml", "index-missing-child.xml", None, "sitemap-guides-3.xml"),
        ("loop-a.xml", r"loop-[ab]\.xml", None, "loop"),
    ],
)
def test_each_broken_sitemap_exits_1_with_one_line_naming_its_file_and_leaves_the_registry(
    project: Project, fixture: str, named: str, location: str | None, fragment: str
) -> None:
    before = (project.root / REGISTRY).read_bytes()

    result = project.run("--import-sitemap", str(SITEMAPS / fixture))

    line = assert_refused(result, named)
    match = PROBLEM.match(line)
    assert match and fragment in match["message"], line
    assert location is None or match["location"] == location, line
    assert result.stdout == ""
    assert (project.root / REGISTRY).read_bytes() == before


def test_a_gzipped_urlset_imports_the_same_urls_as_the_plain_file(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    plain = SITEMAPS / "sitemap-guides-2.xml"
    gzipped = tmp_path / "sitemap-guides-2.xml.gz"
    gzipped.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    one, two = make_project(name="plain"), make_project(name="gzipped")

    counts = import_ok(one, plain)

    assert import_ok(two, gzipped) == counts
    assert counts[1] > 0
    assert (two.root / REGISTRY).read_bytes() == (one.root / REGISTRY).read_bytes()


def test_a_corrupt_gzip_sitemap_is_one_error_line_not_a_traceback(
    project: Project, tmp_path: Path
) -> None:
    corrupt = tmp_path / "sitemap.xml.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07" + bytes(16))
    before = (project.root / REGISTRY).read_bytes()

    result = project.run("--import-sitemap", str(corrupt))

    assert_refused(result, r"sitemap\.xml\.gz")
    assert (project.root / REGISTRY).read_bytes() == before


def test_a_url_of_the_protocols_maximum_length_is_imported_or_refused_in_one_line(
    project: Project, tmp_path: Path
) -> None:
    url = "https://glm52.ai/guides/" + "a" * (2048 - 25) + "/"
    assert len(url) == 2048
    path = tmp_path / "sitemap.xml"
    path.write_text(f'<urlset xmlns="{NS[1:-1]}"><url><loc>{url}</loc></url></urlset>\n', "utf-8")
    before = (project.root / REGISTRY).read_bytes()

    result = project.run("--import-sitemap", str(path))

    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    assert url in {page["url"] for page in pages(project)}
    longer = tmp_path / "longer.xml"
    longer.write_text(path.read_text("utf-8").replace(url, url[:-1] + "b/"), "utf-8")
    longer.write_text(longer.read_text("utf-8").replace("/guides/", "/guides/x"), "utf-8")
    imported = (project.root / REGISTRY).read_bytes()
    assert_refused(project.run("--import-sitemap", str(longer)), r"longer\.xml")
    assert (project.root / REGISTRY).read_bytes() == imported != before


def test_urls_spelled_otherwise_are_listed_with_the_registry_url_they_were_merged_into(
    project: Project, sitemap: list[tuple[str, str]]
) -> None:
    before = by_key(project)
    respelled = {
        loc: before[normal(loc)]["url"]
        for loc, _ in sitemap
        if normal(loc) in before and loc not in urls_of(before)
    }
    assert {"http://www.glm52.ai/guides/glm-5-2-expert-parallelism/": EXPERT}.items() <= (
        respelled.items()
    ), "www. host and http"

    result = project.run("--import-sitemap", str(INDEX))

    assert result.returncode == 0, result.stderr
    merged = dict(re.findall(r"^  (\S+) -> (\S+)$", result.stdout, re.MULTILINE))
    assert respelled.items() <= merged.items()
    # A page the sitemap lists twice, spelled two ways, is merged into its first spelling.
    repeated = {loc: url for loc, url in merged.items() if loc not in respelled}
    assert repeated and all(normal(loc) == normal(url) for loc, url in repeated.items())
    assert f"{len(merged)} spelled differently merged" in result.stdout
    kept = urls_of(by_key(project))
    assert set(merged.values()) <= kept and not set(merged) & kept, "the registry's spelling wins"


def test_a_lastmod_crawlers_cannot_read_is_imported_without_it_and_listed(
    project: Project, tmp_path: Path
) -> None:
    good, bad = "https://glm52.ai/guides/dated/", "https://glm52.ai/guides/undated/"
    path = tmp_path / "sitemap.xml"
    path.write_text(
        f'<urlset xmlns="{NS[1:-1]}">'
        f"<url><loc>{good}</loc><lastmod>2026-11-30T08:15:00+00:00</lastmod></url>"
        f"<url><loc>{bad}</loc><lastmod>yesterday</lastmod></url>"
        f"<url><loc>{EXPERT}</loc><lastmod>2026-02-30</lastmod></url>"
        "</urlset>\n",
        "utf-8",
    )
    before = by_key(project)[normal(EXPERT)]

    result = project.run("--import-sitemap", str(path))

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert f"  {bad}: 'yesterday'" in result.stdout.splitlines()
    assert f"  {EXPERT}: '2026-02-30'" in result.stdout.splitlines()
    after = by_key(project)
    assert after[normal(good)]["lastmod"] == "2026-11-30T08:15:00+00:00"
    assert after[normal(bad)]["lastmod"] == ""
    assert after[normal(EXPERT)] == before, "a known page keeps the lastmod it had"
    assert project.run().returncode == 0  # and the registry it wrote builds


@pytest.mark.parametrize("lastmod", ["yesterday", "2026-02-30", "2026-11-30 08:15", "30/11/2026"])
def test_a_registry_lastmod_that_is_no_sitemap_date_is_one_input_error(
    project: Project, lastmod: str
) -> None:
    registry = json.loads((project.root / REGISTRY).read_text("utf-8"))
    registry["pages"][2]["lastmod"] = lastmod
    (project.root / REGISTRY).write_text(json.dumps(registry, indent=2), "utf-8")

    result = project.run()

    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    problems = [line for line in result.stderr.splitlines() if line.startswith(REGISTRY)]
    assert problems == [
        f"{REGISTRY}: pages.2.lastmod: Value error, {lastmod!r} is not a sitemap date or time "
        "(2026-11-30 or 2026-11-30T08:15:00+00:00)"
    ]
    assert not (project.root / "_site").exists()
