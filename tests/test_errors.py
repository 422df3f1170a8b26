"""Broken inputs, run through the real CLI: one clear line per problem, and the old site kept."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Project, soup, tree_digest

RECORD = "records/000_f07234cca5c1d19d.json"
GUIDE = "content/glm-5-2-vllm-sequence-parallel-moe.md"
GUIDE_RECORD = "20260823213641-315eecbf11"
CACHE_RECORD = "002_586eeffa1bb1f1a1.json"
CACHE_GUIDE = "content/glm-5-2-sglang-weight-cache-daemon.md"
LINE_FORM = re.compile(r"^(?P<path>[^/:\s][^:]*): (?P<location>[^:]+): (?P<message>.+)$")


@pytest.fixture
def built(project: Project) -> Project:
    """A project copy whose `_site/` was built successfully once."""
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert (project.out / "index.html").is_file()
    return project


def run_failing(project: Project, *args: str, code: int = 1) -> list[str]:
    """Build `project` expecting failure; check the old `_site/` is intact; return stderr lines."""
    before = tree_digest(project.out)
    assert before, "build the project successfully before breaking it"
    result = project.run(*args)
    output = result.stdout + result.stderr
    assert result.returncode == code, output
    assert "Traceback" not in output
    assert tree_digest(project.out) == before
    assert not list(project.out.parent.glob(".*staging*"))
    return result.stderr.splitlines()


def problems(project: Project) -> list[tuple[str, str, str]]:
    """Run a failing build; return its (path, location, message) lines after checking the form."""
    *lines, summary = run_failing(project)
    count = len(lines)
    assert (
        summary == f"Aborted: {count} input error{'s' if count != 1 else ''}; nothing was written."
    )
    parsed = []
    for line in lines:
        match = LINE_FORM.match(line)
        assert match, f"not `path: location: message`: {line!r}"
        assert (project.root / match["path"]).is_file(), f"names no input file: {line!r}"
        parsed.append((match["path"], match["location"], match["message"]))
    return parsed


def expect(found: list[tuple[str, str, str]], *wanted: tuple[str, str, str]) -> None:
    """Assert `found` is exactly the `wanted` (path, location, message fragment) lines, any order."""
    assert sorted((path, location) for path, location, _ in found) == sorted(
        (path, location) for path, location, _ in wanted
    )
    for path, location, fragment in wanted:
        messages = [m for p, loc, m in found if (p, loc) == (path, location)]
        assert any(fragment in message for message in messages), (fragment, messages)


def edit(project: Project, relative: str, pattern: str, replacement: str) -> str:
    """Replace the first line matching `pattern` in a project file; return the new text."""
    path = project.root / relative
    text, count = re.subn(pattern, replacement, path.read_text("utf-8"), count=1, flags=re.M)
    assert count == 1, f"{pattern!r} not found in {relative}"
    path.write_text(text, "utf-8")
    return text


def change_record(project: Project, relative: str, change: Callable[[dict[str, Any]], Any]) -> None:
    """Load a record, let `change` mutate it, and save it back."""
    name = relative.removeprefix("records/")
    data = project.record(name)
    change(data)
    project.save_record(name, data)


def line_of(text: str, line: str) -> int:
    """Return the 1-based number of the first line equal to `line`."""
    return text.splitlines().index(line) + 1


def truncate(project: Project, relative: str) -> json.JSONDecodeError:
    """Cut a record file short; return the error `json` itself reports for it."""
    path = project.root / relative
    text = path.read_text("utf-8")
    path.write_text(text[: len(text) // 3], "utf-8")
    with pytest.raises(json.JSONDecodeError) as error:
        json.loads(path.read_text("utf-8"))
    assert error.value.lineno > 1 and error.value.colno > 1
    return error.value


def test_malformed_json_names_line_and_column(built: Project) -> None:
    error = truncate(built, RECORD)
    location = f"line {error.lineno} column {error.colno}"
    # One problem only: the record's intact guide is not reported as an orphan too.
    expect(problems(built), (RECORD, location, f"invalid JSON: {error.msg}"))


def test_receipt_hash_that_is_not_64_hex_is_a_contradiction_located_by_index(
    built: Project,
) -> None:
    change_record(built, RECORD, lambda d: d["sourceReceipts"][3].update(sha256="abc123"))
    lines = run_failing(built)
    errors = [line.split(None, 3) for line in lines if line.lstrip().startswith("error")]
    assert ["error", "verify", f"{RECORD}:"] in [words[:3] for words in errors]
    assert any(
        "sourceReceipts.3.sha256: expected 64 lower-case hex digits, found 'abc123'" in line
        for line in lines
    )
    assert any("invariants.allSourceHashesValid: expected false" in line for line in lines)
    assert lines[-1] == "Aborted: 2 check errors; nothing was written."


def test_checked_at_without_time_zone_is_refused(built: Project) -> None:
    change_record(built, RECORD, lambda d: d.update(checkedAt="2026-08-24T11:09:48"))
    expect(problems(built), (RECORD, "checkedAt", "timezone"))


def test_invariant_given_as_string_is_not_a_bool(built: Project) -> None:
    change_record(built, RECORD, lambda d: d["invariants"].update(allSourceHashesValid="true"))
    expect(problems(built), (RECORD, "invariants.allSourceHashesValid", "boolean"))


def test_record_without_operation_id_is_refused(built: Project) -> None:
    change_record(built, RECORD, lambda d: d.pop("operationId"))
    own = [problem for problem in problems(built) if problem[0] == RECORD]
    expect(own, (RECORD, "operationId", "required"))


def test_front_matter_yaml_error_names_the_line_in_the_markdown_file(built: Project) -> None:
    text = edit(built, GUIDE, r"^reader_job: .*$", "reader_job: broken: value")
    line = line_of(text, "reader_job: broken: value")
    assert line > 2
    expect(problems(built), (GUIDE, f"line {line}", "invalid YAML"))


def test_missing_title_is_reported_as_front_matter_field(built: Project) -> None:
    edit(built, GUIDE, r"^title: .*\n", "")
    expect(problems(built), (GUIDE, "front matter.title", "required"))


def test_misspelled_field_is_named(built: Project) -> None:
    edit(built, GUIDE, r"^title:", "titel:")
    expect(
        problems(built),
        (GUIDE, "front matter.titel", "not permitted"),
        (GUIDE, "front matter.title", "required"),
    )


@pytest.mark.parametrize("slug", ["GLM-5-2-moe", "..", "glm/../escape", "a..b"])
def test_slug_must_be_lowercase_words_joined_by_hyphens(built: Project, slug: str) -> None:
    edit(built, GUIDE, r"^slug: .*$", f'slug: "{slug}"')
    expect(problems(built), (GUIDE, "front matter.slug", "pattern"))


def test_description_of_160_characters_is_too_long_for_search_results(built: Project) -> None:
    edit(built, GUIDE, r"^description: .*$", f'description: "{"d" * 160}"')
    expect(problems(built), (GUIDE, "front matter.description", "159"))


def test_duplicate_yaml_key_names_the_line_of_the_repeat(built: Project) -> None:
    text = edit(built, GUIDE, r"^(slug: .*)$", r'\1\ntitle: "Again"')
    line = line_of(text, 'title: "Again"')
    expect(problems(built), (GUIDE, f"line {line}", "duplicate key 'title'"))


def test_guide_for_unknown_record_names_the_operation_id(built: Project) -> None:
    edit(built, GUIDE, r"^record: .*$", "record: 20990101000000-deadbeef00")
    expect(
        problems(built),
        (GUIDE, "front matter.record", "no record with operationId '20990101000000-deadbeef00'"),
    )


def test_two_guides_with_one_slug_are_both_named(built: Project) -> None:
    (built.root / CACHE_GUIDE).unlink()
    text = (built.root / GUIDE).read_text("utf-8")
    copy = "content/zz-copy.md"
    built.write(copy, text.replace(GUIDE_RECORD, built.record(CACHE_RECORD)["operationId"]))
    [(path, location, message)] = problems(built)
    assert location == "front matter.slug"
    assert {path, *re.findall(r"content/\S+\.md", message)} == {GUIDE, copy}
    assert "'glm-5-2-vllm-sequence-parallel-moe'" in message


def test_two_guides_for_one_record_name_the_record(built: Project) -> None:
    text = (built.root / GUIDE).read_text("utf-8")
    copy = "content/zz-copy.md"
    built.write(copy, re.sub(r"(?m)^slug: .*$", "slug: another-slug", text))
    found = problems(built)
    expect(found, (copy, "front matter.record", f"record '{GUIDE_RECORD}'"))
    assert GUIDE in found[0][2]


def test_every_problem_of_one_run_is_reported_on_its_own_line(built: Project) -> None:
    other = "records/001_c50d248a53023c77.json"
    other_guide = "content/glm-5-2-vllm-decode-context-parallel.md"
    fusion = "content/glm-5-2-sglang-dsa-indexer-fusion.md"
    error = truncate(built, other)
    edit(built, other_guide, r"^title:", "titel:")
    edit(built, fusion, r"^slug: .*$", "slug: Bad_Slug")
    change_record(built, RECORD, lambda d: d.update(checkedAt="2026-08-24"))
    shutil.copy(built.root / "records" / CACHE_RECORD, built.root / "records/004_copy.json")
    edit(built, GUIDE, r"^record: .*$", "record: 20990101000000-deadbeef00")
    expect(
        problems(built),
        (other, f"line {error.lineno} column {error.colno}", "invalid JSON"),
        (other_guide, "front matter.titel", "not permitted"),
        (other_guide, "front matter.title", "required"),
        (fusion, "front matter.slug", "pattern"),
        (RECORD, "checkedAt", "timezone"),
        ("records/004_copy.json", "operationId", "duplicate operationId"),
        (GUIDE, "front matter.record", "20990101000000-deadbeef00"),
    )


def test_duplicate_operation_id_names_both_record_files(built: Project) -> None:
    copy = "records/004_copy.json"
    shutil.copy(built.root / "records" / CACHE_RECORD, built.root / copy)
    operation_id = built.record(CACHE_RECORD)["operationId"]
    found = problems(built)
    expect(found, (copy, "operationId", f"duplicate operationId '{operation_id}'"))
    assert f"records/{CACHE_RECORD}" in found[0][2]


def test_record_without_any_decision_is_refused(built: Project) -> None:
    moe = "records/003_d837ec4df0827390.json"
    assert "decision" not in built.record(moe.removeprefix("records/"))
    change_record(built, moe, lambda d: d.pop("rolloutDecision"))
    expect(problems(built), (moe, "decision", "'decision' or 'rolloutDecision'"))


def test_unknown_option_is_bad_usage(built: Project) -> None:
    lines = run_failing(built, "--bogus", code=2)
    assert lines[0].startswith("usage: python build.py")
    assert lines[-1].endswith("unrecognized arguments: --bogus")


@pytest.mark.parametrize("target", [".", "records", "content", "records/sub", "templates/assets"])
def test_out_folder_that_is_or_holds_or_sits_in_inputs_is_refused(
    built: Project, target: str
) -> None:
    inputs = [tree_digest(built.root / name) for name in ("records", "content", "templates")]
    assert len(inputs[0]) == 4 and "assets/style.css" in inputs[2]
    line, summary = run_failing(built, "--out", target)
    assert line.startswith(f"{(built.root / target).resolve()}: output: refusing")
    assert summary == "Aborted: the site was not written; the previous output is untouched."
    assert "build inputs" in line
    assert [tree_digest(built.root / n) for n in ("records", "content", "templates")] == inputs
    assert not (built.root / "records" / "sub").exists()


def test_record_without_prose_is_a_draft_titled_from_its_status(project: Project) -> None:
    (project.root / CACHE_GUIDE).unlink()
    status = project.record(CACHE_RECORD)["status"]
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert f"1 draft(s) left out: /guides/{status}/" in result.stdout
    assert not (project.out / "guides" / status).exists()
    audit = project.run("--audit")
    [note] = [line for line in audit.stderr.splitlines() if " draft " in line]
    assert note.split()[:3] == ["info", "draft", f"records/{CACHE_RECORD}:"]
    assert "not published (needs prose)" in note
    assert project.run("--drafts").returncode == 0
    page = soup(project.out / "guides" / status / "index.html")
    [h1] = page.find_all("h1")
    assert h1.get_text(" ", strip=True).startswith("Pinned source zero runtime weight cache")
    assert not (project.out / "guides" / "glm-5-2-sglang-weight-cache-daemon").exists()
