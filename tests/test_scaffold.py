"""`build.py --new RECORD`: a draft guide scaffolded from a record validates, builds and refuses harm."""

from __future__ import annotations

import inspect
import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from site_builder.commands.scaffold import HEADINGS, scaffold_guide
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.inputs.decode import decode_doc
from site_builder.inputs.load import NOT_REGULAR
from site_builder.model.models import BuildReport, Finding
from site_builder.model.schema import FrontMatter
from site_builder.pipeline import build
from tests.conftest import SEED_SITE, Project, soup, without_waiting

TODAY = date(2026, 9, 1)
SEED_RECORDS = sorted(path.name for path in (SEED_SITE / "records").glob("*.json"))
ENGINES = {
    "000_f07234cca5c1d19d.json": "sglang",
    "001_c50d248a53023c77.json": "vllm",
    "002_586eeffa1bb1f1a1.json": "sglang",
    "003_d837ec4df0827390.json": "vllm",
}
SHA = "0123456789abcdef" * 4
NEW_SHAPE: dict[str, Any] = {
    "schemaVersion": 3,
    "operationId": "20260901090000-newshape01",
    "checkedAt": "2026-09-01T09:00:00+02:00",
    "status": "pinned-source-zero-runtime-prefix-cache-eviction-audit",
    "revisions": {"auditTag": "v0.30.0", "auditCommit": "a" * 40},
    "sourceReceipts": [
        {
            "url": "https://github.com/vllm-project/vllm/releases/tag/v0.30.0",
            "bytes": 2048,
            "sha256": SHA,
            "label": "release notes",
        }
    ],
    "model": {"name": "GLM-5.2-FP8", "revision": "b" * 40},
    "invariants": {"noRuntimeClaims": True},
    "rolloutDecision": {"classification": "canary-behind-a-flag", "flag": "--evict-lru"},
    "evictionLadder": [
        {"tier": "hbm", "blocks": 4096, "claimBoundary": "source arithmetic only"},
        {"tier": "host", "blocks": 16384, "claimBoundary": "source arithmetic only"},
    ],
    "hitRateBySharedPrefix": {"short": 0.42, "long": 0.87},
    "operatorQuestions": ["Which tier evicts first?", "What does a miss cost?"],
}


def front_of(path: Path) -> dict[str, Any]:
    """Return a guide's front matter as the build reads it."""
    return decode_doc(path.read_bytes())[0]


def prose_for(project: Project, operation_id: str) -> list[Path]:
    """Return the prose files whose front matter renders `operation_id`."""
    docs = sorted((project.root / "content").glob("**/*.md"))
    return [path for path in docs if front_of(path).get("record") == operation_id]


def config(project: Project, **options: Any) -> BuildConfig:
    """Return a build of the copy with drafts written, as far as this builder supports it."""
    wanted = {"today": TODAY, "include_drafts": True, **options}
    accepted = inspect.signature(BuildConfig.for_root).parameters
    known = {key: value for key, value in wanted.items() if key in accepted}
    return BuildConfig.for_root(project.root, project.out, **known)


def scaffold(project: Project, name: str) -> Path:
    """Scaffold the record `records/<name>` of the copy."""
    return scaffold_guide(config(project), project.root / "records" / name, TODAY)


def problems_of(error: pytest.ExceptionInfo[InputError]) -> list[str]:
    """Return the one-line problems an InputError carries."""
    return [str(problem) for problem in error.value.problems]


def assert_valid_scaffold(path: Path, operation_id: str) -> FrontMatter:
    """The file re-parses identically with plain YAML, validates, is a draft, has the headings."""
    text = path.read_text("utf-8")
    front, body, _ = decode_doc(text.encode("utf-8"))
    assert yaml.safe_load(text.split("---\n")[1]) == front
    matter = FrontMatter.model_validate(front)
    assert matter.draft is True
    assert matter.record == operation_id
    assert matter.published == TODAY
    assert path.name == f"{matter.slug}.md"
    assert len(matter.title) <= 120 and len(matter.description) < 160
    assert matter.reader_job.startswith("Decide whether ")
    assert 1 <= len(matter.tags) <= 4
    assert "# Proposed from the record" in text
    assert "must come from the record" in body
    assert "<" not in body and ">" not in body
    for heading in HEADINGS:
        assert f"\n## {heading}\n" in body
    return matter


