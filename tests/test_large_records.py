"""Large records build in bounded time and memory and stay readable.

Each test takes the `unseen` fixture record, makes one part of it large (a 5,000-row table,
50 levels of nesting, 1,000 receipts) and runs the real entry point under a memory meter:
GNU `/usr/bin/time -v` where it exists, else a small parent process that reads its child's
peak RSS with resource.getrusage(RUSAGE_CHILDREN). The time and peak memory of each build are
printed (`pytest -s` shows them) and bounded generously.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, Tag

from site_builder.present.blocks import MAX_DEPTH
from tests.conftest import Project, soup

RECORD = "unseen.json"
PAGE = Path("guides") / "unseen-shape-probe" / "index.html"
TIMEOUT_SECONDS = 120
MEMORY_LIMIT_BYTES = 1536 * 1024 * 1024
GNU_TIME = Path("/usr/bin/time")
_CHILD_PEAK = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'child peak rss: {peak * (1 if sys.platform == \"darwin\" else 1024)}', "
    "file=sys.stderr)\n"
    "sys.exit(code)\n"
)


@dataclass(frozen=True)
class Measured:
    """A finished build: its exit code, output, wall time and peak memory."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int


def gnu_time_works() -> bool:
    """Return whether /usr/bin/time is GNU time (it understands -v)."""
    if not GNU_TIME.is_file():
        return False
    probe = subprocess.run(
        [str(GNU_TIME), "-v", "true"], capture_output=True, text=True, check=False
    )
    return probe.returncode == 0 and "Maximum resident set size" in probe.stderr


def measured_build(project: Project) -> Measured:
    """Run `python build.py` in the project, as a user would, measuring time and peak memory."""
    command = [sys.executable, str(project.root / "build.py")]
    if gnu_time_works():
        command = [str(GNU_TIME), "-v", *command]
        pattern = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
        scale = 1024
    else:
        command = [sys.executable, "-c", _CHILD_PEAK, *command]
        pattern = re.compile(r"child peak rss: (\d+)")
        scale = 1
    started = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    seconds = time.perf_counter() - started
    match = pattern.search(result.stderr)
    assert match is not None, result.stderr[-2000:]
    return Measured(
        result.returncode, result.stdout, result.stderr, seconds, int(match.group(1)) * scale
    )


def build_within_bounds(project: Project, what: str) -> BeautifulSoup:
    """Build, assert exit 0 within the time and memory bounds, and return the guide page."""
    measured = measured_build(project)
    print(
        f"\n{what}: built in {measured.seconds:.2f} s, "
        f"peak memory {measured.peak_bytes / 2**20:.0f} MiB"
    )
    output = measured.stdout + measured.stderr
    assert measured.returncode == 0, output[-3000:]
    assert "Traceback" not in output
    assert measured.seconds < TIMEOUT_SECONDS
    assert 0 < measured.peak_bytes < MEMORY_LIMIT_BYTES, measured.peak_bytes
    return soup(project.out / PAGE)


def record_section(page: BeautifulSoup, anchor: str) -> Tag:
    """Return the <section> of a record section by its heading's id."""
    heading = page.find(id=anchor)
    assert isinstance(heading, Tag), anchor
    section = heading.parent
    assert isinstance(section, Tag) and section.name == "section"
    return section


def nesting_depth(tag: Tag, top: Tag) -> int:
    """Return how many <section> elements lie between `tag` and `top` (inclusive of `tag`)."""
    depth = 0
    node: Tag | None = tag
    while node is not None and node is not top:
        depth += node.name == "section"
        node = node.parent
    return depth


def nested_objects(levels: int) -> dict[str, Any]:
    """Return `levels` objects nested in each other, each with a note; the leaf is unique."""
    value: dict[str, Any] = {"levelNote": f"level {levels}", "deepestLeaf": "DEEPEST-LEAF-50"}
    for level in range(levels - 1, 0, -1):
        value = {"levelNote": f"level {level}", f"level{level + 1}": value}
    return value


