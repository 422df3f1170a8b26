"""Rendered pages in the build cache: an audit reads what they declare, never their HTML."""

from __future__ import annotations

import hashlib
import shutil
from typing import Any

import pytest

from site_builder.cache.store import VERSION, BuildCache
from site_builder.cli import main
from site_builder.config import BuildConfig
from site_builder.output import unchanged
from site_builder.pipeline import build
from site_builder.render import pages as render
from site_builder.render.stored_pages import HTML, SCAN, dump_scan, load_scan
from tests.conftest import Project


def counted_calls(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """Count the guide pages rendered from here on."""
    calls: list[None] = []
    original = render.render_guide

    def counted(*args: Any) -> Any:
        calls.append(None)
        return original(*args)

    monkeypatch.setattr(render, "render_guide", counted)
    return calls


def forget_reports(project: Project) -> None:
    """Remove the reports kept for the up-to-date check, so the next audit runs its checks."""
    for folder in (project.root / ".cache").glob(f"v*/{unchanged.REPORT}"):
        shutil.rmtree(folder)


def test_an_audit_reads_the_pages_scans_and_no_html(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    written = build(BuildConfig.for_root(project.root))
    assert written.written
    forget_reports(project)
    kinds: list[str] = []
    read = BuildCache.read

    def recorded(cache: BuildCache, kind: str, key: str) -> bytes | None:
        kinds.append(kind)
        return read(cache, kind, key)

    monkeypatch.setattr(BuildCache, "read", recorded)
    rendered = counted_calls(monkeypatch)
    assert main(["--root", str(project.root), "--audit", "--format", "json"]) == 0
    assert kinds.count(SCAN) >= 4 and HTML not in kinds
    assert rendered == [], "every guide came from the cache"
    audited = capsys.readouterr().out
    monkeypatch.undo()
    assert main(["--root", str(project.root), "--audit", "--format", "json", "--no-cache"]) == 0
    assert capsys.readouterr().out == audited


def test_an_audit_holds_no_page_html_and_finds_what_a_build_finds(project: Project) -> None:
    config = BuildConfig.for_root(project.root)
    cold = build(BuildConfig.for_root(project.root, cache=False), write=False)
    for _ in range(2):  # the first fills the cache, the second reads it
        forget_reports(project)
        audited = build(config, write=False, html=False)
        guides = [page for page in audited.pages if page.shingles is not None]
        assert len(guides) == 4 and all(page.content == b"" for page in guides)
        assert audited.findings == cold.findings
        assert [page.path for page in audited.pages] == [page.path for page in cold.pages]
    whole = {page.path: page.content for page in build(config, write=False).pages}
    assert whole == {page.path: page.content for page in cold.pages}


def test_a_page_whose_html_entry_is_gone_is_rendered_again(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(project.root)
    first = {page.path: page.content for page in build(config, write=False).pages}
    for entry in (project.root / ".cache" / f"v{VERSION}" / HTML).iterdir():
        entry.unlink()
    calls = counted_calls(monkeypatch)
    again = {page.path: page.content for page in build(config, write=False).pages}
    assert again == first
    assert len(calls) == 4


def test_a_scan_entry_reads_back_as_the_page_declared_it(project: Project) -> None:
    report = build(BuildConfig.for_root(project.root, cache=False), write=False)
    guide = next(page for page in report.pages if page.shingles is not None)
    sha256 = hashlib.sha256(guide.content).hexdigest()
    again, stated = load_scan(dump_scan(guide, sha256))
    assert (again.path, again.links, again.scan, again.shingles, stated) == (
        guide.path,
        guide.links,
        guide.scan,
        guide.shingles,
        sha256,
    )
    assert again.content == b""
    cut = dump_scan(guide, sha256)[:-8]
    with pytest.raises(ValueError, match="not their stated size"):
        load_scan(cut)


def test_a_build_removes_the_entries_of_an_older_cache_version(project: Project) -> None:
    old = project.root / ".cache" / "v1" / "page"
    old.mkdir(parents=True)
    (old / "0123abcd").write_bytes(b"an entry an earlier version wrote")
    assert build(BuildConfig.for_root(project.root)).written
    assert sorted(path.name for path in (project.root / ".cache").iterdir()) == [f"v{VERSION}"]


def test_a_build_says_how_many_guide_pages_it_took_from_the_cache(project: Project) -> None:
    first = project.run()
    assert first.returncode == 0, first.stderr
    assert "from the build cache" not in first.stdout  # a cold build renders every guide

    shutil.rmtree(project.root / "_site")  # a fresh clone whose .cache/ was kept
    again = project.run()
    assert ": 4 guides (4 of 4 guide pages from the build cache)" in again.stdout

    prose = sorted((project.root / "content").glob("*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    edited = project.run()
    assert "(3 of 4 guide pages from the build cache)" in edited.stdout

    shutil.rmtree(project.root / "_site")
    uncached = project.run("--no-cache")
    assert "from the build cache" not in uncached.stdout
