"""A record whose sections no template has seen still builds a complete page, drawn by shape."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pytest
from bs4 import BeautifulSoup, Tag

from tests.conftest import BOUNDARY_KEYS, EDITORIAL_KEYS, Project, soup

RECORD = "unseen.json"
HEADER_KEYS = ("schemaVersion", "operationId", "checkedAt", "status", "invariants")
KNOWN_HOMES = {
    "decision": "section.decision",
    "sourceReceipts": "section.sources",
    "overlapAudit": "section.nearby",
    "revisions": "section.pins",
    "model": "section.pins",
}
CORE_KEYS = (*HEADER_KEYS, *KNOWN_HOMES)


class Built(NamedTuple):
    """One build of the fixture: the CLI run, the project copy, its record and the guide page."""

    run: subprocess.CompletedProcess[str]
    project: Project
    record: dict[str, Any]
    page: BeautifulSoup


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Built:
    """Build the unseen fixture through the real CLI (the page is empty if the build failed)."""
    project = make_project("unseen")
    run = project.run()
    record = project.record(RECORD)
    path = project.out / "guides" / record["status"] / "index.html"
    page = soup(path) if path.exists() else BeautifulSoup("", "html.parser")
    return Built(run, project, record, page)


def leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (key, value) for every scalar leaf of a JSON value; an empty list reads as null."""
    if value == [] or value == {}:
        yield key, None
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, key)
    else:
        yield key, value


def lists_of_objects(value: Any) -> Iterator[list[dict[str, Any]]]:
    """Yield every non-empty list whose items are all objects, at any depth."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        yield value
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    )
    for child in children:
        yield from lists_of_objects(child)


def norm(text: str) -> str:
    """Collapse whitespace and drop thousands separators (1,234,567 -> 1234567)."""
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", " ".join(text.split()))


def shown(value: Any) -> str:
    """Return how a scalar reads on the page: yes/no, none, plain digits, or the string itself."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return norm(str(value))


def text_of(element: Tag) -> str:
    """Return an element's visible text plus any title attributes (for shortened hashes)."""
    titles = " ".join(str(tag["title"]) for tag in element.find_all(title=True))
    return norm(f"{element.get_text(' ')} {titles}")


def occurrences(form: str, text: str) -> int:
    """Count `form` in `text` as a whole token (so '8' does not match '0.8' or 'node-08')."""
    return len(re.findall(rf"(?<![\w-])(?<!\w\.){re.escape(form)}(?![\w-]|\.\w)", text))


def shape_keys(record: dict[str, Any]) -> list[str]:
    """Return the record's sections that are drawn by shape, in record order."""
    return [key for key in record if key not in CORE_KEYS and key not in EDITORIAL_KEYS]


def homes(page: BeautifulSoup, record: dict[str, Any]) -> dict[str, Tag]:
    """Map each published section of the record to the page element that draws it."""
    drawn = page.select("section.record-section")
    found = dict(zip(shape_keys(record), drawn, strict=True))
    for key, selector in KNOWN_HOMES.items():
        found[key] = page.select_one(selector)
    return found


def table_holding(page: BeautifulSoup, text: str) -> Tag:
    """Return the table with a body cell whose text is exactly `text`."""
    cell = page.find("td", string=lambda s: s is not None and s.strip() == text)
    assert cell is not None, f"no table cell reads {text!r}"
    return cell.find_parent("table")


def test_the_build_exits_zero_with_no_error(built: Built) -> None:
    # The fixture publishes records without prose (site.yaml publish_without_prose: true).
    assert built.run.returncode == 0, built.run.stderr
    assert not [line for line in built.run.stderr.splitlines() if line.startswith("  error")]


def test_every_scalar_leaf_of_every_published_section_is_visible_in_its_section(
    built: Built,
) -> None:
    record, page = built.record, built.page
    for key, home in homes(page, record).items():
        assert home is not None, f"section {key} is not on the page"
        text = text_of(home)
        forms = Counter(shown(value) for _, value in leaves(record[key]))
        for form, expected in forms.items():
            if not re.fullmatch(r"yes|no|none|[\d.e+-]+", form):
                assert form in text, f"{key}: {form!r} is not shown"
            else:
                assert occurrences(form, text) >= expected, f"{key}: {form!r} shown too few times"


def test_each_list_of_objects_is_a_table_with_a_header_row_and_one_body_row_per_item(
    built: Built,
) -> None:
    record, page = built.record, built.page
    tables = [rows for key in shape_keys(record) for rows in lists_of_objects(record[key])]
    assert len(tables) >= 2
    for rows in tables:
        first = next(v for k, v in rows[0].items() if isinstance(v, str) and k not in BOUNDARY_KEYS)
        table = table_holding(page, first)
        header = table.select("thead tr")
        assert len(header) == 1 and header[0].find_all("th"), f"{first}: no header row"
        assert len(table.select("tbody tr")) == len(rows), f"{first}: wrong row count"


def test_an_object_of_same_keyed_objects_is_one_table_with_a_case_column(built: Built) -> None:
    record, page = built.record, built.page
    cases = record["latencyByBatchSize"]
    first = next(iter(cases.values()))["result"]
    table = table_holding(page, first)
    assert table.select_one("thead th").get_text(strip=True) == "Case"
    assert len(table.select("tbody tr")) == len(cases)


