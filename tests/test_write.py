"""Atomic writing: the previous site survives any failure before the swap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.output.write import write_site
from tests.conftest import tree_digest


def pages(text: str) -> list[Page]:
    """Return a small site whose every file holds `text`."""
    return [Page("index.html", text.encode()), Page("guides/a/index.html", text.encode())]


def test_new_site_replaces_old_one_without_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    write_site([*pages("old"), Page("stale.html", b"x")], out)
    write_site(pages("new"), out)
    assert sorted(tree_digest(out)) == ["guides/a/index.html", "index.html"]
    assert (out / "index.html").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["_site"], "no staging or old folders left"


def test_failure_while_writing_leaves_previous_site_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "_site"
    write_site(pages("old"), out)
    before = tree_digest(out)
    calls = {"n": 0}
    original = Path.write_bytes

    def failing_write(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)
    with pytest.raises(OutputError, match="No space left on device"):
        write_site(pages("new"), out)
    assert tree_digest(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["_site"]


def test_page_paths_cannot_escape_the_output_folder(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="leaves the output folder"):
        write_site([Page("../escaped.html", b"x")], tmp_path / "_site")
    assert not (tmp_path / "escaped.html").exists()


def test_refuses_to_replace_a_folder_holding_inputs(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / "a.json").write_text("{}")
    for target in (tmp_path, records, records / "sub"):
        with pytest.raises(OutputError, match="holds build inputs"):
            write_site(pages("x"), target, inputs=(records,))
    assert (records / "a.json").read_text() == "{}"


def test_a_file_the_previous_site_already_holds_is_linked_not_written_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "_site"
    write_site([*pages("same"), Page("changed.html", b"old")], out)
    inodes = {path.relative_to(out).as_posix(): path.stat().st_ino for path in out.rglob("*.html")}
    write_site([*pages("same"), Page("changed.html", b"new")], out)
    assert (out / "index.html").stat().st_ino == inodes["index.html"]  # linked, not rewritten
    assert (out / "guides/a/index.html").stat().st_ino == inodes["guides/a/index.html"]
    assert (out / "index.html").stat().st_nlink == 1  # the old site is gone
    assert (out / "changed.html").stat().st_ino != inodes["changed.html"]
    assert (out / "changed.html").read_bytes() == b"new"


def test_a_symlink_in_the_previous_site_is_never_linked_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.html"
    outside.write_bytes(b"same")
    out = tmp_path / "_site"
    write_site(pages("same"), out)
    (out / "index.html").unlink()
    (out / "index.html").symlink_to(outside)
    (out / "guides").rename(tmp_path / "guides-real")
    (out / "guides").symlink_to(tmp_path / "guides-real")
    write_site(pages("same"), out)
    for name in ("index.html", "guides/a/index.html"):
        written = out / name
        assert not written.is_symlink() and not written.parent.is_symlink()
        assert written.stat().st_nlink == 1, f"{name} shares its file with one outside the site"
        assert written.read_bytes() == b"same"
    assert outside.stat().st_nlink == 1


def test_a_file_that_cannot_be_linked_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "_site"
    write_site(pages("same"), out)

    def cross_device(*args: object, **kwargs: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    write_site(pages("same"), out)
    for name in ("index.html", "guides/a/index.html"):
        assert (out / name).read_bytes() == b"same"
