"""The preview shows warnings as well as errors, and the terminal prints their count."""

from __future__ import annotations

import json
import re

from bs4 import BeautifulSoup

from site_builder.preview.serve import OTHER_WARNINGS, _warnings
from tests.conftest import Project
from tests.new_guide import SLUG, probe_record, write_probe_guide
from tests.preview_helpers import Preview, start_preview

RECORD = "records/900_latency_probe.json"


def warnings_box(preview: Preview, path: str = "/") -> tuple[str, list[str]]:
    """Return the summary and the items of the warnings box on a served page."""
    status, _, body = preview.get(path)
    assert status == 200
    box = BeautifulSoup(body, "html.parser").select_one("details#glm52-build-warnings")
    if box is None:
        return "", []
    return box.summary.get_text(), [item.get_text() for item in box.select("li")]


def counted(preview: Preview) -> list[int]:
    """Return the warning counts the terminal printed after each rebuild."""
    return [
        int(match.group(1))
        for line in preview.stderr
        if (match := re.match(r"Rebuilt \(\d+\): 0 errors, (\d+) warning\(s\)\.", line))
    ]


def test_warnings_are_listed_on_every_page_and_counted_in_the_terminal(
    project: Project,
) -> None:
    (project.root / "content/acknowledged.yaml").unlink(missing_ok=True)
    write_probe_guide(project.root)
    record = probe_record(overlapAudit={"prepublicationSitemapCanonicals": 5000})
    (project.root / RECORD).write_text(json.dumps(record), "utf-8")
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1)
        summary, items = warnings_box(preview, f"/guides/{SLUG}/")
        first = counted(preview)[0]
        assert first <= OTHER_WARNINGS, "this site's warnings are all listed on every page"
        mine = [item for item in items if RECORD in item or SLUG in item]
        assert summary == f"{first} warning(s) in this build, {len(mine)} on this page"
        assert len(items) == first
        assert items[: len(mine)] == mine, "the page's own warnings come first"
        assert any(RECORD in item and "sitemap-count" in item for item in mine)
        index_summary, index_items = warnings_box(preview, "/guides/")
        assert sorted(index_items) == sorted(items)
        assert index_summary.endswith(" 0 on this page")
        # Acknowledging it with a reason clears it from the box and the count.
        prose = project.root / f"content/{SLUG}.md"
        entry = "acknowledge:\n  - check: sitemap-count\n    reason: registry not imported\n"
        prose.write_text(prose.read_text("utf-8").replace("\n---\n", f"\n{entry}---\n", 1))
        preview.wait_for_rebuilds(2)
        assert counted(preview)[-1] == first - 1
        _, after = warnings_box(preview, f"/guides/{SLUG}/")
        assert not any(RECORD in item for item in after)
    finally:
        preview.stop()


def test_a_page_lists_its_own_warnings_and_a_few_of_the_rest() -> None:
    # A large site has thousands of warnings: each page lists those about it, then
    # OTHER_WARNINGS of the others, and says how many more `--audit` lists.
    here = "/guides/probe/"
    warnings = tuple(
        (f"/guides/other-{n:04d}/", f"content/other-{n:04d}.md: title-length: long")
        for n in range(3000)
    )
    warnings += ((here, "content/probe.md: orphan: no other guide links to it"),)
    box = BeautifulSoup(_warnings(warnings, here), "html.parser")
    items = [item.get_text() for item in box.select("li")]
    assert box.summary.get_text() == "3001 warning(s) in this build, 1 on this page"
    assert items[0] == "content/probe.md: orphan: no other guide links to it"
    assert items[1:] == [line for _, line in warnings[:OTHER_WARNINGS]]
    assert "2,980 more on other pages" in box.get_text()
    assert "python build.py --audit" in box.get_text()
    assert len(_warnings(warnings, here)) < 20_000, "the box stays small on a large site"
