"""Atomic writing: the previous site survives any failure before the swap."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.output.write import SPARE, write_site
from tests.conftest import tree_digest, without_waiting


def pages(text: str) -> list[Page]:
    """Return a small site whose every file holds `text`."""
    return [Page("index.html", text.encode()), Page("guides/a/index.html", text.encode())]


def fail_the_second_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the second file written from now on fail as a full disk does."""
    calls = {"n": 0}
    original = Path.write_bytes

    def failing_write(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing_write)


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
    fail_the_second_write(monkeypatch)
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


def test_a_page_is_linked_to_its_linkable_file_only_while_that_holds_its_bytes(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "same").write_bytes(b"bundle")
    (kept / "changed").write_bytes(b"changed by hand")
    (tmp_path / "elsewhere").write_bytes(b"bundle")
    (kept / "symlink").symlink_to(tmp_path / "elsewhere")
    site = [
        Page("a.js", b"bundle", linkable=kept / "same"),
        Page("b.js", b"bundle", linkable=kept / "changed"),
        Page("c.js", b"bundle", linkable=kept / "symlink"),
        Page("d.js", b"bundle", linkable=kept / "gone"),
    ]
    out = tmp_path / "_site"
    write_site(site, out)
    assert (out / "a.js").stat().st_ino == (kept / "same").stat().st_ino
    for name in ("b.js", "c.js", "d.js"):
        assert (out / name).read_bytes() == b"bundle"
        assert (out / name).stat().st_nlink == 1, f"{name} shares a file it must not"
    assert (kept / "changed").read_bytes() == b"changed by hand"
    assert (tmp_path / "elsewhere").stat().st_nlink == 1


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


def spare_of(tmp_path: Path) -> Path:
    """Return where a build cache in `tmp_path` keeps the spare site (its folder made)."""
    folder = tmp_path / "cache" / "v1"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / SPARE


def written_alone(tmp_path: Path, site: list[Page]) -> dict[str, str]:
    """Return what `site` written into a new folder, with no spare, holds."""
    out = tmp_path / "alone" / "_site"
    if out.parent.exists():
        shutil.rmtree(out.parent)
    write_site(site, out)
    return tree_digest(out)


SITES = [
    [
        Page("index.html", b"home 1"),
        Page("guides/a/index.html", b"a"),
        Page("guides/b/index.html", b"b"),
        Page("tags/x/index.html", b"x"),
        Page("pagefind/one.pf", b"1"),
    ],
    [
        Page("index.html", b"home 2"),
        Page("guides/a/index.html", b"a"),
        Page("guides/c/index.html", b"c"),
        Page("pagefind/one.pf", b"1"),
        Page("pagefind/two.pf", b"2"),
    ],
    [  # a file where a folder was, a folder where a file was
        Page("index.html", b"home 3"),
        Page("guides/a/index.html", b"A, same size? no"),
        Page("tags", b"no longer a folder"),
        Page("pagefind/one.pf/index.html", b"now a folder"),
    ],
    [Page("index.html", b"home 4"), Page("guides/a/index.html", b"a")],
]


def test_each_build_stages_into_the_spare_site_and_writes_exactly_its_own_site(
    tmp_path: Path,
) -> None:
    out, spare = tmp_path / "_site", spare_of(tmp_path)
    folders = []
    for number, site in enumerate(SITES):
        write_site(site, out, spare=spare)
        assert tree_digest(out) == written_alone(tmp_path, site), f"site {number}"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["_site", "alone", "cache"]
        assert not any(path.is_dir() and not any(path.iterdir()) for path in out.rglob("*"))
        folders.append((out / "guides" / "a").stat().st_ino)
        assert spare.is_dir() == (number > 0), "the replaced site is kept as the spare"
    # The third site was staged in the first one's folders, the fourth in the second's.
    assert folders[2] == folders[0] and folders[3] == folders[1]


def test_a_spare_site_changed_by_hand_is_never_published_as_it_is(tmp_path: Path) -> None:
    outside = tmp_path / "outside.html"
    outside.write_bytes(b"a")
    out, spare = tmp_path / "_site", spare_of(tmp_path)
    write_site(SITES[0], out, spare=spare)
    write_site(SITES[1], out, spare=spare)
    (spare / "index.html").write_bytes(b"home 3")  # what the next site holds, but not its file
    (spare / "guides" / "a" / "index.html").unlink()
    (spare / "guides" / "a" / "index.html").symlink_to(outside)  # a symlink where a page goes
    (spare / "guides" / "z").mkdir()
    (spare / "guides" / "z" / "stray.html").write_bytes(b"stray")
    (spare / "tags").rename(tmp_path / "tags-real")
    (spare / "tags").symlink_to(tmp_path / "tags-real")  # a symlink where a file goes
    write_site(SITES[2], out, spare=spare)
    assert tree_digest(out) == written_alone(tmp_path, SITES[2])
    assert not any(path.is_symlink() for path in out.rglob("*"))
    assert outside.read_bytes() == b"a" and outside.stat().st_nlink == 1
    assert (tmp_path / "tags-real" / "x" / "index.html").read_bytes() == b"x"


def test_staging_into_the_spare_never_changes_the_live_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, spare = tmp_path / "_site", spare_of(tmp_path)
    write_site(pages("same"), out, spare=spare)
    write_site(pages("same"), out, spare=spare)  # linked: the spare and the site share files
    assert (out / "index.html").stat().st_ino == (spare / "index.html").stat().st_ino
    before = tree_digest(out)
    fail_the_second_write(monkeypatch)
    with pytest.raises(OutputError, match="No space left on device"):
        write_site(pages("news"), out, spare=spare)
    assert tree_digest(out) == before
    monkeypatch.undo()
    write_site(pages("new"), out, spare=spare)
    assert tree_digest(out) == written_alone(tmp_path, pages("new"))
    assert (spare / "index.html").read_bytes() == b"same"  # the site it replaced, unchanged


def test_without_a_spare_folder_the_replaced_site_is_deleted(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    elsewhere = tmp_path / "gone" / SPARE  # its folder does not exist: nowhere to keep it
    write_site(pages("old"), out, spare=elsewhere)
    write_site(pages("new"), out, spare=elsewhere)
    assert [p.name for p in tmp_path.iterdir()] == ["_site"]


def test_a_fifo_where_a_page_was_is_replaced_without_waiting_on_it(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    write_site(pages("same"), out)
    (out / "index.html").unlink()
    os.mkfifo(out / "index.html")  # reading it would wait for a writer forever
    assert without_waiting(lambda: write_site(pages("same"), out)) is None
    assert (out / "index.html").read_bytes() == b"same"
