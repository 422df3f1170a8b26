"""Property tests: any record, mutation or front matter either builds or is a located InputError.

Every generated case runs in-process through the real decoders (`decode.decode_record`,
`decode.decode_doc`, `decode.decode_settings`) and then `normalize`, `assemble`, `verify_site`,
`render_site`, `run_checks` and the report formatters, on top of the seed project's settings,
registry and rules (tests/fixtures/seed-site/) and the real templates and assets. A case
passes when it builds, or when it raises `InputError` whose every problem is one line
`source: location: message` naming a file of the case. Any other exception fails. Crashes
found earlier have a regression test each at the end of this file.

Runs are bounded and reproducible: `derandomize=True`, no example database, fixed
`max_examples` (2,100 generated cases in all, about 35 s of CPU; FUZZ_SCALE=N runs N times
as many for a deeper local search). The same crashes through the real CLI, with `_site/`
checked, are in test_faults.py (test_input_that_crashes_today_builds_or_fails_cleanly).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2 import Environment

from site_builder.cache.reuse import files_digest
from site_builder.checks.report import format_json, format_text, problems_as_findings
from site_builder.checks.site import run_checks
from site_builder.config import BuildConfig
from site_builder.errors import InputError, Problem, one_line
from site_builder.inputs import decode, load
from site_builder.inputs.assemble import assemble
from site_builder.inputs.normalize import normalize
from site_builder.model.models import Finding, Page
from site_builder.model.raw import Inputs, RawDoc, RawRecord, UnreadRecord
from site_builder.render import pages as render
from site_builder.render.site_pages import render_site
from site_builder.verify.records import verify_site
from tests.conftest import load_records, seed_root

SEED = seed_root()
CONFIG = BuildConfig.for_root(SEED, SEED / "_site")  # templates are read; nothing is written
RECORD_ID = "fuzz-record-1"
SEEDS = load_records()
SEED_NAMES = sorted(SEEDS)
COUNTS: Counter[str] = Counter()
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
"""Multiplies every max_examples: FUZZ_SCALE=10 for a deeper local run; CI uses 1."""


def fuzz_settings(examples: int) -> settings:
    """Bounded, reproducible settings: the same examples on every run, no database."""
    return settings(
        max_examples=max(1, round(examples * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )


@functools.cache
def base_inputs() -> Inputs:
    """The seed project's settings, assets, registry and rules; records and docs are replaced."""
    inputs = load.load_inputs(CONFIG)
    assert not inputs.problems, inputs.problems
    return inputs


@pytest.fixture(scope="module", autouse=True)
def cached_templates() -> Iterator[None]:
    """Compile the templates once: render_site builds a fresh Jinja environment per call.

    The environment is a pure function of the templates read, so reusing it for the same
    bytes changes no output; it only keeps two thousand renders inside the time budget.
    """
    made: dict[str, Environment] = {}

    def make_env(folder: Path, found: Mapping[str, bytes]) -> Environment:
        key = files_digest(found)
        if key not in made:
            made[key] = original(folder, found)
        return made[key]

    original = render.make_env
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "make_env", make_env)
        yield
    print(f"\nfuzz outcomes: {dict(sorted(COUNTS.items()))}")


# --- running one case ---------------------------------------------------------------------


def decode_files(
    records: list[tuple[str, bytes]], docs: list[tuple[str, bytes]]
) -> tuple[list[RawRecord | UnreadRecord], list[RawDoc], list[Problem]]:
    """Decode files exactly as load.load_inputs does: read problems are collected, not raised."""
    problems: list[Problem] = []
    raw_records: list[RawRecord | UnreadRecord] = []
    raw_docs = []
    for source, raw in records:
        try:
            raw_records.append(RawRecord(source, decode.decode_record(raw)))
        except decode.ReadError as error:
            text = raw[: decode.MAX_RECORD_BYTES].decode("utf-8", errors="replace")
            match = load._OPERATION_ID.search(text)
            problem = Problem(source, error.location, error.message)
            raw_records.append(UnreadRecord(problem, match.group(1) if match else None))
    for source, raw in docs:
        try:
            front, body, body_line = decode.decode_doc(raw)
            raw_docs.append(RawDoc(source, front, body, body_line))
        except decode.ReadError as error:
            problems.append(Problem(source, error.location, error.message))
    return raw_records, raw_docs, problems