def nested_lists(levels: int) -> list[Any]:
    """Return `levels` lists nested in each other, each with a note; the leaf is unique."""
    value: list[Any] = [f"list level {levels}", "DEEPEST-LIST-LEAF-50"]
    for level in range(levels - 1, 0, -1):
        value = [f"list level {level}", value]
    return value


def test_a_5000_row_table_builds_and_scrolls_in_its_own_box(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    record["probeRows"] = [
        {
            "label": f"ROW-{index:05d}",
            "tokensPerSecond": index * 1.5,
            "result": "fits" if index % 2 else "overflows",
        }
        for index in range(5000)
    ]
    project.save_record(RECORD, record)

    page = build_within_bounds(project, "5,000-row table")

    section = record_section(page, "probe-rows")
    boxes = section.find_all("div", class_="table-scroll")
    assert len(boxes) == 1
    assert "long" in boxes[0]["class"]
    body = boxes[0].find("tbody")
    assert isinstance(body, Tag)
    rows = body.find_all("tr", recursive=False)
    assert len(rows) == 5000
    labels = [row.find("td").get_text() for row in rows]
    assert labels == [f"ROW-{index:05d}" for index in range(5000)]
    assert section.find("p", class_="table-meta").get_text() == "5000 rows"


def test_50_levels_of_nested_objects_are_flattened_past_six(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    record["deepNesting"] = nested_objects(50)
    project.save_record(RECORD, record)

    page = build_within_bounds(project, "50 levels of nested objects")

    section = record_section(page, "deep-nesting")
    subsections = section.find_all("section", class_="sub-block")
    assert subsections
    assert max(nesting_depth(sub, section) for sub in subsections) <= MAX_DEPTH
    values = {
        th.get_text(): td.get_text()
        for row in section.find_all("tr")
        if (th := row.find("th")) is not None and (td := row.find("td")) is not None
    }
    leaf = [label for label, value in values.items() if value == "DEEPEST-LEAF-50"]
    assert len(leaf) == 1, values
    assert leaf[0].endswith("deepest leaf") and "level50" in leaf[0], leaf
    assert "level 50" in values.values() and "level 49" in values.values()


def test_50_levels_of_nested_lists_are_flattened_past_six(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    record["deepLists"] = nested_lists(50)
    project.save_record(RECORD, record)

    page = build_within_bounds(project, "50 levels of nested lists")

    section = record_section(page, "deep-lists")
    assert "DEEPEST-LIST-LEAF-50" in section.get_text()
    subsections = section.find_all("section", class_="sub-block")
    assert max(nesting_depth(sub, section) for sub in subsections) <= MAX_DEPTH


def test_1000_receipts_build_and_every_url_is_a_link(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    receipts = [
        {
            "name": f"Source {index:04d}",
            "url": f"https://example.org/sources/{index:04d}/file.md",
            "bytes": 1000 + index,
            "sha256": hashlib.sha256(f"source {index}".encode()).hexdigest(),
        }
        for index in range(1000)
    ]
    record["sourceReceipts"] = receipts
    # The fixture asserts it has two receipts; with 1,000 that claim would be false. The rule
    # in content/rules.yaml decides `twentyOneSourceReceipts`, so the build verifies it.
    del record["invariants"]["twoSourceReceipts"]
    record["invariants"]["twentyOneSourceReceipts"] = False
    project.save_record(RECORD, record)

    page = build_within_bounds(project, "1,000 receipts")

    table = page.find("table", class_="sources-table")
    assert isinstance(table, Tag)
    links = [(a["href"], a.get_text()) for a in table.find_all("a", class_="url")]
    assert links == [(receipt["url"], receipt["url"]) for receipt in receipts]
    names = [span.get_text() for span in table.find_all("span", class_="source-name")]
    assert names == [receipt["name"] for receipt in receipts]
    note = page.find("section", class_="sources").find("p", class_="section-note")
    assert note.get_text().startswith("1000 pinned sources")
    invariant = next(
        li for li in page.select("ul.checklist li") if "Twenty one source receipts" in li.text
    )
    assert "verified by the build" in invariant.get_text()