def test_every_boundary_string_is_a_visible_callout_and_never_a_table_cell(built: Built) -> None:
    record, page = built.record, built.page
    boundaries = {
        value
        for key in shape_keys(record)
        for name, value in leaves(record[key])
        if name in BOUNDARY_KEYS and isinstance(value, str)
    }
    assert len(boundaries) >= 4
    callouts = [norm(aside.get_text(" ")) for aside in page.select("aside.callout")]
    cells = [norm(td.get_text(" ")) for td in page.find_all("td")]
    for boundary in boundaries:
        assert any(norm(boundary) in callout for callout in callouts), f"no callout: {boundary}"
        assert not any(norm(boundary) in cell for cell in cells), f"in a cell: {boundary}"


def test_receipts_keyed_by_name_are_listed_with_link_size_and_full_sha256(built: Built) -> None:
    record, page = built.record, built.page
    rows = page.select("section.sources table tbody tr")
    assert len(rows) == len(record["sourceReceipts"])
    for receipt in record["sourceReceipts"]:
        row = next((r for r in rows if receipt["name"] in r.get_text()), None)
        assert row is not None, f"receipt {receipt['name']!r} is not listed"
        assert row.find("a", href=receipt["url"]) is not None
        text = text_of(row)
        assert str(receipt["bytes"]) in text
        assert receipt["sha256"] in text
        assert norm(receipt["note"]) in text


def test_a_list_of_strings_is_a_bulleted_list_with_one_item_per_string(built: Built) -> None:
    record, page = built.record, built.page
    lists = homes(page, record)["operatorChecklist"].find_all("ul")
    assert len(lists) == 1
    items = [li.get_text(" ", strip=True) for li in lists[0].find_all("li")]
    assert items == record["operatorChecklist"]


def test_editorial_request_ids_and_internal_paths_appear_in_no_built_file(built: Built) -> None:
    project, record = built.project, built.record
    secrets = {
        value
        for key in EDITORIAL_KEYS
        for _, value in leaves(record.get(key))
        if isinstance(value, str)
    }
    assert {"req-UNSEEN-EDITORIAL-123", "tmp/unseen/batch.json"} <= secrets
    files = [path for path in project.out.rglob("*") if path.is_file()]
    assert files
    for path in files:
        content = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in content, f"{secret} leaked into {path.name}"


def test_the_decision_box_holds_the_classification_and_every_listed_item(built: Built) -> None:
    record, page = built.record, built.page
    box = page.select_one("section.decision")
    assert box is not None
    assert record["decision"]["classification"] in box.get_text()
    items = [li.get_text(" ", strip=True) for li in box.find_all("li")]
    listed = [
        item for value in record["decision"].values() if isinstance(value, list) for item in value
    ]
    assert listed
    for item in listed:
        assert item in items


def test_headings_and_column_titles_are_humanised_from_camel_case_keys(built: Built) -> None:
    page = built.page
    titles = {
        tag.get_text(" ", strip=True) for tag in page.find_all(["h2", "h3", "h4", "h5", "th"])
    }
    assert {"KV cache probe rows", "GPU memory GiB per rank", "NVLink domain size"} <= titles


def nested(levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """Return `leaf` wrapped in `levels` objects, each with a fact of its own."""
    return leaf if not levels else {"depth": levels, "inner": nested(levels - 1, leaf)}


UNUSUAL_PLACEMENTS = [
    pytest.param(
        [{"probeName": "UNSEEN-row", "reading": {"value": 3, "transferWarning": "UNSEEN in-row"}}],
        "UNSEEN in-row",
        id="boundary-in-an-object-inside-a-row",
    ),
    pytest.param(
        [
            {"probeName": "UNSEEN-a", "claimBoundary": "UNSEEN beside a null"},
            {"claimBoundary": None},
        ],
        "UNSEEN beside a null",
        id="boundary-column-with-a-null",
    ),
    pytest.param(
        nested(7, {"note": "UNSEEN deepest", "auditBoundary": "UNSEEN deep boundary"}),
        "UNSEEN deep boundary",
        id="boundary-past-the-depth-limit",
    ),
]


@pytest.mark.parametrize(("section", "boundary"), UNUSUAL_PLACEMENTS)
def test_a_boundary_in_an_unusual_place_is_still_a_callout_and_not_a_cell(
    make_project: Callable[..., Project], section: Any, boundary: str
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    project.save_record(RECORD, {**record, "unusualPlacement": section})
    assert project.run().returncode == 0
    page = soup(project.out / "guides" / record["status"] / "index.html")
    assert any(boundary in aside.get_text() for aside in page.select("aside.callout"))
    assert not any(boundary in td.get_text() for td in page.find_all("td"))


def test_editorial_keys_nested_anywhere_are_never_published(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    record["decision"]["serp"] = {"requestId": "UNSEEN-NESTED-SERP-1"}
    record["overlapAudit"]["aiHot"] = {"batchArtifact": "tmp/UNSEEN-NESTED-PATH.json"}
    record["nestedHolder"] = [{"value": 1, "discovery": "UNSEEN-NESTED-DISCOVERY"}]
    project.save_record(RECORD, record)
    assert project.run().returncode == 0
    built = "\n".join(
        p.read_text("utf-8")
        for p in project.out.rglob("*")
        if p.is_file() and "pagefind" not in p.parts
    )
    for needle in ("UNSEEN-NESTED-SERP-1", "UNSEEN-NESTED-PATH", "UNSEEN-NESTED-DISCOVERY"):
        assert needle not in built