def run_case(
    records: list[tuple[str, bytes]],
    docs: list[tuple[str, bytes]] | None = None,
    settings_yaml: bytes | None = None,
) -> str:
    """Run one case through every stage; return its outcome or fail the test."""
    base = base_inputs()
    docs = docs or []
    sources = {source for source, _ in [*records, *docs]}
    sources |= {base.settings.source, base.registry.source, base.rules.source}  # type: ignore[union-attr]
    try:
        raw_records, raw_docs, problems = decode_files(records, docs)
        settings_doc = base.settings
        if settings_yaml is not None:
            try:
                settings_doc = RawDoc(
                    base.settings.source, decode.decode_settings(settings_yaml), ""
                )
            except decode.ReadError as error:
                problems.append(Problem(base.settings.source, error.location, error.message))
                settings_doc = RawDoc(base.settings.source, {}, "")
        inputs = replace(
            base,
            records=tuple(raw_records),
            docs=tuple(raw_docs),
            settings=settings_doc,
            problems=tuple(problems),
        )
        site = assemble(normalize(inputs))
        verifications = verify_site(site)
        pages = render_site(site, CONFIG, verifications)
        findings = run_checks(site, pages, verifications)
        check_built(pages, findings, list(verifications.values()))
        outcome = "built"
    except InputError as error:
        outcome = check_input_error(error, sources)
    COUNTS[outcome] += 1
    return outcome


def check_built(pages: list[Page], findings: list[Finding], verifications: list[Any]) -> None:
    """A built site is well-formed and its report can be printed either way."""
    paths = [page.path for page in pages]
    assert paths == sorted(set(paths))
    assert {"index.html", "guides/index.html", "404.html", "sitemap.xml"} <= set(paths)
    for page in pages:
        assert isinstance(page.content, bytes)
        if page.path.endswith((".html", ".xml", ".txt")):
            page.content.decode("utf-8")
    assert all(finding.severity in {"error", "warning", "info"} for finding in findings)
    html = sum(1 for path in paths if path.endswith(".html"))
    format_text(findings, html, include_info=True, verifications=verifications)
    json.loads(format_json(findings, html, verifications))


PROBLEM_FORM = re.compile(r"^(?P<source>[^:\n\r]+): (?P<location>.+?): (?P<message>.+)$", re.S)


def check_input_error(error: InputError, sources: set[str]) -> str:
    """Every problem names a file of the case and reads `source: location: message`."""
    assert error.problems, "an InputError must carry at least one problem"
    for problem in error.problems:
        assert isinstance(problem, Problem), problem
        assert problem.source in sources, f"names no input of the case: {problem}"
        assert isinstance(problem.location, str) and problem.location.strip(), problem
        assert isinstance(problem.message, str) and problem.message.strip(), problem
        line = str(problem)
        assert line == one_line(f"{problem.source}: {problem.location}: {problem.message}")
        assert "\n" not in line and "\r" not in line, line
        assert PROBLEM_FORM.match(line), line
    report = json.loads(format_json(problems_as_findings(error.problems), 0))
    assert report["summary"]["errors"] == len(error.problems)
    return "input error"


# --- strategies ---------------------------------------------------------------------------


def _rule_words() -> list[str]:
    """Every name the verification rules mention: the keys most likely to reach formulas."""
    text = (SEED / "content" / "rules.yaml").read_text("utf-8")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", text))
    return sorted(words - {"field", "formula", "tolerance", "note", "derived", "invariants"})