def guide_findings(report: BuildReport, matter: FrontMatter) -> list[Finding]:
    """Return the findings about the scaffolded guide's page or file."""
    url = f"/guides/{matter.slug}/"
    return [
        finding
        for finding in report.findings
        if finding.page == url or finding.source == f"content/{matter.slug}.md"
    ]


@pytest.mark.parametrize("name", SEED_RECORDS)
def test_every_seed_record_scaffolds_into_a_draft_that_builds(project: Project, name: str) -> None:
    operation_id = project.record(name)["operationId"]
    (prose,) = prose_for(project, operation_id)
    prose.unlink()
    path = scaffold(project, name)
    assert path.parent == project.root / "content"
    matter = assert_valid_scaffold(path, operation_id)
    assert matter.tags[0] == ENGINES[name]
    engine = {"sglang": "SGLang", "vllm": "vLLM"}[ENGINES[name]]
    assert matter.title.startswith(f"GLM-5.2 on {engine}: ")

    report = build(config(project))
    errors = [finding for finding in guide_findings(report, matter) if finding.severity == "error"]
    if "is already a live page" in path.read_text("utf-8"):
        # The proposed slug is the record's own live page (published before today's scaffold):
        # taking it over is the editor's decision, which the comment asks for.
        assert [finding.check for finding in errors] == ["takeover"]
        text = path.read_text("utf-8").replace(
            "draft: true\n", f"draft: true\nreplaces: /guides/{matter.slug}/\n"
        )
        path.write_text(text, "utf-8")
        report = build(config(project))
        errors = [f for f in guide_findings(report, matter) if f.severity == "error"]
    assert not errors, errors
    assert not [finding for finding in report.findings if finding.severity == "error"]
    page = soup(project.out / "guides" / matter.slug / "index.html")
    assert page.h1 is not None and page.h1.get_text(strip=True) == matter.title


def test_a_record_of_a_new_shape_scaffolds_and_builds(project: Project) -> None:
    project.save_record("900_new_shape.json", NEW_SHAPE)
    path = scaffold(project, "900_new_shape.json")
    matter = assert_valid_scaffold(path, NEW_SHAPE["operationId"])
    assert matter.slug == "glm-5-2-vllm-prefix-cache-eviction"
    assert matter.title == "GLM-5.2 on vLLM: canary behind a flag"
    assert matter.tags == ("vllm", "prefix", "cache", "eviction")
    assert "Prefix cache eviction" in matter.description
    assert "canary behind a flag" in matter.description
    body = path.read_text("utf-8")
    for section in ("Eviction ladder", "Hit rate by shared prefix", "Operator questions"):
        assert f"- **{section}**: " in body

    report = build(config(project))
    assert not [finding for finding in report.findings if finding.severity == "error"]
    page = soup(project.out / "guides" / matter.slug / "index.html")
    assert page.h1 is not None and page.h1.get_text(strip=True) == matter.title


def test_no_engine_and_tricky_text_still_give_valid_yaml(project: Project) -> None:
    record = {
        **NEW_SHAPE,
        "operationId": "tricky-1",
        "status": 'no: "quoted" #hash — ünïcode on yes',
        "revisions": {"tag": "v1"},
        "sourceReceipts": [{**NEW_SHAPE["sourceReceipts"][0], "url": "https://example.org/a"}],
        "rolloutDecision": {"classification": "null: 'x'\u2028[y]\x7f {z} \\ end"},
    }
    project.save_record("901_tricky.json", record)
    path = scaffold(project, "901_tricky.json")
    matter = assert_valid_scaffold(path, "tricky-1")
    assert matter.title.startswith("GLM-5.2: ")
    assert matter.title == "GLM-5.2: null: 'x' [y]\x7f {z} \\ end"
    assert all(isinstance(tag, str) for tag in matter.tags) and "no" in matter.tags


