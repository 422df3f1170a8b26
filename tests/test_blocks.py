"""Values formatted for scanning, and blocks chosen by the shape of the data."""

from __future__ import annotations

from site_builder.present.blocks import Group, Items, KeyValue, Table, build_block
from site_builder.present.cells import format_cell


def test_booleans_and_nulls_are_badges_not_python_words() -> None:
    assert format_cell(True).text == "yes"
    assert format_cell(False).kind == "bool"
    assert format_cell(None).text == "none"


def test_large_numbers_are_grouped_but_identifiers_are_not() -> None:
    assert format_cell(1900000, "fusionOffKvCapacityTokens").text == "1,900,000"
    assert format_cell(3212.05, "tokens").text == "3,212.05"
    assert format_cell(50005, "openCorrectnessPr").text == "50005"
    assert format_cell(53134, "issue").text == "53134"


def test_hashes_keep_their_full_value_and_urls_only_link_over_http() -> None:
    commit = "49e384ce9d304648e9959666ecb8ce8cd98d0deb"
    assert format_cell(commit).kind == "hash"
    assert format_cell(commit).text == commit
    assert format_cell("https://example.org/a").href == "https://example.org/a"
    assert format_cell("javascript:alert(1)").kind == "text"
    assert format_cell("data:text/html,x").href == ""


def test_list_of_objects_is_a_table_with_union_columns_in_first_seen_order() -> None:
    block = build_block("rows", [{"a": 1, "b": 2}, {"a": 3, "c": 4}])
    assert isinstance(block, Table)
    assert [column.title for column in block.columns] == ["A", "B", "C"]
    assert [cell.text for cell in block.rows[1].cells] == ["3", "—", "4"]


def test_row_boundaries_are_lifted_into_numbered_callouts() -> None:
    rows = [
        {"x": 1, "boundary": "first caveat"},
        {"x": 2, "boundary": "second caveat"},
        {"x": 3, "boundary": "first caveat"},
    ]
    block = build_block("rows", rows)
    assert [column.title for column in block.columns] == ["X"]
    assert [(c.text, c.scope) for c in block.callouts] == [
        ("first caveat", "rows 1, 3"),
        ("second caveat", "row 2"),
    ]
    assert [row.notes for row in block.rows] == [(1,), (2,), (1,)]


def test_verdict_columns_are_marked() -> None:
    block = build_block("m", [{"tag": "v1", "decision": "go", "auditResult": "ok", "resultant": 1}])
    assert [column.verdict for column in block.columns] == [False, True, True, False]


def test_flat_object_is_key_value_with_its_boundary_as_callout() -> None:
    block = build_block("o", {"a": 1, "claimBoundary": "only a reporter"})
    assert isinstance(block, KeyValue)
    assert [pair.label for pair in block.pairs] == ["A"]
    assert block.callouts[0].text == "only a reporter"


def test_list_of_scalars_is_a_list_and_nested_objects_are_groups() -> None:
    assert isinstance(build_block("l", ["a", "b"]), Items)
    block = build_block("g", {"x": 1, "inner": {"y": {"z": 2}, "w": [1, 2]}})
    assert isinstance(block, Group)
    assert isinstance(block.children[0], KeyValue)
    assert block.children[1].title == "Inner"


def test_object_of_same_shaped_objects_is_one_table_with_a_case_column() -> None:
    block = build_block(
        "tokensPerSecond", {"n1": {"off": 75, "on": 61}, "n8": {"off": 407, "on": 353}}
    )
    assert isinstance(block, Table)
    assert [column.title for column in block.columns] == ["Case", "Off", "On"]
    assert [row.cells[0].text for row in block.rows] == ["N1", "N8"]


def test_deep_nesting_is_flattened_past_the_depth_limit() -> None:
    value: dict = {"leaf": "bottom"}
    for level in range(60):
        value = {f"level{level}": value, "n": level}
    block = build_block("deep", value)
    depth = 0
    while isinstance(block, Group):
        block = block.children[-1]
        depth += 1
    assert depth <= 8
    texts = [pair.cell.text for pair in block.pairs]
    assert "bottom" in texts