INTERESTING_KEYS = sorted(
    {
        *_rule_words(),
        *("tag", "publishedAt", "mergedAt", "checkedAt", "url", "sha256", "bytes", "label"),
        *("id", "role", "name", "source", "boundary", "claimBoundary", "auditBoundary"),
        *("transferWarning", "classification", "decision", "rolloutDecision", "result"),
        *("verdict", "outcome", "auditResult", "reportedMemoryRows", "measuredTokens"),
        *("headCommit", "auditCommit", "releaseTag", "stableTag", "nearestPages"),
        *("closestPages", "nearestPage", "nearestPageIntent", "newPageIntent", "distinction"),
        *("readerJob", "difference", "aiHot", "aiHotCandidate", "serp", "discovery"),
        *("prepublicationSitemapCanonicals", "distinctIntent", "gpuRuns", "modelCalls"),
        *("runtimeBoundary", "boundaries", "scope", "overlapAudit", "prNumber", "issue"),
        *("key", "siblings", "lastModified", "calculatedFoo", "computedBar", "glm52Fp8Tp4"),
        *("__proto__", "", " ", "a.b", "0", "1", "-", "item 1", "UPPER", "ünïcode", "😀"),
        *("<b>x</b>", "{{ x }}", "a:b", "a: b", "a\nb", "tab\tkey"),
    }
)
INTERESTING_STRINGS = [
    *("", " ", "none", "null", "true", "0", "-1", "1.5", "1e400", "NaN", "Infinity"),
    *("https://glm52.ai/guides/x/", "https://glm52.ai", "http://example.org/a?b#c"),
    *("/guides/glm-5-2-expert-parallelism/", "/guides/x", "/", "#top", "#", "//evil.example"),
    *("javascript:alert(1)", "data:text/html,x", "mailto:a@b.c", "http://[abc", "http://a b"),
    *("v1.2.3", "v0.5.18rc1", "1.2", "v", "2026-08-24T11:09:48Z", "2026-08-24", "24:00"),
    *("2026-08-24T11:09:48", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59Z"),
    *("0" * 40, "f" * 64, "abc123", "A" * 40, "g" * 64),
    *("<script>alert(1)</script>", "</main><main>", '"><img src=x onerror=1>', "&amp;"),
    *("{{ 7*7 }}", "{% raw %}", "{#", "\u202e", "a\nb", "line\r\nbreak", "\x00", "\x0b"),
    *("ü", "😀", "—", "x" * 300, "narrow-lab-pilot-only", "GLM-5.2", "a" * 2000),
]

HEX = "0123456789abcdef"
CAMEL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
keys = st.one_of(
    st.sampled_from(INTERESTING_KEYS),
    st.text(max_size=10),
    st.text(CAMEL, min_size=1, max_size=18),
)
strings = st.one_of(
    st.text(max_size=30),
    st.sampled_from(INTERESTING_STRINGS),
    st.text(HEX, min_size=40, max_size=40),
    st.text(HEX, min_size=64, max_size=64),
    st.builds("v{}.{}.{}".format, st.integers(0, 20), st.integers(0, 20), st.integers(0, 20)),
    st.builds("https://glm52.ai/{}".format, st.text(max_size=12)),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30) + 1, max_value=10**30 - 1),
    st.sampled_from([0, 1, -1, 10**30 - 1, 10**30, 2**53 + 1, 1048576, 86, 21]),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(keys, children, max_size=3),
        st.lists(
            st.dictionaries(st.sampled_from(["a", "b", "tag", "source"]), children), max_size=3
        ),
    ),
    max_leaves=10,
)


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A value wrapped in 1 to 70 levels of objects and lists (MAX_DEPTH is 64, flatten at 6)."""
    value, key = draw(scalars), draw(keys)
    for _ in range(draw(st.one_of(st.integers(1, 12), st.integers(1, 12), st.integers(1, 70)))):
        value = {key: value} if draw(st.booleans()) else [value]
    return value


section_values = st.one_of(json_values, deep_values())
datetimes = st.datetimes(
    min_value=datetime(1, 1, 1),
    max_value=datetime(9999, 12, 31, 23, 59, 59),
    timezones=st.one_of(
        st.just(UTC),
        st.builds(
            lambda minutes: timezone(timedelta(minutes=minutes)),
            st.integers(-23 * 60, 23 * 60),
        ),
    ),
)
checked_at = st.one_of(
    st.builds(lambda d: d.isoformat(), datetimes),
    st.builds(lambda d: d.isoformat(), datetimes),
    st.just("2026-08-24T11:09:48Z"),
    st.just("2026-08-24T11:09:48Z"),
    st.sampled_from(["2026-08-24", "2026-08-24T11:09:48", "yesterday", "", "2026-13-01T00:00Z"]),
)
receipts = st.fixed_dictionaries(
    {
        "url": strings,
        "bytes": st.integers(min_value=-5, max_value=10**12),
        "sha256": st.one_of(st.text(HEX, min_size=64, max_size=64), strings),
    },
    optional={"label": strings, "id": scalars, "role": strings, "name": strings, "x": json_values},
)
nearby_pages = st.fixed_dictionaries(
    {"url": strings}, optional={"readerJob": strings, "difference": strings}
)
overlap_audits = st.fixed_dictionaries(
    {},
    optional={
        "nearestPages": st.lists(st.one_of(nearby_pages, nearby_pages, scalars), max_size=2),
        "closestPages": st.lists(st.one_of(strings, strings, scalars), max_size=2),
        "nearestPage": strings,
        "nearestPageIntent": strings,
        "newPageIntent": strings,
        "distinction": strings,
        "prepublicationSitemapCanonicals": st.integers(-1, 200),
        "distinctIntent": st.booleans(),
        "extra": json_values,
    },
)


@st.composite
def records(draw: st.DrawFn, operation_id: str | None = None) -> dict[str, Any]:
    """A record whose core fields are valid in type, plus random sections of random shapes."""
    record: dict[str, Any] = {
        "schemaVersion": draw(st.integers(1, 10**6)),
        "operationId": operation_id or "op" + draw(st.text(CAMEL + "._-", min_size=1, max_size=20)),
        "checkedAt": draw(checked_at),
        "status": draw(st.one_of(st.text(min_size=1, max_size=60), st.sampled_from(["a", "-"]))),
        "revisions": draw(st.dictionaries(keys, scalars, max_size=4)),
        "sourceReceipts": draw(st.lists(receipts, max_size=3)),
        "model": draw(st.dictionaries(keys, json_values, max_size=3)),
        "invariants": draw(st.dictionaries(keys, st.booleans(), max_size=3)),
    }
    decision = {"classification": "c" + draw(st.text(max_size=30))}
    decision.update(draw(st.dictionaries(keys, json_values, max_size=2)))
    record[draw(st.sampled_from(["decision", "rolloutDecision"]))] = decision
    if draw(st.booleans()):
        record["overlapAudit"] = draw(overlap_audits)
    for key in ("runtimeBoundary", "boundaries", "scope"):
        if draw(st.integers(0, 3)) == 0:
            record[key] = draw(json_values)
    for key, value in draw(st.dictionaries(keys, section_values, max_size=4)).items():
        record.setdefault(key, value)
    return record


def encode(draw: st.DrawFn, data: Any) -> bytes:
    """Serialise a JSON value the ways an editor might: compact or indented, escaped or not."""
    text = json.dumps(
        data,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 2])),
        allow_nan=True,
    )
    return text.encode("utf-8", errors="surrogatepass")


# --- (a) generated records ------------------------------------------------------------------


@fuzz_settings(600)
@given(data=st.data())
def test_generated_records_build_or_raise_located_input_errors(data: st.DataObject) -> None:
    count = data.draw(st.sampled_from([1, 1, 1, 2]), label="records")
    files = []
    for index in range(count):
        record = data.draw(records(), label=f"record {index}")
        files.append((f"records/fuzz-{index}.json", encode(data.draw, record)))
    run_case(files)


@fuzz_settings(150)
@given(data=st.data())
def test_record_values_outside_json_are_located_input_errors(data: st.DataObject) -> None:
    """NaN and infinity, lone surrogates, huge integers and duplicate keys in a valid record."""
    record = data.draw(records(operation_id=RECORD_ID), label="record")
    poison = data.draw(
        st.sampled_from(
            [float("nan"), float("inf"), -float("inf"), "\ud800", "a\udfffb", 10**30, -(10**40)]
        ),
        label="poison",
    )
    where = data.draw(st.sampled_from(["model", "section", "key", "deep"]), label="where")
    if where == "model":
        record["model"]["poison"] = poison
    elif where == "section":
        record["poisonSection"] = [poison]
    elif where == "key" and isinstance(poison, str):
        record["model"][poison] = 1
    else:
        record["deep"] = {"a": [{"b": poison}]}
    raw = encode(data.draw, record)
    duplicate = data.draw(st.booleans(), label="duplicate key")
    if duplicate:
        raw = raw.replace(b'"schemaVersion"', b'"status": "dup", "schemaVersion"', 1)
    outcome = run_case([("records/fuzz.json", raw)])
    if duplicate or where != "key" or isinstance(poison, str):
        assert outcome != "built", "a value outside JSON was accepted"


# --- (b) mutations of the real seed records -------------------------------------------------


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Yield the path of every field and list item, parents before children."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key)
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*path, index)
            yield from _paths(child, (*path, index))


def _retype(value: Any, kind: str) -> Any:
    """Return `value` as another JSON type."""
    conversions: dict[str, Callable[[Any], Any]] = {
        "str": lambda v: json.dumps(v) if not isinstance(v, str) else v + "x",
        "list": lambda v: [v],
        "object": lambda v: {"value": v},
        "null": lambda v: None,
        "bool": lambda v: not bool(v),
        "int": lambda v: len(v) if isinstance(v, str | list | dict) else -1,
        "float": lambda v: 0.1 if not isinstance(v, float) else v * 3.7,
        "empty": lambda v: type(v)() if isinstance(v, str | list | dict) else "",
    }
    return conversions[kind](value)


@st.composite
def mutated_seeds(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A real seed record with one to three fields dropped, replaced or retyped."""
    name = draw(st.sampled_from(SEED_NAMES))
    record = copy.deepcopy(SEEDS[name])
    pick = draw(st.randoms(use_true_random=False))  # uniform over hundreds of paths
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(record))
        top = [path for path in paths if len(path) == 1]
        path = pick.choice(top) if pick.random() < 0.3 else pick.choice(paths)
        parent = record
        for part in path[:-1]:
            parent = parent[part]
        leaf = path[-1]
        operation = draw(st.sampled_from(["drop", "replace", "retype", "duplicate", "rename"]))
        if operation == "drop":
            del parent[leaf]
        elif operation == "replace":
            parent[leaf] = draw(json_values)
        elif operation == "retype":
            kinds = ["str", "list", "object", "null", "bool", "int", "float", "empty"]
            parent[leaf] = _retype(parent[leaf], draw(st.sampled_from(kinds)))
        elif operation == "duplicate" and isinstance(parent, list):
            parent.insert(leaf, copy.deepcopy(parent[leaf]))
        elif operation in {"duplicate", "rename"} and isinstance(parent, dict):
            parent[draw(keys)] = parent.pop(leaf) if operation == "rename" else parent[leaf]
        if not record:
            break
    return name, record


