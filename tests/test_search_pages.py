"""Pagefind reads a cut of each guide page: its `data-pagefind-body` without what it ignores.

The cut is made where the page is rendered and kept in the build cache; the search index made
from the cuts is byte-identical to the one Pagefind makes from the whole pages, so readers
find exactly what they found before, and a cut that is missing or damaged in the cache means
Pagefind reads the whole page instead."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from site_builder.cache.store import BuildCache
from site_builder.model.models import Page
from site_builder.output import search
from site_builder.render.scan import _search_page
from site_builder.render.stored_pages import SEARCH_PAGE, search_page, search_page_key
from site_builder.runtime.workdirs import search_folder
from tests.conftest import Project, copy_project, tree_digest

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
EXTRA_PROSE = (
    "\n## A diagram and a command\n\n![The daemon and its clients](images/flow.svg)\n\n"
    "```bash\npython -m sglang.launch_server --model-path zai-org/GLM-5.2-FP8\n```\n"
)
NESTED = b"""<!DOCTYPE html><html lang="en"><head><title>Nested &amp; odd</title>
<link rel="stylesheet" href="/assets/style.css"></head><body><header>Site chrome</header>
<main><article data-pagefind-body><h1 id="top">Nested <em>ignores</em></h1>
<p>Kept words before <span data-pagefind-ignore>hidden <code data-pagefind-ignore>deeper
</code> outer</span> and after.</p><dl><dt>Checked</dt><dd><time>2026-08-24</time></dd></dl>
<nav data-pagefind-ignore><ol><li data-pagefind-ignore>contents</li></ol></nav>
<p><strong data-pagefind-meta="verdict">Pilot only</strong> <img src="/a.png" alt="A chart"></p>
<h2 id="table">A table</h2><table><tr><th>Mode</th><td>daemon <b>&lt;off&gt;</b></td></tr></table>
<p>See <a href="/guides/x/" class="ref">the <span class="num">other</span> guide</a> and
<span id="note" class="num">a note</span>, <em title="a" lang="fr">une</em> <code>tp=8</code>.</p>
</article></main><footer>More chrome</footer></body></html>
"""


def bundle_files(bundle: Path) -> dict[str, bytes]:
    """The files of a Pagefind bundle that hold what it found: the index, fragments, filters."""
    parts = ("fragment/", "index/", "filter/", "pagefind-entry.json")
    found = {path.relative_to(bundle).as_posix(): path for path in bundle.rglob("*")}
    return {name: path.read_bytes() for name, path in found.items() if name.startswith(parts)}


def pagefind(site: Path, bundle: Path, language: str = "en") -> dict[str, bytes]:
    """Run Pagefind itself over `site`'s pages written as the builder writes them for it (in
    path order, where `search_folder` puts its work: Pagefind numbers pages in the order the
    folder lists them); return its bundle's files."""
    work = search_folder(bundle, 1 << 20)
    try:
        pages = sorted(path for path in site.rglob("*") if path.is_file())
        for page in pages:
            target = work / "site" / page.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(page, target)
        command = [search._indexer(), "--site", str(work / "site"), "--output-path", str(bundle)]
        command += ["--force-language", language, "--silent"]
        subprocess.run(command, check=True, timeout=120)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return bundle_files(bundle)