def test_list_of_lists_is_a_table_with_a_column_per_position() -> None:
    block = build_block("chunkSizes", [[2048, 0.41], [4096, 0.63], [8192, 1.12]])
    assert isinstance(block, Table)
    assert block.title == "Chunk sizes"
    assert [column.title for column in block.columns] == ["Column 1", "Column 2"]
    assert [column.numeric for column in block.columns] == [True, True]
    assert [[cell.text for cell in row.cells] for row in block.rows] == [
        ["2,048", "0.41"],
        ["4,096", "0.63"],
        ["8,192", "1.12"],
    ]
    assert block.charts and block.charts[0].title == "Column 2 by column 1"


def test_list_of_lists_columns_are_named_from_the_key_when_it_names_them() -> None:
    def titles(key: str, rows: list) -> list[str]:
        block = build_block(key, rows)
        assert isinstance(block, Table)
        return [column.title for column in block.columns]

    # "A by B": the rows are keyed by B, so B is the first column
    assert titles("latencyByChunkSize", [[1, 0.18], [2, 0.31]]) == ["Chunk size", "Latency"]
    assert titles("tokensVsSeconds", [[10, 0.5], [20, 0.9]]) == ["Tokens", "Seconds"]
    assert titles("input_and_output", [[1, 2]]) == ["Input", "Output"]
    # the parts must match the number of columns; otherwise columns are numbered
    assert titles("latencyByChunkSize", [[1, 2, 3]]) == ["Column 1", "Column 2", "Column 3"]
    assert titles("claimBoundaryVsX", [["a", "b"]]) == ["Column 1", "Column 2"]


def test_list_of_lists_cells_keep_their_json_path_and_ragged_rows_get_empty_cells() -> None:
    block = build_block("grid", [[1, "a", True], [2], [3, None]], at="probe.grid")
    assert isinstance(block, Table)
    paths = [[cell.path for cell in row.cells] for row in block.rows]
    assert paths[0] == ["probe.grid.0.0", "probe.grid.0.1", "probe.grid.0.2"]
    assert paths[2][:2] == ["probe.grid.2.0", "probe.grid.2.1"]
    assert [cell.kind for cell in block.rows[1].cells] == ["number", "empty", "empty"]
    assert [cell.text for cell in block.rows[2].cells] == ["3", "none", "—"]


def test_list_of_lists_holding_objects_keeps_the_grouped_fallback() -> None:
    block = build_block("nested", [[{"a": 1}], [2]])
    assert isinstance(block, Group)
    assert [child.title for child in block.children] == ["Item 1", "Item 2"]


def test_iso_times_are_time_cells_in_the_site_wide_format() -> None:
    cell = format_cell("2026-08-24T13:09:48+02:00", "measuredAt", "x.measuredAt")
    assert (cell.kind, cell.text, cell.datetime) == (
        "time",
        "2026-08-24 11:09 UTC",
        "2026-08-24T11:09:48+00:00",
    )
    assert cell.path == "x.measuredAt"
    assert format_cell("2026-08-24T11:09:48Z").text == "2026-08-24 11:09 UTC"
    assert (format_cell("2026-08-24").text, format_cell("2026-08-24").datetime) == (
        "2026-08-24",
        "2026-08-24",
    )
    nested = format_cell(["2026-08-24T11:09:48Z"])
    assert nested.items[0].kind == "time"


def test_strings_that_only_look_like_times_stay_text() -> None:
    for text in ("2026-02-30", "2026-08-24T25:00:00Z", "0001-01-01T00:00:00+05:00", "v2026-08-24"):
        assert format_cell(text).kind == "text", text
        assert format_cell(text).text == text


def test_a_time_inside_an_object_in_a_cell_keeps_its_label_and_time_kind() -> None:
    cell = format_cell({"tag": "v1", "publishedAt": "2026-08-24T11:09:48Z"})
    assert [(item.kind, item.text, item.label) for item in cell.items] == [
        ("text", "Tag: v1", ""),
        ("time", "2026-08-24 11:09 UTC", "Published at"),
    ]
