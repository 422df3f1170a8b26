"""Paired and categorical measurements become inline SVG bar charts, chosen by the data's shape."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from site_builder.present.blocks import Table, build_block
from site_builder.present.charts import (
    MAX_BARS,
    PAD,
    VALUE_FONT,
    WIDTH,
    Chart,
    build_charts,
    text_width,
)
from tests.conftest import Project, soup

FUSION = Path("guides") / "glm-5-2-sglang-dsa-indexer-fusion" / "index.html"
DCP = Path("guides") / "glm-5-2-vllm-decode-context-parallel" / "index.html"
SEQUENCE = Path("guides") / "glm-5-2-vllm-sequence-parallel-moe" / "index.html"
WEIGHT_CACHE = Path("guides") / "glm-5-2-sglang-weight-cache-daemon" / "index.html"
NESTED_TOKENS = "historical-nightly-regression-reported-glm52-nvfp4-tokens-per-second"


def charts_of(key: str, value: Any) -> tuple[Chart, ...]:
    """Return the charts of the table that a record section builds."""
    block = build_block(key, value)
    assert isinstance(block, Table)
    return block.charts


def values(chart: Chart) -> list[str]:
    """Return every bar's printed value, group by group."""
    return [bar.text for group in chart.groups for bar in group.bars]


def number(text: str) -> float:
    """Read a printed value back: '3,212.05 tokens/s' -> 3212.05, '87.5%' -> 87.5."""
    return float(text.split()[0].replace(",", "").rstrip("%"))


# ---------------------------------------------------------------------------------------------
# Shape detection, on rows built in the test
# ---------------------------------------------------------------------------------------------


def test_columns_differing_by_an_opposite_word_are_one_grouped_chart() -> None:
    rows = [
        {"region": "eu", "coldStartMsBaseline": 120, "coldStartMsCandidate": 95.5},
        {"region": "us", "coldStartMsBaseline": 1310, "coldStartMsCandidate": 1200},
    ]
    (chart,) = charts_of("probeRows", rows)
    assert chart.title == "Cold start (ms): baseline vs candidate"
    assert [item.name for item in chart.legend] == ["Baseline", "Candidate"]
    assert [group.label for group in chart.groups] == ["eu", "us"]
    assert values(chart) == ["120 ms", "95.5 ms", "1,310 ms", "1,200 ms"]
    assert chart.desc.startswith("Baseline 120 ms vs candidate 95.5 ms for eu; baseline 1,310")


@pytest.mark.parametrize(
    ("first", "second", "title", "names"),
    [
        ("fusionOffTokensPerSecond", "fusionOnTokensPerSecond", "Tokens/s", "Fusion off"),
        ("memoryGiBAfter", "memoryGiBBefore", "Memory (GiB)", "Before"),
        ("oldKernelP99Ms", "newKernelP99Ms", "Kernel P99 (ms)", "Old"),
        ("withoutCacheMs", "withCacheMs", "Cache (ms)", "Without"),
        ("queue_disabled_bytes", "queue_enabled_bytes", "Queue (bytes)", "Disabled"),
    ],
)
def test_any_opposite_pair_is_detected_and_the_first_condition_is_drawn_first(
    first: str, second: str, title: str, names: str
) -> None:
    (chart,) = charts_of("rows", [{first: 1, second: 2}, {first: 3, second: 5}])
    assert chart.title.startswith(f"{title}: ")
    assert chart.legend[0].name == names
    assert chart.legend[0].series == "series-a"
    assert chart.legend[1].series == "series-b"


