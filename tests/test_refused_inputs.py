"""Inputs the builder must refuse with one located line each (issue: hostile and broken input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.cli import main
from tests.conftest import Project, refuse_reading, tree_digest

GUIDE = "content/glm-5-2-vllm-sequence-parallel-moe.md"


def refuse(project: Project, source: str, fragment: str) -> None:
    """Build (after one good build) and expect exit 1, one line naming `source`, _site untouched."""
    result = project.run()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    lines = [line for line in result.stderr.splitlines() if line.startswith(f"{source}:")]
    assert lines, output
    assert any(fragment in line for line in lines), lines
    assert result.stderr.splitlines()[-1].startswith("Aborted:")


@pytest.fixture
def built(project: Project) -> Project:
    """A project copy built once, so failures can be checked against its _site/."""
    assert project.run().returncode == 0
    return project


def set_front(project: Project, field: str, value: str) -> None:
    """Replace one front matter line of the sequence-parallel guide."""
    path = project.root / GUIDE
    lines = path.read_text("utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{field}:"))
    lines[index] = f"{field}: {value}\n"
    path.write_text("".join(lines), "utf-8")


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("no", "front matter.title"),  # YAML 1.1 reads `no` as false
        ("1.10", "front matter.title"),  # and 1.10 as the float 1.1
        ("!!python/object/apply:os.system ['true']", "could not determine a constructor"),
        ("!!binary aGVsbG8=", "!!binary type is not allowed"),
    ],
)
def test_yaml_surprise_types_and_tags_are_refused(
    built: Project, value: str, fragment: str
) -> None:
    before = tree_digest(built.out)
    set_front(built, "title", value)
    refuse(built, GUIDE, fragment)
    assert tree_digest(built.out) == before


@pytest.mark.parametrize(
    "slug",
    [
        "glm-5-2-moe/../x",
        "glm/5",
        "GLM-5-2",
        "glm-5-2-m\u043ee",  # Cyrillic o: a look-alike
        "glm-5-2\u202emoe",  # right-to-left override
        "glm-5-2\u200bmoe",  # zero-width space
        "glm-5-2-moe\u2066",  # bidi isolate
    ],
)
def test_unsafe_slugs_are_refused(built: Project, slug: str) -> None:
    before = tree_digest(built.out)
    set_front(built, "slug", f'"{slug}"')
    refuse(built, GUIDE, "front matter.slug")
    assert tree_digest(built.out) == before


def test_a_symlink_out_of_the_project_is_refused(built: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text((built.root / "records/000_f07234cca5c1d19d.json").read_text("utf-8"))
    (built.root / "records" / "linked.json").symlink_to(outside)
    refuse(built, "records/linked.json", "symlink points outside the project")


def test_an_unreadable_file_is_a_located_error(
    built: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_digest(built.out)
    refuse_reading(monkeypatch, built.root / "records" / "003_d837ec4df0827390.json")
    assert main(["--root", str(built.root)]) == 1
    errors = capsys.readouterr().err.splitlines()
    assert "records/003_d837ec4df0827390.json: file: cannot be read: Permission denied" in errors
    assert tree_digest(built.out) == before


def test_a_broken_symlink_is_a_located_error(built: Project) -> None:
    (built.root / "records" / "dangling.json").symlink_to(built.root / "records" / "gone.json")
    refuse(built, "records/dangling.json", "cannot be read")


@pytest.mark.parametrize(
    ("relative", "location"),
    [
        ("templates/assets/leak.css", "file: symlink points outside the project; refused"),
        ("templates/leak.html", "file: symlink points outside the project; refused"),
        ("templates/partials/leak.html", "file: symlink points outside the project; refused"),
    ],
)
def test_a_symlink_under_templates_that_leaves_the_project_is_refused(
    project: Project, tmp_path: Path, relative: str, location: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the project", "utf-8")
    link = project.root / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(secret)
    result = project.run("--audit")
    assert result.returncode == 1
    assert f"{relative}: {location}" in result.stderr
    assert "Traceback" not in result.stderr
    result = project.run()
    assert result.returncode == 1 and not project.out.exists()


@pytest.mark.parametrize(
    ("relative", "location"),
    [
        ("templates/tag.html", "templates/tag.html: byte 9: invalid UTF-8"),
        ("templates/assets/style.css", "templates/assets/style.css: file: cannot be read"),
        ("templates/base.html", "templates/base.html: file: cannot be read"),
    ],
)
def test_an_unreadable_template_or_asset_is_a_located_error(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    relative: str,
    location: str,
) -> None:
    target = project.root / relative
    if location.endswith("invalid UTF-8"):
        target.write_bytes(b"{# ok #}\n\xff\xfe" + target.read_bytes())
    else:
        refuse_reading(monkeypatch, target)
    code = main(["--root", str(project.root), "--audit"])
    errors = capsys.readouterr().err
    assert code == 1, errors
    assert location in errors and "Traceback" not in errors
