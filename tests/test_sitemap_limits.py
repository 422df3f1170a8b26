"""--import-sitemap streams with limits: gzip bombs, fan-out indexes, URL counts, linear time."""

from __future__ import annotations

import gzip
import json
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from site_builder.commands.registry import MAX_URLS, import_sitemap, read_sitemap
from site_builder.config import BuildConfig
from tests.conftest import Project
from tests.scaling import BOUND, GROWTH, growth

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
REGISTRY = "content/registry.json"
MEMORY = 1 << 30
"""The address space the CLI gets for a gzip bomb: 1 GiB (reading it whole took 4.2 GB)."""
TIMEOUT = 60
"""Seconds: the import takes about one (on a loaded machine, ten); unbounded work runs minutes."""
PROBLEM = re.compile(r"^(?P<path>[^:]+): (?P<location>[^:]+): (?P<message>.+)$")


def run(project: Project, sitemap: Path) -> subprocess.CompletedProcess[str]:
    """Run `build.py --import-sitemap` in the project within MEMORY and TIMEOUT, or fail."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    return subprocess.run(
        [sys.executable, str(project.root / "build.py"), "--import-sitemap", str(sitemap)],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=limit_memory,
        check=False,
    )


def refused(result: subprocess.CompletedProcess[str], name: str) -> str:
    """Assert exit 1 with one `path: location: message` line naming `name`; return the message."""
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output, output
    *problems, summary = result.stderr.splitlines()
    assert summary == "Aborted: the registry is unchanged.", output
    assert len(problems) == 1, problems
    match = PROBLEM.match(problems[0])
    assert match, problems[0]
    assert Path(match["path"]).name == name, problems[0]
    return match["message"]


def urlset(path: Path, locs: list[str]) -> Path:
    """Write a urlset of these locations."""
    rows = "".join(f"<url><loc>{loc}</loc><lastmod>2026-09-02</lastmod></url>\n" for loc in locs)
    path.write_text(f'<urlset xmlns="{NS}">\n{rows}</urlset>\n', "utf-8")
    return path


def index(path: Path, names: list[str]) -> Path:
    """Write a sitemap index naming these files (as the live site's URLs)."""
    rows = "".join(
        f"<sitemap><loc>https://glm52.ai/sitemaps/{name}</loc></sitemap>\n" for name in names
    )
    path.write_text(f'<sitemapindex xmlns="{NS}">\n{rows}</sitemapindex>\n', "utf-8")
    return path


def pages(count: int, prefix: str) -> list[str]:
    """`count` distinct new page URLs on the site."""
    return [f"https://glm52.ai/{prefix}/{number}/" for number in range(count)]


def registry_urls(project: Project) -> set[str]:
    """The URLs the registry now holds."""
    data = json.loads((project.root / REGISTRY).read_text("utf-8"))
    return {page["url"] for page in data["pages"]}


def test_a_gzip_bomb_is_refused_in_one_line_quickly_within_1_gib(
    project: Project, tmp_path: Path
) -> None:
    # 2 MB on disk, 2 GiB decompressed: a valid start, then 2,048 gzip members of 1 MiB of spaces.
    bomb = tmp_path / "bomb.xml.gz"
    block = gzip.compress(b" " * (1 << 20), mtime=0)
    with bomb.open("wb") as out:
        out.write(gzip.compress(f'<urlset xmlns="{NS}">'.encode(), mtime=0))
        for _ in range(2048):
            out.write(block)
    assert bomb.stat().st_size < 3_000_000
    before = (project.root / REGISTRY).read_bytes()

    result = run(project, bomb)

    assert "52,428,800 bytes" in refused(result, "bomb.xml.gz")
    assert (project.root / REGISTRY).read_bytes() == before


def test_an_index_naming_one_child_a_thousand_times_two_levels_deep_reads_each_once(
    project: Project, tmp_path: Path
) -> None:
    first, second = pages(3, "fan-a"), pages(2, "fan-b")
    urlset(tmp_path / "leaf-a.xml", first)
    urlset(tmp_path / "leaf-b.xml", second)
    index(tmp_path / "middle.xml", ["leaf-a.xml", "leaf-b.xml"] * 1000)
    top = index(tmp_path / "top.xml", ["middle.xml"] * 1000)
    before = registry_urls(project)

    result = run(project, top)

    assert result.returncode == 0, result.stderr
    assert "5 URLs read, 5 added" in result.stdout
    assert registry_urls(project) == before | set(first) | set(second)


def test_passing_the_url_limit_across_files_is_one_line_naming_the_file_that_passes_it(
    project: Project, tmp_path: Path
) -> None:
    half = MAX_URLS // 2 + 1000
    urlset(tmp_path / "part-1.xml", pages(half, "one"))
    urlset(tmp_path / "part-2.xml", pages(half, "two"))
    top = index(tmp_path / "index.xml", ["part-1.xml", "part-2.xml"])
    before = (project.root / REGISTRY).read_bytes()

    message = refused(run(project, top), "part-2.xml")

    assert f"{MAX_URLS:,} URLs" in message
    assert (project.root / REGISTRY).read_bytes() == before


def test_exactly_the_url_limit_is_read(tmp_path: Path) -> None:
    urlset(tmp_path / "part-1.xml", pages(MAX_URLS // 2, "one"))
    urlset(tmp_path / "part-2.xml", pages(MAX_URLS - MAX_URLS // 2, "two"))

    urls = read_sitemap(index(tmp_path / "index.xml", ["part-1.xml", "part-2.xml"]))

    assert len({url.loc for url in urls}) == len(urls) == MAX_URLS


@pytest.mark.parametrize(
    ("fan_out", "count"), [(False, 10_000), (True, 1_000)], ids=["urlset", "index-fan-out"]
)
def test_importing_more_urls_takes_time_in_proportion(
    project: Project, tmp_path: Path, fan_out: bool, count: int
) -> None:
    config = BuildConfig.for_root(project.root)
    registry = project.root / REGISTRY
    before = registry.read_bytes()

    def at(count: int) -> Callable[[], object]:
        sitemap = urlset(tmp_path / f"sitemap-{count}.xml", pages(count, "double"))
        if fan_out:  # the index grows with its child: it names it count / 10 times
            sitemap = index(tmp_path / f"index-{count}.xml", [sitemap.name] * (count // 10))

        def imported() -> None:
            registry.write_bytes(before)
            assert import_sitemap(config, sitemap).added == count

        return imported

    ratio = growth(at, count, repeat=3)
    assert ratio < BOUND, f"{GROWTH}x the URLs took {ratio:.1f}x the time"