def test_a_live_registry_slug_gets_the_replaces_comment(project: Project) -> None:
    registry = project.root / "content/registry.json"
    data = json.loads(registry.read_text("utf-8"))
    live = {
        "url": "https://glm52.ai/guides/glm-5-2-vllm-prefix-cache-eviction/",
        "title": "",
        "reader_job": "old page",
    }
    data["pages"].append({**live, "published": None, "lastmod": ""})
    registry.write_text(json.dumps(data), "utf-8")
    project.save_record("902_live.json", NEW_SHAPE)
    path = scaffold(project, "902_live.json")
    text = path.read_text("utf-8")
    assert "# /guides/glm-5-2-vllm-prefix-cache-eviction/ is already a live page" in text
    assert "replaces: /guides/glm-5-2-vllm-prefix-cache-eviction/" in text
    assert "replaces" not in front_of(path)
    # The build then refuses the takeover until the editor declares it.
    takeover = [f for f in build(config(project)).findings if f.check == "takeover"]
    assert [f.severity for f in takeover] == ["error"] and "old page" in takeover[0].message
    path.write_text(
        text.replace(
            "draft: true\n", "draft: true\nreplaces: /guides/glm-5-2-vllm-prefix-cache-eviction/\n"
        )
    )
    assert not [f for f in build(config(project)).findings if f.severity == "error"]
    project.save_record(
        "900_new_shape.json", {**NEW_SHAPE, "operationId": "other-1", "status": "x-y"}
    )
    assert "live page" not in scaffold(project, "900_new_shape.json").read_text("utf-8")


def test_refuses_to_overwrite_and_names_the_file(project: Project) -> None:
    project.save_record("900_new_shape.json", NEW_SHAPE)
    slug = "glm-5-2-vllm-prefix-cache-eviction"
    target = project.write(f"content/{slug}.md", "an editor's notes, not a guide\n")
    before = target.read_bytes()
    with pytest.raises(InputError) as error:
        scaffold(project, "900_new_shape.json")
    assert problems_of(error) == [
        f"content/{slug}.md: file: already exists; refusing to overwrite it"
    ]
    assert target.read_bytes() == before


def test_refuses_a_record_that_already_has_prose(project: Project) -> None:
    before = sorted((project.root / "content").rglob("*"))
    with pytest.raises(InputError) as error:
        scaffold(project, "003_d837ec4df0827390.json")
    assert problems_of(error) == [
        "records/003_d837ec4df0827390.json: operationId: '20260823213641-315eecbf11' already "
        "has prose: content/glm-5-2-vllm-sequence-parallel-moe.md",
        "content/glm-5-2-vllm-sequence-parallel-moe.md: file: already exists; refusing to "
        "overwrite it",
    ]
    assert sorted((project.root / "content").rglob("*")) == before


def test_a_second_scaffold_refuses_both_ways(project: Project) -> None:
    project.save_record("900_new_shape.json", NEW_SHAPE)
    path = scaffold(project, "900_new_shape.json")
    before = path.read_bytes()
    with pytest.raises(InputError) as error:
        scaffold(project, "900_new_shape.json")
    assert len(error.value.problems) == 2
    assert "already has prose: content/" in problems_of(error)[0]
    assert "already exists" in problems_of(error)[1]
    assert path.read_bytes() == before