def _seed_guide(operation_id: Any) -> list[tuple[str, bytes]]:
    """The seed prose file that renders a seed, so the mutated record is joined with it."""
    for doc in base_inputs().docs:
        if doc.front.get("record") == operation_id:
            return [(doc.source, (SEED / doc.source).read_bytes())]
    return []


@fuzz_settings(120)
@given(data=st.data())
def test_mutated_seed_records_build_or_raise_located_input_errors(data: st.DataObject) -> None:
    name, record = data.draw(mutated_seeds(), label="mutated seed")
    original = SEEDS[name]["operationId"]
    docs = _seed_guide(original) if data.draw(st.booleans(), label="with prose") else []
    run_case([(f"records/{name}", encode(data.draw, record))], docs)


# --- (c) front matter: mappings and YAML text -----------------------------------------------

slugs = st.lists(st.text("abz019", min_size=1, max_size=6), min_size=1, max_size=4).map("-".join)
yaml_values = st.recursive(
    st.one_of(scalars, st.dates(), datetimes),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=8,
)
MARKDOWN_PIECES = [
    "## Heading\n",
    "### Sub *heading*\n",
    "# Top heading\n",
    "text with **bold** and `code`\n",
    "[guide](/guides/glm-5-2-expert-parallelism/)\n",
    "[missing](/guides/nowhere/)\n",
    "[anchor](#nowhere)\n",
    "[site](https://glm52.ai/guides/x)\n",
    "[js](javascript:alert(1))\n",
    "[bracket](http://[abc)\n",
    "<script>alert(1)</script>\n",
    "| a | b |\n| - | - |\n| 1 | 2 |\n",
    "```\n---\ncode\n```\n",
    "---\n",
    "~~gone~~\n",
    "\n",
    "![img](/x.png)\n",
]
markdown_bodies = st.lists(
    st.one_of(st.sampled_from(MARKDOWN_PIECES), st.text(max_size=30)), max_size=8
).map("".join)


