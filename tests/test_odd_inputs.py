"""Odd inputs a fuzzing run found (December 2026): each gets one located line, exit 1 and the
previous site untouched, instead of a hang, a traceback, a silent success or a site that
changes from run to run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from site_builder import cli
from tests.conftest import Project, tree_digest
from tests.test_refused_inputs import GUIDE, built, refuse, set_front  # noqa: F401

RECORD = "records/000_f07234cca5c1d19d.json"


@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        # A few lines of anchors and aliases stand for billions of values (it used 8.7 GB).
        (
            ["lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
            + [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)],
            "anchors and aliases",
        ),
        (["tags_again: !!set {sglang, alpha}"], "!!set"),  # its order changes run to run
        (["ratio: .inf"], "not a finite number"),
    ],
)
def test_yaml_that_json_has_no_word_for_is_refused(
    built: Project,  # noqa: F811
    lines: list[str],
    fragment: str,
) -> None:
    before = tree_digest(built.out)
    path = built.root / GUIDE
    text = path.read_text("utf-8")
    path.write_text(text.replace("---\n", "---\n" + "\n".join(lines) + "\n", 1), "utf-8")
    refuse(built, GUIDE, fragment)
    assert tree_digest(built.out) == before


def test_tags_written_as_a_set_are_refused_not_shuffled(built: Project) -> None:  # noqa: F811
    set_front(built, "tags", "!!set {sglang, alpha, beta}")
    refuse(built, GUIDE, "!!set")


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1e" + "9" * 50])
def test_a_number_too_large_for_a_float_is_refused_by_its_path(
    built: Project,  # noqa: F811
    number: str,
) -> None:
    path = built.root / RECORD
    text = path.read_text("utf-8")
    path.write_text(text.replace("{", '{"fuzzNum": ' + number + ",", 1), "utf-8")
    before = tree_digest(built.out)
    refuse(built, RECORD, "fuzzNum: number is too large")
    assert tree_digest(built.out) == before


def test_a_time_written_as_a_number_is_refused(built: Project) -> None:  # noqa: F811
    record = built.record(Path(RECORD).name)
    record["checkedAt"] = 20260824  # pydantic would read seconds since 1970
    built.save_record(Path(RECORD).name, record)
    refuse(built, RECORD, "checkedAt")


def test_a_date_written_as_a_number_is_refused(built: Project) -> None:  # noqa: F811
    set_front(built, "published", "1787961600")
    refuse(built, GUIDE, "front matter.published")


@pytest.mark.parametrize("name", ["vocabulary.yaml", "acknowledged.yaml", "rules.yaml"])
def test_a_folder_where_a_settings_file_is_named_is_refused(
    built: Project,  # noqa: F811
    name: str,
) -> None:
    (built.root / "content" / name).unlink()
    (built.root / "content" / name).mkdir()
    before = tree_digest(built.out)
    refuse(built, f"content/{name}", "is a folder, not a file")
    assert tree_digest(built.out) == before


@pytest.mark.parametrize("where", ["records/fifo.json", "content/fifo.md", "templates/fifo.html"])
def test_a_named_pipe_among_the_inputs_is_refused_without_waiting(
    built: Project,  # noqa: F811
    where: str,
) -> None:
    os.mkfifo(built.root / where)
    before = tree_digest(built.out)
    refuse(built, where, "not a regular file")  # run_build's timeout fails a hang
    assert tree_digest(built.out) == before
    result = built.run("--audit")
    assert result.returncode == 1 and "Traceback" not in result.stderr


def test_a_loop_of_symlinks_is_refused(built: Project) -> None:  # noqa: F811
    (built.root / "records" / "loop.json").symlink_to("loop.json")
    refuse(built, "records/loop.json", "the symlink points nowhere")


def test_a_file_name_that_is_not_utf8_is_refused(built: Project) -> None:  # noqa: F811
    records = os.fsencode(built.root / "records")
    os.rename(records + b"/000_f07234cca5c1d19d.json", records + b"/\xff.json")
    result = built.run()
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        "records/\N{REPLACEMENT CHARACTER}.json: file: its name is not UTF-8 text" in result.stderr
    )


def test_an_audit_does_not_replay_findings_once_a_file_became_a_link_out_of_the_project(
    built: Project,  # noqa: F811
    tmp_path: Path,
) -> None:
    assert built.run("--audit").returncode == 0  # remembered: the next audit replays it
    target = built.root / GUIDE
    outside = tmp_path / "outside.md"
    outside.write_bytes(target.read_bytes())
    stat = target.stat()
    os.utime(outside, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    target.unlink()
    target.symlink_to(outside)
    result = built.run("--audit")
    assert result.returncode == 1, result.stderr
    assert f"{GUIDE}: file: symlink points outside the project" in result.stderr


def test_a_file_the_system_will_not_let_it_read_is_one_line(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Root reads everything, so the refusal is made here: what a folder without read
    permission raises (PermissionError) while the build runs."""
    settings = project.root / "content" / "site.yaml"

    def refused(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(settings))

    monkeypatch.setattr(cli, "build", refused)
    code = cli.main(["--root", str(project.root)])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    assert lines == [
        "content/site.yaml: file: Permission denied",
        "Aborted: the site was not written; the previous output is untouched.",
    ]


def test_a_folder_a_wildcard_matches_is_passed_over(built: Project) -> None:  # noqa: F811
    """records/old.json/ is a folder, not a record: the build goes on without it."""
    before = tree_digest(built.out)
    (built.root / "records" / "old.json").mkdir()
    result = built.run()
    assert result.returncode == 0, result.stderr
    assert tree_digest(built.out) == before
    assert json.loads((built.root / RECORD).read_text("utf-8"))


def test_a_guide_saved_with_a_byte_order_mark_builds_as_without_one(
    built: Project,  # noqa: F811
) -> None:
    """Some editors write U+FEFF first; the front matter still starts the file."""
    before = tree_digest(built.out)
    path = built.root / GUIDE
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = built.run()
    assert result.returncode == 0, result.stderr
    assert tree_digest(built.out) == before


def test_a_record_that_is_json_null_is_called_null(built: Project) -> None:  # noqa: F811
    (built.root / RECORD).write_text("null", "utf-8")
    refuse(built, RECORD, "a record must be a JSON object, not null")


def test_an_impossible_date_is_refused_at_its_line(built: Project) -> None:  # noqa: F811
    set_front(built, "published", "2026-02-30")
    lines = (built.root / GUIDE).read_text("utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.startswith("published:"))
    refuse(built, GUIDE, f"line {line}: invalid YAML: '2026-02-30' is not a date or time")


def test_a_folder_the_search_index_cannot_make_is_named(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project folder the user cannot write to (root can, so the refusal is made here)."""
    from site_builder.runtime import workdirs

    def refused(out_dir: Path, kind: str) -> Path:
        raise PermissionError(13, "Permission denied", str(out_dir.parent))

    monkeypatch.setattr(workdirs, "SCRATCH", project.root / "no-memory-file-system")
    monkeypatch.setattr(workdirs, "work_folder", refused)
    code = cli.main(["--root", str(project.root), "--quiet"])
    lines = capsys.readouterr().err.splitlines()
    assert code == 1
    failed = next(line for line in lines if line.startswith("pagefind:"))
    assert f"Permission denied (making its folder beside {project.root / '_site'})" in failed