def fragments(files: dict[str, bytes]) -> list[dict[str, object]]:
    """The pages a bundle found, as Pagefind's fragments say."""
    prefix = b"pagefind_dcd"
    found = [gzip.decompress(data) for name, data in files.items() if name.startswith("fragment/")]
    return sorted((json.loads(data[len(prefix) :]) for data in found), key=lambda f: f["url"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The seed project, one guide with an image and a code block, built with search."""
    project = copy_project(tmp_path_factory.mktemp("cut") / "project")
    project.write("content/images/flow.svg", SVG)
    prose = project.root / "content" / "glm-5-2-sglang-weight-cache-daemon.md"
    prose.write_text(prose.read_text("utf-8") + EXTRA_PROSE, "utf-8")
    result = project.run("--quiet")
    assert result.returncode == 0, result.stderr
    return project


def test_the_index_of_the_cuts_is_the_index_of_the_whole_pages(
    built: Project, tmp_path: Path
) -> None:
    whole = tmp_path / "whole"
    for page in built.out.glob("guides/*/index.html"):
        target = whole / page.relative_to(built.out)
        target.parent.mkdir(parents=True)
        shutil.copyfile(page, target)
    language = re.search(rb'<html lang="([^"]+)"', next(whole.rglob("*.html")).read_bytes())
    assert language is not None
    expected = pagefind(whole, tmp_path / "bundle", language.group(1).decode())
    assert len(fragments(expected)) == 4
    assert bundle_files(built.out / "pagefind") == expected
    page = (built.out / "guides/glm-5-2-sglang-weight-cache-daemon/index.html").read_text("utf-8")
    assert "sglang.launch_server" in page and "<img" in page  # the cut kept what it had to


def test_a_cut_keeps_what_pagefind_reads_and_drops_the_rest(tmp_path: Path) -> None:
    cut = _search_page(LexborHTMLParser(NESTED))
    text = cut.decode("utf-8")
    assert "chrome" not in text and "style.css" not in text
    assert "hidden" not in text and "deeper" not in text and "contents" not in text
    assert "Kept words before" in text and "and after." in text
    assert 'data-pagefind-meta="verdict"' in text and 'src="/a.png"' in text
    assert "&lt;off&gt;" in text and "<title>Nested &amp; odd</title>" in text
    # Inline elements Pagefind reads nothing of are their text alone; an anchor, an attribute
    # it might read (or one it reads) keep theirs.
    assert "See the other guide and" in text and "<code>" not in text and "<time>" not in text
    assert (
        '<span id="note" class="num">a note</span>' in text and '<em title="a" lang="fr">' in text
    )
    for name, content in (("whole", NESTED), ("cut", cut)):
        (tmp_path / name / "page").mkdir(parents=True)
        (tmp_path / name / "page" / "index.html").write_bytes(content)
    whole = pagefind(tmp_path / "whole", tmp_path / "whole-bundle")
    assert pagefind(tmp_path / "cut", tmp_path / "cut-bundle") == whole
    [found] = fragments(whole)
    assert found["meta"] == {
        "title": "Nested ignores",
        "verdict": "Pilot only",
        "image": "/a.png",
        "image_alt": "A chart",
    }


def test_a_page_without_a_search_body_is_not_cut() -> None:
    page = b"<!DOCTYPE html><html><head><title>Tags</title></head><body><main>x</main></body>"
    assert _search_page(LexborHTMLParser(page)) == b""


def test_the_index_is_made_from_the_cut_pages(tmp_path: Path) -> None:
    whole = b'<html lang="en"><body><main data-pagefind-body><p>alpha</p></main></body></html>'
    cut = b'<html lang="en"><body><main data-pagefind-body><p>omega</p></main></body></html>'
    page = Page("guides/one/index.html", whole, search=cut)
    with search.SearchIndex([page], "en", tmp_path / "out", threading.Event()) as index:
        bundle = {page.path.removeprefix("pagefind/"): page.content for page in index.pages()}
    [found] = fragments(bundle)
    assert found["content"] == "omega."


def test_a_cut_comes_from_the_cache_or_else_the_whole_page_is_read(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")
    cut = b"<html>cut</html>"
    sha256 = hashlib.sha256(cut).hexdigest()
    whole = Page("guides/one/index.html", b"<html>whole</html>", search_sha256=sha256)
    assert search_page(cache, whole) == whole.content  # nothing cut yet
    cache.write(SEARCH_PAGE, search_page_key(sha256), cut)
    assert search_page(cache, whole) == cut
    assert search_page(None, whole) == whole.content
    assert search_page(cache, replace(whole, search_sha256="")) == whole.content
    entry = cache.file(SEARCH_PAGE, search_page_key(sha256))
    entry.write_bytes(entry.read_bytes().replace(b"cut", b"cot"))  # damaged after it was written
    assert search_page(cache, whole) == whole.content


def test_a_build_whose_cached_cuts_are_damaged_writes_what_a_cold_build_does(
    built: Project, tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "project", built.root)
    shutil.copytree(built.root / ".cache", project.root / ".cache")
    cuts = list((project.root / ".cache").glob(f"v*/{SEARCH_PAGE}/*"))
    assert len(cuts) == 4, "one cut a guide page"
    for path in cuts:
        path.write_bytes(path.read_bytes().replace(b"GLM", b"GLN"))
    for kind in ("search", "search-file"):  # so the shard is indexed again
        for folder in (project.root / ".cache").glob(f"v*/{kind}"):
            shutil.rmtree(folder)
    prose = project.root / "content" / "glm-5-2-vllm-decode-context-parallel.md"
    prose.write_text(prose.read_text("utf-8") + "\nOne more sentence about GLM-5.2.\n", "utf-8")
    assert project.run("--quiet", "--out", str(tmp_path / "warm")).returncode == 0
    cold = copy_project(tmp_path / "cold", project.root)
    assert cold.run("--quiet", "--no-cache", "--out", str(tmp_path / "cold-site")).returncode == 0
    assert tree_digest(tmp_path / "warm") == tree_digest(tmp_path / "cold-site")


CELLS = (
    "word",
    "v0.5",
    "12",
    "done.",
    "why?",
    "(x)",
    'say "hi"',
    "it's",
    "$",
    "a*",
    "snake_",
    "ratio:",
    "50%",
    "café",
    "½",
    "R&amp;D",
    "a&nbsp;",
    "",
    "   ",
    '<code class="k">tp</code>',
)
TABLED = """<!DOCTYPE html><html lang="en"><head><title>Tables</title></head><body><main>
<article data-pagefind-body><h1 id="top">Flattened <em>tables</em></h1>
<div class="table-scroll"><table class="kv"><caption>Cells</caption><thead><tr><th>Key</th>
<th>Value</th></tr></thead><tbody>
{rows}
<tr title="a&gt;b > c"><th scope="row">Quoted</th><td class="num">7 GB</td></tr>
<tr><th>Nested</th><td><table><tr><td>inner</td><td>cell.</td></tr></table></td></tr>
</tbody></table></div>
<section aria-labelledby="meta"><h2 id="meta">Meta</h2><dl><dt>Checked</dt><dd>2026-08-24</dd>
<dt>Pinned</dt><dd><p>v0.5.18</p></dd></dl><ul><li>one</li><li>two.</li><li><p>three</p></li></ul>
<div>alone</div><p>para</p></section>
<aside id="note-1" class="callout"><p>Boundary (row 1): kept as the anchor's own</p></aside>
<aside id="note-2"><table><tr><th>Anchored</th><td>table</td></tr></table></aside>
<div><span id="inline-anchor"><span><div>block in an anchored inline</div></span></span></div>
<table><tr><td id="cell">an anchored cell</td><td data-pagefind-meta="unit">GiB</td></tr></table>
</article></main></body></html>
"""
METAED = """<!DOCTYPE html><html lang="en"><head><title>Meta on a header cell</title></head>
<body><main><article data-pagefind-body><h1>Meta</h1><table><tr><th data-pagefind-meta="kind">
Decode</th><td>fast</td></tr><tr><th>Prefill</th><td>slow</td></tr></table>
<dl><dt id="term">Term</dt><dd>its definition</dd></dl></article></main></body></html>
"""


def test_flattened_tables_and_blocks_index_as_the_whole_pages(tmp_path: Path) -> None:
    rows = "\n".join(f"<tr><th>Row {n}</th><td>{cell}</td></tr>" for n, cell in enumerate(CELLS))
    pages = {"tabled": TABLED.format(rows=rows).encode(), "metaed": METAED.encode()}
    cuts = {name: _search_page(LexborHTMLParser(page)) for name, page in pages.items()}
    for name in pages:
        for kind, content in (("whole", pages[name]), ("cut", cuts[name])):
            (tmp_path / kind / name).mkdir(parents=True)
            (tmp_path / kind / name / "index.html").write_bytes(content)
    whole = pagefind(tmp_path / "whole", tmp_path / "whole-bundle")
    assert pagefind(tmp_path / "cut", tmp_path / "cut-bundle") == whole
    found = {fragment["url"]: fragment for fragment in fragments(whole)}
    assert found["/metaed/"]["meta"]["kind"] == "Decode"
    assert set(found["/tabled/"]["anchors"][0]) >= {"element", "id", "text"}
    # The rows, header cells and definition lists are gone, and the cells holding text alone.
    tabled = cuts["tabled"].decode()
    for gone in ("<tr", "<th", "<tbody", "<caption", "<dl", "<dt", "<li>one", "<div>alone"):
        assert gone not in tabled
    assert " word. " in tabled and " why? " in tabled and " ratio: " in tabled
    assert " R&amp;D. " in tabled and " a&nbsp; " in tabled  # as Pagefind reads them: raw
    # What Pagefind reads otherwise stays: anchors, what an anchor's text takes in, metadata,
    # and cells whose last character is past ASCII.
    assert '<td id="cell">' in tabled and '<td data-pagefind-meta="unit">GiB</td>' in tabled
    assert "<p data-kept" in tabled and "<table data-kept" in tabled and "<div data-kept" in tabled
    assert "<td>café</td>" in tabled and "<td>½</td>" in tabled
    metaed = cuts["metaed"].decode()
    assert "<th data-pagefind-meta" in metaed and "<th>Prefill</th>" in metaed  # by name
    assert '<dt id="term">' in metaed and "<dd>" not in metaed and "<tr" not in metaed


def test_search_reads_the_guide_metadata_and_headers_as_separate_words(built: Project) -> None:
    # Pagefind runs a term and its definition, or two header cells, into one word unless
    # something separates them: "checked2026-08-24" matched no search and read badly in excerpts.
    for found in fragments(bundle_files(built.out / "pagefind")):
        content = str(found["content"])
        assert re.search(r"Evidence checked \d{4}-\d\d-\d\d \d\d:\d\d UTC", content), content
        assert re.search(r"Pinned release v\d", content) and "Published 20" in content
        assert "Operation 20" in content and "Audit status " in content
        assert "Source Size SHA-256" in content
        assert not re.search(r"checked\d|release[v\d]|Published\d|Operation\d|status[a-z]", content)
