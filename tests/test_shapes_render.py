"""A guide of new shapes, built through the CLI: lists of lists are tables, each caveat is
printed once even beside a chart, and every time reads the same way inside <time datetime>."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from site_builder.cache.reuse import folder_files
from site_builder.present.blocks import build_block
from site_builder.render.pages import make_env
from tests.conftest import ROOT, copy_project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

RECORD = "900_latency_probe.json"
ONE_RUN = "UNSEEN-CAVEAT one run on one node"
EVERY_ROW = "UNSEEN-CAVEAT every row is a vendor number"
# Sections added to the probe record: a list of lists whose key names its columns (with a
# short row), a paired table with row caveats, one with a caveat on every row, and times in
# every place a record value is drawn (table cell, key/value, list item, fact, revisions).
EXTRA: dict[str, Any] = {
    "latencyByChunkSize": [[1024, 0.18], [2048, 0.31], [4096]],
    "warmupRows": [
        {"region": "eu-west", "coldStartMsBaseline": 1310, "coldStartMsCandidate": 1200},
        {"region": "us-east", "coldStartMsBaseline": 980, "coldStartMsCandidate": 905,
         "claimBoundary": ONE_RUN},
        {"region": "ap-south", "coldStartMsBaseline": 400, "coldStartMsCandidate": 380,
         "measuredAt": "2026-08-24T13:09:48+02:00"},
    ],
    "vendorRows": [
        {"case": "a", "latencyBeforeMs": 12, "latencyAfterMs": 9, "boundary": EVERY_ROW},
        {"case": "b", "latencyBeforeMs": 20, "latencyAfterMs": 15, "boundary": EVERY_ROW},
    ],
    "probeWindow": {"startedAt": "2026-08-24T11:09:48Z", "day": "2026-08-25",
                    "label": "2026-02-30", "batch": "2026-08-24T25:00:00Z"},
    "probeDays": ["2026-08-26", "not a day"],
    "lastRunAt": "2026-08-27T23:59:00-01:00",
    "revisions": {"sglangTag": "v0.6.2", "sglangCommit": "a" * 40,
                  "releasedAt": "2026-08-20T08:00:00Z"},
}  # fmt: skip
HUMAN = re.compile(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2} UTC)?")
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> BeautifulSoup:
    """The probe guide with the EXTRA sections, built once through the real CLI."""
    project = copy_project(tmp_path_factory.mktemp("probe") / "project")
    write_probe_guide(project.root)
    project.save_record(RECORD, probe_record(**EXTRA))
    result = project.run()
    assert result.returncode == 0, result.stderr
    return soup(project.out / "guides" / SLUG / "index.html")


def block_of(page: BeautifulSoup, anchor: str) -> Tag:
    """Return the section or sub-block that the heading with this id opens."""
    heading = page.find(id=anchor)
    assert isinstance(heading, Tag), f"no heading #{anchor}"
    block = heading.find_parent("section")
    assert isinstance(block, Tag)
    return block


def grid(block: Tag) -> tuple[list[str], list[list[str]]]:
    """Return (column headings, rows of cell texts) of the block's first table."""
    table = block.find("table")
    assert isinstance(table, Tag), "no <table>"
    head = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    rows = [
        [td.get_text(" ", strip=True) for td in tr.find_all("td")]
        for tr in table.select("tbody tr")
    ]
    return head, rows


def words(tag: Tag) -> str:
    """Return a tag's visible text with whitespace collapsed."""
    return " ".join(tag.get_text(" ").split())


def test_a_list_of_lists_is_a_table_with_numbered_columns(page: BeautifulSoup) -> None:
    block = block_of(page, "latency-probe-chunk-sizes")
    assert grid(block) == (
        ["Column 1", "Column 2"],
        [["2,048", "0.41"], ["4,096", "0.63"], ["8,192", "1.12"]],
    )
    assert not block.find(string=re.compile(r"^\s*Item \d"))
    assert all("num" in th["class"] for th in block.select("thead th"))
    assert block.select("figure.chart"), "a numeric list of lists is charted like a table"


def test_a_list_of_lists_takes_its_column_names_from_its_key(page: BeautifulSoup) -> None:
    block = block_of(page, "latency-by-chunk-size")
    head, rows = grid(block)
    assert head == ["Chunk size", "Latency"]
    assert rows == [["1,024", "0.18"], ["2,048", "0.31"], ["4,096", "—"]]