@st.composite
def front_matters(draw: st.DrawFn) -> dict[Any, Any]:
    """A valid front matter mapping, then fields dropped, replaced or added at random."""
    front: dict[Any, Any] = {
        "title": draw(st.text(min_size=1, max_size=120)),
        "description": draw(st.text(min_size=1, max_size=159)),
        "slug": draw(slugs),
        "record": draw(st.sampled_from([RECORD_ID] * 6 + ["other-record", ""])),
        "reader_job": draw(st.text(min_size=1, max_size=100)),
        "tags": draw(
            st.one_of(
                st.lists(slugs, max_size=4),
                st.lists(slugs, max_size=4),
                st.lists(st.one_of(slugs, st.text(max_size=8)), max_size=13),
            )
        ),
        "published": draw(st.dates()),
    }
    if draw(st.booleans()):
        front["updated"] = draw(st.one_of(st.dates(), st.none()))
    names = [*front, "extra", "titel", "", 1, None, True, date(2026, 1, 1)]
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(names))
        operation = draw(st.sampled_from(["drop", "replace", "add"]))
        if operation == "drop":
            front.pop(name, None)
        elif operation == "replace":
            front[name] = draw(yaml_values)
        else:
            front[draw(st.one_of(keys, st.integers()))] = draw(yaml_values)
    return front