def test_each_pair_of_a_table_gets_its_own_chart_titled_by_the_shared_remainder() -> None:
    rows = [
        {"hw": "B300", "fusionOffTargetMemoryGb": 108, "fusionOnTargetMemoryGb": 127},
        {"hw": "GB300", "fusionOffTargetMemoryGb": 211, "fusionOnTargetMemoryGb": 231},
    ]
    for row in rows:
        row |= {"fusionOffKvCapacityTokens": 1_900_000, "fusionOnKvCapacityTokens": 1_520_000}
    charts = charts_of("reportedMemoryRows", rows)
    assert [chart.title for chart in charts] == [
        "Target memory (GB): fusion off vs fusion on",
        "KV capacity (tokens): fusion off vs fusion on",
    ]
    assert values(charts[1])[:2] == ["1,900,000 tokens", "1,520,000 tokens"]
    assert [chart.id for chart in charts] == [
        "reported-memory-rows-chart-1",
        "reported-memory-rows-chart-2",
    ]


def test_an_ascending_integer_first_column_charts_each_varying_measure() -> None:
    rows = [
        {"dcpSize": size, "copies": 8 // size, "fractionPerRank": fraction, "heads": 8}
        for size, fraction in ((1, 1), (2, 0.5), (4, 0.25), (8, 0.125))
    ]
    for row, rank in zip(rows, (3, 1, 2, 0), strict=True):
        row |= {"globalRank": rank, "accepted": True, "releaseYear": 2026}
    charts = charts_of("kvDuplicationRows", rows)
    assert [chart.title for chart in charts] == [
        "Copies by DCP size",
        "Fraction per rank by DCP size",
    ]
    assert [group.label for group in charts[0].groups] == [
        "DCP size 1",
        "DCP size 2",
        "DCP size 4",
        "DCP size 8",
    ]
    assert values(charts[1]) == ["1", "0.5", "0.25", "0.125"]
    assert charts[0].legend == ()


def test_a_keyed_object_of_off_on_pairs_is_charted_per_case() -> None:
    value = {"n1": {"off": 75, "on": 61}, "n8": {"off": 407, "on": 353}}
    (chart,) = charts_of("tokensPerSecond", value)
    assert chart.title == "Tokens/s: off vs on"
    assert [group.label for group in chart.groups] == ["N1", "N8"]
    assert values(chart) == ["75 tokens/s", "61 tokens/s", "407 tokens/s", "353 tokens/s"]


def test_negative_values_extend_left_of_the_zero_line_at_the_right_scale() -> None:
    rows = [
        {"case": "a", "deltaBeforeGb": -20, "deltaAfterGb": 10},
        {"case": "b", "deltaBeforeGb": 40, "deltaAfterGb": -5},
    ]
    (chart,) = charts_of("deltaRows", rows)
    bars = [bar for group in chart.groups for bar in group.bars]
    zero = chart.axis_x
    assert 0 < zero < WIDTH
    for bar in bars:
        value = number(bar.text)
        if value < 0:
            assert bar.x + bar.width == pytest.approx(zero, abs=0.15)
            assert (bar.anchor, bar.text_x < bar.x) == ("end", True)
            assert bar.text_x - text_width(bar.text, VALUE_FONT) >= 0
        else:
            assert (bar.x, bar.anchor) == (zero, "start")
    scales = {round(bar.width / abs(number(bar.text)), 2) for bar in bars}
    assert max(scales) - min(scales) < 0.02


def test_a_missing_or_non_numeric_value_skips_its_bar_and_an_empty_row_is_left_out() -> None:
    rows = [
        {"case": "a", "offMs": 10, "onMs": 12},
        {"case": "b", "offMs": 11},
        {"case": "c", "offMs": None, "onMs": "n/a"},
        {"case": "d", "offMs": 9, "onMs": True},
        {"case": "e", "offMs": 8, "onMs": 7},
    ]
    (chart,) = charts_of("rows", rows)
    assert [group.label for group in chart.groups] == ["a", "b", "d", "e"]
    missing = [
        (group.label, bar.text) for group in chart.groups for bar in group.bars if bar.missing
    ]
    assert missing == [("b", "no value"), ("d", "no value")]
    assert "on no value for b" in chart.desc


@pytest.mark.parametrize(
    ("key", "rows"),
    [
        (
            "tp8Pp1",
            [{"ppRank": 0, "tpRank": i, "globalRank": i, "socket": f"/tmp/s{i}"} for i in range(8)],
        ),
        (
            "shapeRows",
            [{"tensorParallel": 2 + i // 24, "fullTokens": i, "padded": 2 * i} for i in range(48)],
        ),
        ("sourceReceipts", [{"label": f"s{i}", "bytes": 1000 + i} for i in range(5)]),
        ("flags", [{"fusionOffOk": True, "fusionOnOk": False}, {"fusionOffOk": True}]),
        ("words", [{"before": "slow", "after": "fast"}, {"before": "a", "after": "b"}]),
        ("oneRow", [{"batchSize": 1, "tokensPerSecond": 97.72}]),
        ("prs", [{"oldPr": 48036, "newPr": 48849}, {"oldPr": 1, "newPr": 2}]),
        ("zeros", [{"offMs": 0, "onMs": 0}, {"offMs": 0, "onMs": 0}]),
        ("descending", [{"size": 8, "copies": 1}, {"size": 4, "copies": 2}]),
    ],
)
def test_tables_with_nothing_paired_or_categorical_get_no_chart(
    key: str, rows: list[dict[str, Any]]
) -> None:
    assert charts_of(key, rows) == ()


def test_a_single_row_of_a_pair_is_still_a_comparison() -> None:
    (chart,) = charts_of("rows", [{"latencyBeforeMs": 12.5, "latencyAfterMs": 9}])
    assert [group.label for group in chart.groups] == ["Row 1"]


def test_a_chart_of_more_than_the_bar_cap_is_left_out_and_the_table_stays() -> None:
    def rows(count: int) -> list[dict[str, Any]]:
        return [{"case": f"c{i}", "offMs": i + 1, "onMs": i + 2} for i in range(count)]

    assert len(charts_of("rows", rows(MAX_BARS // 2))) == 1
    block = build_block("rows", rows(MAX_BARS // 2 + 1))
    assert isinstance(block, Table)
    assert block.charts == ()
    assert len(block.rows) == MAX_BARS // 2 + 1


def test_long_labels_are_cut_to_fit_and_every_text_stays_inside_the_view_box() -> None:
    label = "FLASHINFER_MLA_SPARSE on a very long WIDE build name " * 3
    rows = [{"name": label + str(i), "offTokens": 1_234_567 * i, "onTokens": 9} for i in (1, 2)]
    (chart,) = charts_of("rows", rows)
    for group in chart.groups:
        assert group.full.startswith(label.strip())
        assert group.label.endswith("…") and len(group.label) < len(group.full)
        assert group.x + text_width(group.label) <= WIDTH - PAD
        for bar in group.bars:
            assert bar.x >= 0 and bar.x + bar.width <= WIDTH
            assert bar.text_x + text_width(bar.text, VALUE_FONT) <= WIDTH
    coordinates = [bar.x for group in chart.groups for bar in group.bars] + [chart.height]
    assert all(round(value, 1) == value for value in coordinates)


def test_a_chart_carries_the_caveat_numbers_of_the_rows_it_draws() -> None:
    rows = [
        {"case": "a", "offMs": 1, "onMs": 2, "boundary": "first"},
        {"case": "b", "boundary": "second"},
        {"case": "c", "offMs": 3, "onMs": 4, "claimBoundary": "third"},
    ]
    block = build_block("rows", rows)
    assert isinstance(block, Table)
    (chart,) = block.charts
    assert chart.notes == (1, 3)
    assert [(c.number, c.text) for c in block.callouts if c.number in chart.notes] == [
        (1, "first"),
        (3, "third"),
    ]


def test_a_number_too_large_for_a_float_is_a_missing_bar_not_a_crash() -> None:
    rows = [(None, {"offMs": 10**400, "onMs": 1}), (None, {"offMs": 2, "onMs": 1})]
    (chart,) = build_charts("Rows", "rows", rows)
    assert values(chart) == ["no value", "1 ms", "2 ms", "1 ms"]


def test_a_time_labels_its_bars_in_the_sites_one_time_format() -> None:
    rows = [
        (None, {"runAt": "2026-08-24T11:09:48Z", "offMs": 10, "onMs": 8}),
        (None, {"runAt": "2026-08-25T13:00:00+02:00", "offMs": 12, "onMs": 9}),
    ]
    (chart,) = build_charts("Runs", "runs", rows)
    assert [group.label for group in chart.groups] == [
        "2026-08-24 11:09 UTC",
        "2026-08-25 11:00 UTC",
    ]


# ---------------------------------------------------------------------------------------------
# The real site
# ---------------------------------------------------------------------------------------------


def section_of(page: BeautifulSoup, anchor: str) -> Tag:
    """Return the section that a block's heading opens."""
    heading = page.find(id=anchor)
    assert isinstance(heading, Tag), anchor
    section = heading.find_parent("section")
    assert isinstance(section, Tag)
    return section


def figures_of(section: Tag) -> list[Tag]:
    """Return the chart figures drawn for the section's own table."""
    box = section.find("div", class_="charts", recursive=False)
    return box.find_all("figure", class_="chart") if isinstance(box, Tag) else []


def column(section: Tag, title: str) -> list[str]:
    """Return the cell texts of one column of the section's own table."""
    table = section.find("table", class_="data")
    assert isinstance(table, Tag)
    titles = [th.get_text(strip=True) for th in table.select("thead th")]
    index = titles.index(title)
    return [row.find_all("td")[index].get_text(strip=True) for row in table.select("tbody tr")]


def share(length: str) -> float:
    """Read a horizontal length the page draws as a share of the chart's width: '37.5%'."""
    assert length.endswith("%"), length
    return float(length.removesuffix("%"))


def printed(figure: Tag) -> list[str]:
    """Return the value texts of a figure's bars, in drawing order."""
    return [text.get_text() for text in figure.select("text.chart-value")]


def group_labels(figure: Tag) -> list[str]:
    """Return a figure's group labels."""
    return [text.get_text() for text in figure.select("text.chart-label")]


def all_figures(site: Path) -> list[tuple[str, Tag]]:
    """Return (page, figure) for every chart of every built guide."""
    return [
        (path.parent.name, figure)
        for path in sorted((site / "guides").glob("*/index.html"))
        for figure in soup(path).select("figure.chart")
    ]


def test_the_speed_rows_chart_prints_the_tables_values(site: Path) -> None:
    section = section_of(soup(site / FUSION), "speed-rows")
    (figure,) = figures_of(section)
    off, on = column(section, "Fusion off tokens/s"), column(section, "Fusion on tokens/s")
    expected = [value for pair in zip(off, on, strict=True) for value in pair]
    assert [text.removesuffix(" tokens/s") for text in printed(figure)] == expected
    assert [text.get_text() for text in figure.select(".chart-legend text")] == [
        "Fusion off",
        "Fusion on",
    ]
    assert figure.svg.title.get_text() == "Tokens/s: fusion off vs fusion on"


def caveat_of(figure: Tag) -> str:
    """Return the text of the callouts a chart's caption points to (or 'the caveat above')."""
    caption = figure.find("figcaption")
    assert isinstance(caption, Tag)
    assert caption.find_previous_sibling("svg") is figure.svg
    links = caption.select(".chart-caveat a.note-ref")
    page = figure.find_parent("html")
    if links:
        notes = [page.find(id=link["href"].removeprefix("#")) for link in links]
    else:
        assert "the caveat above" in caption.get_text(), caption
        notes = [figure.find_parent("div", class_="charts").find_previous_sibling("aside")]
    assert all(isinstance(note, Tag) and "callout" in note["class"] for note in notes)
    return " ".join(" ".join(note.get_text(" ").split()) for note in notes)


def test_the_chart_points_to_the_caveat_of_its_rows_printed_once_above(site: Path) -> None:
    section = section_of(soup(site / FUSION), "speed-rows")
    (figure,) = figures_of(section)
    caveat = "Pull-request author measurement; no local GPU reproduction."
    assert caveat in caveat_of(figure)
    assert caveat not in figure.get_text()
    assert " ".join(section.get_text(" ").split()).count(caveat) == 1


def test_the_memory_rows_get_one_chart_per_pair(site: Path) -> None:
    figures = figures_of(section_of(soup(site / FUSION), "reported-memory-rows"))
    assert [figure.svg.title.get_text() for figure in figures] == [
        "Target memory (GB): fusion off vs fusion on",
        "KV budget (GB): fusion off vs fusion on",
        "KV capacity (tokens): fusion off vs fusion on",
    ]


def test_every_chart_is_an_accessible_image_with_title_and_desc(site: Path) -> None:
    figures = all_figures(site)
    assert len(figures) >= 9
    for page, figure in figures:
        svg = figure.svg
        assert svg["role"] == "img" and svg["width"] == "100%", page
        # no viewBox: texts keep their px size while bars stretch across the column
        assert "viewbox" not in svg.attrs and float(svg["height"]) > 0, page
        title, desc = svg.find("title", recursive=False), svg.find("desc", recursive=False)
        assert title.get_text().strip() and desc.get_text().strip(), page
        assert svg["aria-labelledby"].split() == [title["id"], desc["id"]], page
        assert figure.find("figcaption").get_text().strip(), page
        assert figure.find("script") is None and not figure.find_all(onload=True), page
        assert all(not name.startswith("on") for tag in figure.find_all(True) for name in tag.attrs)


def test_bar_lengths_are_proportional_to_their_printed_values(site: Path) -> None:
    for page, figure in all_figures(site):
        bars = [
            (share(bar["width"]), abs(number(bar.find_next_sibling("text").get_text())))
            for bar in figure.select("rect.chart-bar")
        ]
        assert len(bars) >= 2, page
        widest, largest = max(bars, key=lambda bar: bar[1])
        for width, value in bars:
            assert width == pytest.approx(value * widest / largest, abs=0.1), (page, value)
        assert all(
            share(bar["x"]) >= 0 and share(bar["x"]) + share(bar["width"]) <= 100
            for bar in figure.select("rect.chart-bar")
        ), page


def test_the_nightly_regression_has_a_tokens_off_vs_on_chart_per_concurrency(site: Path) -> None:
    (figure,) = figures_of(section_of(soup(site / SEQUENCE), NESTED_TOKENS))
    assert figure.svg.title.get_text() == "Tokens/s: off vs on"
    assert group_labels(figure) == ["N1", "N8", "N32"]
    assert printed(figure) == [f"{n} tokens/s" for n in (75, 61, 407, 353, 931, 875)]


def test_kv_duplication_is_charted_per_dcp_size(site: Path) -> None:
    page = soup(site / DCP)
    figures = figures_of(section_of(page, "kv-duplication-rows"))
    assert figures
    assert figures[0].svg.title.get_text() == "Total KV copies across TP group by DCP size"
    for figure in figures:
        assert group_labels(figure) == ["DCP size 1", "DCP size 2", "DCP size 4", "DCP size 8"]
    assert printed(figures[0]) == ["8", "4", "2", "1"]
    assert figures_of(section_of(page, "head-envelope-rows"))


@pytest.mark.parametrize(
    ("page", "anchor"),
    [
        (WEIGHT_CACHE, "topology-examples"),
        (SEQUENCE, "shape-rows"),
        (SEQUENCE, "topology-matrix"),
        (FUSION, "release-boundary"),
    ],
)
def test_tables_without_paired_or_categorical_numbers_have_no_chart(
    site: Path, page: Path, anchor: str
) -> None:
    assert section_of(soup(site / page), anchor).select("figure.chart") == []


def test_no_source_table_is_charted_and_ids_stay_unique(site: Path) -> None:
    for path in sorted((site / "guides").glob("*/index.html")):
        page = soup(path)
        assert page.select("section.sources figure") == []
        counts = Counter(tag["id"] for tag in page.find_all(id=True))
        assert [name for name, count in counts.items() if count > 1] == [], path


def test_a_new_record_shape_gets_charts_too(make_project: Callable[..., Project]) -> None:
    project = make_project("unseen")
    record = project.record("unseen.json")
    record["warmupProbeRows"] = [
        {"region": "eu-west", "coldStartMsBaseline": 1310, "coldStartMsCandidate": 1200.5},
        {"region": "us-east", "coldStartMsBaseline": 980, "claimBoundary": "UNSEEN one run"},
        {"region": "ap-south", "coldStartMsBaseline": -12, "coldStartMsCandidate": 40},
    ]
    record["batchSweep"] = [
        {"batchSize": size, "p50LatencyMs": 10 + size, "gpuIndex": size % 3} for size in (1, 8, 64)
    ]
    project.save_record("unseen.json", record)
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / "guides" / record["status"] / "index.html")
    (paired,) = figures_of(section_of(page, "warmup-probe-rows"))
    assert paired.svg.title.get_text() == "Cold start (ms): baseline vs candidate"
    assert group_labels(paired) == ["eu-west", "us-east", "ap-south"]
    assert printed(paired) == ["1,310 ms", "1,200.5 ms", "980 ms", "no value", "-12 ms", "40 ms"]
    assert "UNSEEN one run" in caveat_of(paired)
    (sweep,) = figures_of(section_of(page, "batch-sweep"))
    assert sweep.svg.title.get_text() == "P50 latency (ms) by batch size"
    assert group_labels(sweep) == ["Batch size 1", "Batch size 8", "Batch size 64"]
    assert sweep.svg["width"] == "100%" and re.fullmatch(r"\d+(\.\d)?", sweep.svg["height"])


def test_hostile_text_in_a_chart_stays_text(make_project: Callable[..., Project]) -> None:
    project = make_project("unseen")
    record = project.record("unseen.json")
    payload = "</text></svg><script>alert(1)</script><img src=x onerror=alert(2)>"
    record["hostileRows"] = [
        {"label": payload, "tokensOff": 10, "tokensOn": 12, "boundary": payload},
        {"label": "plain", "tokensOff": 11, "tokensOn": 9},
    ]
    project.save_record("unseen.json", record)
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / "guides" / record["status"] / "index.html")
    (figure,) = figures_of(section_of(page, "hostile-rows"))
    assert figure.find("script") is None and figure.find("img") is None
    assert not [tag for tag in figure.find_all(True) if any(a.startswith("on") for a in tag.attrs)]
    assert payload in figure.svg.get_text()
    assert payload in caveat_of(figure)


def test_bars_are_drawn_in_shares_of_the_width_that_land_on_the_layout_at_width_px() -> None:
    rows = [
        {"case": "a", "deltaBeforeGb": -20, "deltaAfterGb": 10},
        {"case": "b", "deltaBeforeGb": 40, "deltaAfterGb": None},
    ]
    (chart,) = charts_of("deltaRows", rows)
    assert chart.inset > PAD  # room in px for the value of the negative bar
    (plain,) = charts_of("rows", [{"offMs": 1, "onMs": 2}, {"offMs": 3, "onMs": 4}])
    assert plain.inset == PAD and plain.axis == "0%"

    def px(share: str, inset: float) -> float:
        return inset + float(share.removesuffix("%")) * WIDTH / 100

    assert px(chart.axis, chart.inset) == pytest.approx(chart.axis_x, abs=0.1)
    for bar in (bar for group in chart.groups for bar in group.bars):
        assert px(bar.start, chart.inset) == pytest.approx(bar.x, abs=0.1)
        assert float(bar.span.removesuffix("%")) * WIDTH / 100 == pytest.approx(bar.width, abs=0.1)
        assert px(bar.end, chart.inset) + bar.text_dx == pytest.approx(bar.text_x, abs=0.1)