def test_a_verified_cell_of_a_list_of_lists_gets_its_mark() -> None:
    block = build_block("chunkSizes", [[2048, 0.41], [4096, 0.63]], at="latencyProbe.chunkSizes")
    env = make_env(ROOT / "templates", folder_files(ROOT / "templates"))
    template = env.from_string('{% import "macros.html" as m with context %}{{ m.block(b, 3) }}')
    verified = {"latencyProbe.chunkSizes.1.1": "Recomputed by the build"}
    html = template.render(b=block, verified=verified)
    cells = {td.get_text(" ", strip=True).split()[0]: str(td) for td in soup_of(html).select("td")}
    assert "verified" in cells["0.63"].lower()
    assert not any("verified" in cells[text].lower() for text in ("2,048", "0.41", "4,096"))


def soup_of(html: str) -> BeautifulSoup:
    """Parse an HTML fragment."""
    return BeautifulSoup(html, "html.parser")


@pytest.mark.parametrize(
    ("anchor", "caveat"), [("warmup-rows", ONE_RUN), ("vendor-rows", EVERY_ROW)]
)
def test_each_caveat_is_printed_once_in_a_block_with_a_chart(
    page: BeautifulSoup, anchor: str, caveat: str
) -> None:
    block = block_of(page, anchor)
    (figure,) = block.select("figure.chart")
    assert words(block).count(caveat) == 1
    (callout,) = [aside for aside in block.select("aside.callout") if caveat in words(aside)]
    assert caveat not in words(figure)
    # the chart's caption still says the caveat bounds it, pointing to the one callout
    note = figure.select_one(".chart-caveat")
    assert note is not None, "the chart does not point to its caveat"
    link = note.find("a", href=True)
    if link is not None:
        assert link["href"] == f"#{callout['id']}"
    else:
        assert "caveat above" in words(note)


def test_every_time_on_the_page_is_a_time_element_in_one_format(page: BeautifulSoup) -> None:
    article = page.find("article")
    assert isinstance(article, Tag)
    times = article.find_all("time")
    shown = {time.get_text(strip=True): time["datetime"] for time in times}
    for text, machine in shown.items():
        assert HUMAN.fullmatch(text), f"<time> shows {text!r}"
        if "T" in machine:
            moment = datetime.fromisoformat(machine)
            assert moment.utcoffset() is not None and moment.utcoffset().total_seconds() == 0
            assert text == moment.strftime("%Y-%m-%d %H:%M UTC")
        else:
            assert text == machine
    expected = {
        "2026-11-01 09:00 UTC": "2026-11-01T09:00:00+00:00",  # the header's "evidence checked"
        "2026-08-24 11:09 UTC": "2026-08-24T11:09:48+00:00",  # table cell (+02:00) and kv
        "2026-08-25": "2026-08-25",  # date in a key/value table
        "2026-08-26": "2026-08-26",  # list item
        "2026-08-28 00:59 UTC": "2026-08-28T00:59:00+00:00",  # fact, from -01:00
        "2026-08-20 08:00 UTC": "2026-08-20T08:00:00+00:00",  # pinned revision
    }
    assert expected.items() <= shown.items()
    visible = " ".join(text for text in article.find_all(string=True) if text.parent.name != "time")
    # no raw ISO time is left in the text, but the one that does not parse (25:00)
    assert ISO_TIME.findall(visible) == ["2026-08-24T25:00"]


def test_strings_that_only_look_like_times_stay_as_written(page: BeautifulSoup) -> None:
    block = block_of(page, "probe-window")
    texts = {td.get_text(strip=True): td for td in block.select("td")}
    for written in ("2026-02-30", "2026-08-24T25:00:00Z"):
        assert written in texts and texts[written].find("time") is None
    items = block_of(page, "probe-days").find_all("li")
    assert [li.find("time") is not None for li in items] == [True, False]


def test_the_time_format_of_the_page_header_is_the_one_cells_use(page: BeautifulSoup) -> None:
    header = page.select_one(".guide-meta")
    assert isinstance(header, Tag)
    published = [time.get_text(strip=True) for time in header.find_all("time")]
    assert published[0] == "2026-11-01 09:00 UTC"
    assert all(HUMAN.fullmatch(text) for text in published), published


def test_no_template_prints_a_time_outside_a_time_element() -> None:
    """Every filter that formats a time sits inside <time datetime=...> in the templates."""
    for path in sorted((ROOT / "templates").glob("*.html")):
        for line in path.read_text("utf-8").splitlines():
            for match in re.finditer(r"\{\{[^}]*\|\s*timestamp\s*\}\}", line):
                before = line[: match.start()]
                assert before.rstrip().endswith(">") and "<time datetime=" in before, (
                    f"{Path(path).name}: {line.strip()}"
                )