def _guide_case(front_matter: bytes, body: str = "") -> str:
    """Run a guide with the given front matter text beside a minimal valid record."""
    return _doc_case(b"---\n" + front_matter + b"---\n" + body.encode("utf-8"))


def _doc_case(doc: bytes) -> str:
    """Run one guide file, whatever its bytes, beside a minimal valid record."""
    record = json.dumps(minimal_record()).encode()
    return run_case([("records/fuzz.json", record)], [("content/fuzz.md", doc)])


def minimal_record(**changes: Any) -> dict[str, Any]:
    """A valid record with only the core fields."""
    return {
        "schemaVersion": 1,
        "operationId": RECORD_ID,
        "checkedAt": "2026-08-24T11:09:48Z",
        "status": "fuzz-status",
        "revisions": {},
        "sourceReceipts": [],
        "model": {},
        "invariants": {},
        "decision": {"classification": "go"},
        **changes,
    }


@fuzz_settings(350)
@given(data=st.data())
def test_front_matter_mappings_build_or_raise_located_input_errors(data: st.DataObject) -> None:
    front = data.draw(front_matters(), label="front matter")
    text = yaml.safe_dump(
        front,
        allow_unicode=data.draw(st.booleans(), label="unicode"),
        default_flow_style=data.draw(st.sampled_from([False, None, True]), label="flow"),
        sort_keys=False,
    )
    _guide_case(text.encode("utf-8"), data.draw(markdown_bodies, label="body"))


