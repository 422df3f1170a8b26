"""A build that writes keeps its pages' bytes in the build cache's files, not in memory, and
links those files into the site; nothing another process does to the cache or the site can
put wrong bytes on a page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.model.models import BuildReport, Page
from site_builder.pipeline import build
from site_builder.render import stored_pages
from tests.conftest import Project, tree_digest
from tests.test_incremental import grow

GUIDE = "guides/glm-5-2-vllm-decode-context-parallel/index.html"


def guide_pages(report: BuildReport) -> list[Page]:
    return [page for page in report.pages if page.path.startswith("guides/") and page.scan]


def cold_site(project: Project, tmp_path: Path) -> dict[str, str]:
    """Return the digest of what a cold build of the project, without a cache, writes."""
    out = tmp_path / "cold"
    assert build(BuildConfig.for_root(project.root, out, cache=False)).written
    return tree_digest(out)


def test_a_build_holds_no_guide_page_and_links_the_cached_ones(project: Project) -> None:
    report = build(BuildConfig.for_root(project.root))
    assert report.written
    guides = guide_pages(report)
    assert len(guides) == 4
    for page in guides:
        assert page.content == b"", "a written guide page is not held in memory"
        assert page.stored == project.out.resolve() / page.path
        assert page.read() == (project.out / page.path).read_bytes()
    cached = {path.stat().st_ino for path in (project.root / ".cache").rglob("*") if path.is_file()}
    assert all((project.out / page.path).stat().st_ino in cached for page in guides)
    # The folder of links the build held its pages in is gone.
    assert [path.name for path in project.root.iterdir() if ".pages-" in path.name] == []


def test_a_page_edited_in_the_site_is_written_right_by_the_next_build(
    project: Project, tmp_path: Path
) -> None:
    config = BuildConfig.for_root(project.root)
    assert build(config).written
    # The page and its cache entry are one file: editing it in place damages both.
    with open(project.out / GUIDE, "r+b") as page:
        page.write(b"<!-- edited by hand -->")
    report = build(config)
    assert report.written and not report.unchanged
    assert tree_digest(project.out) == cold_site(project, tmp_path)


def test_a_cache_entry_removed_while_the_build_runs_leaves_its_page_right(
    project: Project, tmp_path: Path
) -> None:
    config = BuildConfig.for_root(project.root)
    build(config, write=False)  # the pages are in the cache

    def prune_everything(stage: str) -> None:
        # Another build (or the preview) pruning the cache after this one read it.
        if stage == "check":
            for entry in (project.root / ".cache").rglob("*"):
                if entry.is_file():
                    entry.unlink()

    assert build(config, on_stage=prune_everything).written
    assert tree_digest(project.out) == cold_site(project, tmp_path)


def test_pages_that_cannot_be_linked_are_held_and_written(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(*args: object, **kwargs: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    report = build(BuildConfig.for_root(project.root))
    assert report.written
    assert all(page.content and page.stored is None for page in guide_pages(report))
    assert tree_digest(project.out) == cold_site(project, tmp_path)


def test_a_build_that_fails_its_checks_gives_its_pages_back_with_their_bytes(
    project: Project,
) -> None:
    content = project.root / "content"
    title = (content / "glm-5-2-sglang-dsa-indexer-fusion.md").read_text("utf-8").split("\n")[1]
    prose = content / "glm-5-2-vllm-decode-context-parallel.md"
    lines = prose.read_text("utf-8").split("\n")
    prose.write_text("\n".join([lines[0], title, *lines[2:]]), "utf-8")  # two guides, one title
    report = build(BuildConfig.for_root(project.root))
    assert not report.written
    assert any(finding.severity == "error" for finding in report.findings)
    for page in guide_pages(report):
        assert page.stored is None and page.content.startswith(b"<!doctype html>")


def test_a_page_whose_entry_cannot_be_written_never_links_an_older_one(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(project.root)
    build(config, write=False)
    cache = project.root / ".cache"
    for entry in cache.glob(f"v*/{stored_pages.SCAN}/*"):
        entry.unlink()  # the pages are rendered again...
    for entry in cache.glob(f"v*/{stored_pages.HTML}/*"):
        entry.write_bytes(b"<p>damaged</p>")  # ...over damaged entries of their keys...
    original = BuildCache._store

    def full_disk(
        self: BuildCache, kind: str, key: str, payload: bytes, file: bool = False
    ) -> bool:
        return False if kind == stored_pages.HTML else original(self, kind, key, payload, file)

    monkeypatch.setattr(BuildCache, "_store", full_disk)  # ...that cannot be replaced
    assert build(config).written
    assert tree_digest(project.out) == cold_site(project, tmp_path)


def test_worker_processes_store_the_pages_they_render(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grow(project, 20)  # enough guides for two worker processes
    log = tmp_path / "stored-by"
    original = BuildCache._store

    def logged(self: BuildCache, kind: str, key: str, payload: bytes, file: bool = False) -> bool:
        with log.open("a") as stream:  # appends of one short line each: whole lines
            stream.write(f"{kind} {os.getpid()}\n")
        return original(self, kind, key, payload, file)

    monkeypatch.setattr(BuildCache, "_store", logged)
    assert build(BuildConfig.for_root(project.root, jobs=2)).written
    writers = [line.rsplit(" ", 1) for line in log.read_text().splitlines()]
    html = [int(pid) for kind, pid in writers if kind == stored_pages.HTML]
    by_workers = [pid for pid in html if pid != os.getpid()]
    # Each guide page went from the worker that rendered it to the cache, not through here.
    assert len(by_workers) == 24 and len(set(by_workers)) == 2
    assert tree_digest(project.out) == cold_site(project, tmp_path)