def test_a_bad_record_fails_with_the_builds_own_error(project: Project) -> None:
    text = json.dumps(NEW_SHAPE, indent=2).replace('"status"', '"status" "oops"', 1)
    project.write("records/900_bad.json", text)
    with pytest.raises(InputError) as error:
        scaffold(project, "900_bad.json")
    (problem,) = problems_of(error)
    assert problem.startswith("records/900_bad.json: line 5 column 12: invalid JSON: ")
    with pytest.raises(InputError) as built:
        build(config(project))
    assert problem in problems_of(built)
    assert not list((project.root / "content").glob("glm-5-2-vllm-prefix-cache-eviction*"))


def test_an_invalid_record_fails_with_the_builds_validation_errors(project: Project) -> None:
    receipt = {**NEW_SHAPE["sourceReceipts"][0], "sha256": "ABC"}
    record = {**NEW_SHAPE, "sourceReceipts": [receipt], "rolloutDecision": {}}
    project.save_record("900_invalid.json", record)
    with pytest.raises(InputError) as error:
        scaffold(project, "900_invalid.json")
    with pytest.raises(InputError) as built:
        build(config(project))
    assert problems_of(error)
    assert set(problems_of(error)) <= set(problems_of(built))
    assert any("rolloutDecision.classification" in problem for problem in problems_of(error))


@pytest.mark.parametrize("relative", ["content/site.yaml", "records/notes.txt", "records/a/b.json"])
def test_refuses_files_that_are_not_records(project: Project, relative: str) -> None:
    project.write(relative, "{}")
    with pytest.raises(InputError) as error:
        scaffold_guide(config(project), project.root / relative, TODAY)
    assert "not a record" in problems_of(error)[0]


def test_a_missing_record_is_one_line(project: Project) -> None:
    with pytest.raises(InputError) as error:
        scaffold(project, "999_missing.json")
    assert problems_of(error) == [
        "records/999_missing.json: file: cannot be read: No such file or directory"
    ]


@pytest.mark.parametrize(
    "pipe",
    [
        "records/900_pipe.json",
        "content/vocabulary.yaml",
        "content/zz-draft.md",
        "content/registry.json",
    ],
)
def test_a_named_pipe_among_the_inputs_is_refused_or_passed_over_never_waited_on(
    project: Project, pipe: str
) -> None:
    """`--new` reads what a build reads, each as a regular file: a pipe as the record or the
    vocabulary is the build's one-line error, a pipe among the prose or as the registry
    (which the build reports) is passed over; none is waited on."""
    project.save_record("900_new_shape.json", NEW_SHAPE)
    path = project.root / pipe
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    record = pipe if pipe.startswith("records/") else "records/900_new_shape.json"
    made = without_waiting(lambda: _scaffolded(project, record))
    if pipe in ("content/zz-draft.md", "content/registry.json"):
        assert isinstance(made, Path) and made.is_file()
        return
    assert isinstance(made, InputError)
    assert [str(problem) for problem in made.problems] == [f"{pipe}: file: {NOT_REGULAR}"]


def _scaffolded(project: Project, record: str) -> Path | InputError:
    """Return the prose `--new` wrote for `record`, or the InputError it raised."""
    try:
        return scaffold_guide(config(project), project.root / record, TODAY)
    except InputError as error:
        return error


def test_a_relative_path_is_read_from_the_project_root(project: Project) -> None:
    project.save_record("900_new_shape.json", NEW_SHAPE)
    path = scaffold_guide(config(project), Path("records/900_new_shape.json"), TODAY)
    assert path.is_file() and path.parent == project.root / "content"


def test_the_same_record_and_date_give_the_same_bytes(project: Project, make_project: Any) -> None:
    project.save_record("900_new_shape.json", NEW_SHAPE)
    first = scaffold(project, "900_new_shape.json")
    written = first.read_bytes()
    first.unlink()
    assert scaffold(project, "900_new_shape.json").read_bytes() == written
    other = make_project(name="other")
    other.save_record("900_new_shape.json", NEW_SHAPE)
    assert scaffold(other, "900_new_shape.json").read_bytes() == written
    assert written.endswith(b"\n") and b"\r" not in written