YAML_TOKENS = [
    *("title: ", "slug: ", "record: ", "published: ", "tags: ", "description: "),
    *("reader_job: ", "updated: ", "- ", "[", "]", "{", "}", ", ", ": ", "\n", "  ", '"'),
    *("'", "&a ", "*a", "!!python/object:os.system ", "!!binary ", "!custom ", "? ", "|\n"),
    *(">\n", "---\n", "...\n", "%YAML 1.1\n", "# comment\n", "2026-08-24", "null", "~"),
    *("2026-02-30", "2026-13-01", "2026-08-24 25:00:00", "2026-08-24T11:09:48+99:00"),
    *("true", "no", "0x1F", "1e999", ".nan", "<<: *a\n", "\t", "\\", "\ufeff", "\x85"),
    *(RECORD_ID, "glm-5-2-fuzz", "é", "\x00", "\x07", "\r\n"),
]
yaml_texts = st.lists(
    st.one_of(st.sampled_from(YAML_TOKENS), st.text(max_size=6)), max_size=25
).map("".join)


@st.composite
def deep_yaml(draw: st.DrawFn) -> str:
    """A flow collection nested 1 to 60 levels deep under a valid field, or 520 or 700."""
    depth = draw(st.one_of(*[st.integers(1, 60)] * 7, st.sampled_from([520, 700])))
    opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
    return f"tags: {opener * depth}{closer * depth}\n"


VALID_FRONT = (
    f"title: Fuzz guide\ndescription: A guide for fuzzing.\nslug: fuzz-guide\n"
    f"record: {RECORD_ID}\nreader_job: Decide nothing.\npublished: 2026-08-24\n"
)


@fuzz_settings(450)
@given(data=st.data())
def test_front_matter_yaml_text_builds_or_raises_located_input_errors(
    data: st.DataObject,
) -> None:
    shape = data.draw(st.sampled_from(["tokens", "valid+tokens", "deep", "bytes", "fences"]))
    if shape == "tokens":
        _guide_case(_utf8(data.draw(yaml_texts)))
    elif shape == "valid+tokens":
        _guide_case(VALID_FRONT.encode() + _utf8(data.draw(yaml_texts)), data.draw(markdown_bodies))
    elif shape == "deep":
        _guide_case(VALID_FRONT.encode() + _utf8(data.draw(deep_yaml())))
    elif shape == "bytes":
        prefix = data.draw(st.sampled_from([b"", b"---\n", b"---\r\n"]))
        _doc_case(prefix + data.draw(st.binary(max_size=200)))
    else:
        lines = ["---", "--- ", "---\r", "", "a: b", "----", "\ufeff---", VALID_FRONT]
        _doc_case("\n".join(data.draw(st.lists(st.sampled_from(lines)))).encode())


@fuzz_settings(150)
@given(data=st.data())
def test_site_settings_yaml_builds_or_raises_located_input_errors(data: st.DataObject) -> None:
    """The same YAML decoder reads content/site.yaml: random settings text is located too."""
    valid = (SEED / "content" / "site.yaml").read_bytes()
    extra = data.draw(st.one_of(yaml_texts, deep_yaml()), label="yaml")
    head = data.draw(st.sampled_from([b"", valid]), label="head")
    run_case(
        [("records/fuzz.json", json.dumps(minimal_record()).encode())], [], head + _utf8(extra)
    )


# --- random bytes through the record decoder ------------------------------------------------

JSON_TOKENS = [
    *("{", "}", "[", "]", ",", ":", '"', '"a"', '"operationId"', "1", "-0", "1e999", "NaN"),
    *("true", "null", "\\u0000", "\\ud800", " ", "\n", '"\\', "\ufeff", "\xff", "0" * 40),
]


@fuzz_settings(280)
@given(data=st.data())
def test_record_bytes_build_or_raise_located_input_errors(data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(["binary", "tokens", "edited", "deep"]), label="shape")
    if shape == "binary":
        raw = data.draw(st.binary(max_size=300))
    elif shape == "tokens":
        tokens = data.draw(st.lists(st.sampled_from(JSON_TOKENS), max_size=40))
        raw = "".join(tokens).encode("utf-8")
    elif shape == "edited":
        raw = bytearray(json.dumps(minimal_record(), indent=2).encode())
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(raw)))
            if data.draw(st.booleans()) and at < len(raw):
                del raw[at : at + data.draw(st.integers(1, 8))]
            else:
                raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        raw = bytes(raw)
    else:
        depth = data.draw(st.integers(1, 5000))
        raw = b'{"a":' + b"[" * depth + b"]" * depth + b"}"
    run_case([("records/fuzz.json", raw)])


def _utf8(text: str) -> bytes:
    """Encode generated text, keeping any lone surrogate as the invalid bytes it would be."""
    return text.encode("utf-8", errors="surrogatepass")


# --- crashes found earlier, one regression test each ----------------------------------------


def test_release_row_with_numeric_tag_is_not_a_crash() -> None:
    # verify._release_order selects rows with _TAG.match(str(row["tag"])), then passes the raw
    # value to _version(), whose re.match() raises TypeError for the float 1.5.
    rows = [
        {"tag": 1.5, "publishedAt": "2026-01-01T00:00:00Z"},
        {"tag": 1.6, "publishedAt": "2026-01-02T00:00:00Z"},
    ]
    run_case([("records/fuzz.json", json.dumps(minimal_record(releases=rows)).encode())])


def test_link_with_unbalanced_bracket_is_not_a_crash() -> None:
    # cells.format_cell publishes any value matching HTTP_URL_PATTERN as a link; the link
    # check's urlsplit() then raises ValueError('Invalid IPv6 URL') outside any handler.
    record = minimal_record(sources={"paper": "http://[abc"})
    run_case([("records/fuzz.json", json.dumps(record).encode())])


def test_deeply_nested_front_matter_is_a_located_error() -> None:
    # decode._yaml catches yaml.YAMLError only; PyYAML's recursive composer raises
    # RecursionError on ~1,000 nested '[' (2 KB of text), which escapes load_inputs.
    doc = ("---\n" + VALID_FRONT + "tags: " + "[" * 1000 + "]" * 1000 + "\n---\n").encode()
    run_case(
        [("records/fuzz.json", json.dumps(minimal_record()).encode())], [("content/x.md", doc)]
    )


@pytest.mark.parametrize("value", ["2026-02-30", "2026-13-01", "2026-08-24 25:00:00"])
def test_impossible_front_matter_date_is_a_located_error(value: str) -> None:
    # YAML resolves `published: 2026-02-30` as a timestamp and PyYAML's constructor calls
    # datetime.date(2026, 2, 30), whose ValueError is not a yaml.YAMLError, so load._yaml
    # lets it escape load_inputs: the CLI prints a traceback for a one-character typo.
    doc = f"---\n{VALID_FRONT}---\n".replace("published: 2026-08-24", f"published: {value}")
    run_case(
        [("records/fuzz.json", json.dumps(minimal_record()).encode())],
        [("content/x.md", doc.encode())],
    )


def test_checked_at_at_the_datetime_limits_is_not_a_crash() -> None:
    # RecordCore accepts any aware datetime; assemble/render call astimezone(UTC), which
    # raises OverflowError for 0001-01-01 with a positive offset (or 9999-12-31, negative).
    record = minimal_record(checkedAt="0001-01-01T00:00:00+05:00")
    run_case([("records/fuzz.json", json.dumps(record).encode())])


@pytest.mark.parametrize(
    "case",
    ["control character in front matter", "newline in a record key", "newline in record name"],
)
def test_every_problem_is_one_line(case: str) -> None:
    # The README: "Every problem is one line, `file: location: message`". PyYAML's ReaderError
    # text holds a newline ('... not allowed\n  in "<unicode string>", position 8'), and
    # record keys and front-matter values are put into problem lines unescaped.
    if case == "control character in front matter":
        docs = [("content/x.md", b"---\n" + VALID_FRONT.encode() + b"tags: [a\x07]\n---\n")]
        records = [("records/fuzz.json", json.dumps(minimal_record()).encode())]
    elif case == "newline in a record key":
        docs = []
        records = [
            ("records/fuzz.json", json.dumps(minimal_record(revisions={"a\nb": []})).encode())
        ]
    else:
        docs = [("content/x.md", f"---\n{VALID_FRONT}---\n".replace(RECORD_ID, '"a\\nb"').encode())]
        records = [("records/fuzz.json", json.dumps(minimal_record()).encode())]
    assert run_case(records, docs) == "input error"
