"""A killed run leaves nothing for good: no missing site, no temporary folders, no indexer.

Every build runs as a real `build.py` process on a fixture project and is stopped with real
signals; a kill between the two renames of the swap is injected in a real process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from site_builder.cli import main
from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.output import search
from site_builder.output.search import SearchIndex
from site_builder.runtime import workdirs
from tests.conftest import ROOT, Project, tree_digest
from tests.preview_helpers import start_preview

KILL_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path
from site_builder.model.models import Page
from site_builder.output import write

renames = []
original = Path.rename

def rename(self, target):
    renames.append(self)
    if len(renames) == 2:  # the old site is out of the way; the new one not yet in
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, target)

Path.rename = rename
write.write_site([Page("index.html", b"new")], Path(sys.argv[1]))
"""


def leftovers(project: Project) -> list[str]:
    """Work folders beside the output folder."""
    return sorted(p.name for p in project.out.parent.iterdir() if p.name.startswith("._site."))


def search_work(pid: int) -> list[Path]:
    """The search index's work folders of process `pid` in memory (`workdirs.SCRATCH`)."""
    return list(workdirs.SCRATCH.glob(f"{workdirs.SEARCH_PREFIX}{pid}-*"))


def indexers_of(pid: int) -> list[int]:
    """Pagefind processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"pagefind" in command:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_kill_between_the_two_renames_of_the_swap_is_repaired_by_the_next_run(
    project: Project,
) -> None:
    assert project.run().returncode == 0
    before = tree_digest(project.out)
    killed = subprocess.run(
        [sys.executable, "-c", KILL_BETWEEN_RENAMES, str(project.out)],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    assert not project.out.exists()  # the gap the kill left: no site at all
    assert any(".old-" in name for name in leftovers(project))
    audit = project.run("--audit")
    assert f"Restored {project.out}" in audit.stderr
    assert tree_digest(project.out) == before
    assert leftovers(project) == []


@pytest.mark.parametrize("delay", [0.4, 0.9, 1.5, 2.2])
def test_a_build_stopped_with_sigterm_removes_its_work(project: Project, delay: float) -> None:
    assert project.run().returncode == 0
    before = tree_digest(project.out)
    (project.root / "content" / "site.yaml").write_text(
        (project.root / "content" / "site.yaml").read_text("utf-8") + "\n", "utf-8"
    )
    build = subprocess.Popen(
        [sys.executable, str(project.root / "build.py"), "--no-cache"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)
    build.send_signal(signal.SIGTERM)
    _, stderr = build.communicate(timeout=60)
    assert "Traceback" not in stderr
    assert leftovers(project) == []
    assert search_work(build.pid) == []  # its own: other tests' builds run beside it
    if build.returncode != 0:  # stopped before the swap: the previous site stands
        # (killed outright while Python still imported the builder, before any work began)
        assert build.returncode == -signal.SIGTERM or (
            build.returncode == 130 and "Stopped: the site was not written" in stderr
        )
        assert tree_digest(project.out) == before


def test_a_build_killed_with_sigkill_takes_its_indexer_with_it_and_the_next_run_tidies(
    project: Project,
) -> None:
    # The kill must fall while the search index's work folder exists; on a busy machine the
    # build can remove it between the test seeing Pagefind and the kill: then try again.
    for _ in range(3):
        build = subprocess.Popen(
            [sys.executable, str(project.root / "build.py"), "--no-cache"],
            cwd=project.root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (indexers := indexers_of(build.pid)):
            assert build.poll() is None, "the build ended before its indexer was seen"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        build.kill()
        build.wait()
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in indexers):
            assert time.monotonic() < deadline, "Pagefind outlived the builder"
            time.sleep(0.05)
        if search_work(build.pid) or any(".search-" in name for name in leftovers(project)):
            break
    else:
        pytest.fail("every build had removed its search work before it was killed")
    assert project.run("--audit").returncode == 0
    assert leftovers(project) == [] and search_work(build.pid) == []


def test_work_of_a_live_run_is_left_alone(project: Project) -> None:
    mine = project.out.parent / f"._site.staging-{os.getppid()}-abc"
    mine.mkdir()
    assert project.run("--audit").returncode == 0
    assert mine.is_dir()


def test_a_preview_stopped_with_sigterm_while_indexing_leaves_nothing(project: Project) -> None:
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1, timeout=60)
        prose = next((project.root / "content").glob("glm-5-2-*.md"))
        prose.write_text(prose.read_text("utf-8") + "\nOne more line.\n", "utf-8")
        preview.wait_for_rebuilds(2, timeout=60)
        indexers = indexers_of(preview.process.pid)  # Pagefind, in the background
        preview.process.send_signal(signal.SIGTERM)
        preview.process.wait(timeout=30)
    finally:
        preview.stop()
    assert not preview.workdir.exists()
    assert not any(alive(pid) for pid in indexers)
    assert "Traceback" not in "".join(preview.stderr)


def test_the_folder_of_a_killed_preview_is_removed_by_the_next_one(project: Project) -> None:
    first = start_preview(project.root)
    first.wait_for_rebuilds(1, timeout=60)
    first.process.kill()
    first.process.wait()
    assert first.workdir.is_dir()  # SIGKILL: nothing could clean up
    second = start_preview(project.root)
    try:
        assert not first.workdir.exists()
        assert second.workdir.is_dir()
    finally:
        second.stop()


def test_an_index_stopped_while_its_pages_are_written_ends_at_once_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    # The preview stops the last rebuild's background index before it builds again: a stop
    # must not wait for thousands of pages to be written first.
    html = (
        "<!doctype html><html lang='en'><body><main data-pagefind-body>GLM {n}</main></body></html>"
    )
    pages = [Page(f"guides/g{n}/index.html", html.format(n=n).encode()) for n in range(50)]
    stopped = threading.Event()
    stopped.set()
    out = tmp_path / "site"
    with pytest.raises(OutputError, match="stopped before the pages were written"):
        SearchIndex(pages, "en", out, stopped)
    assert list(tmp_path.iterdir()) == []
    with SearchIndex(pages, "en", out, threading.Event()) as index:  # not stopped: indexed
        assert any(page.path.endswith("pagefind-entry.json") for page in index.pages())


def test_an_index_stopped_by_ctrl_c_while_its_pages_are_written_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGTERM arrives as KeyboardInterrupt, which is no OSError: the index still owns its folder.
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(search, "_write_site", interrupted)
    with pytest.raises(KeyboardInterrupt):
        SearchIndex([Page("index.html", b"<main>GLM</main>")], "en", tmp_path / "site")
    assert list(tmp_path.iterdir()) == []


def test_a_build_stopped_before_it_notes_a_folder_it_made_still_removes_it(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The signal may fall between making a work folder and keeping its name: the folder carries
    # the build's process id, and a stopped build removes every folder of its own.
    made = []

    def made_then_stopped(out_dir: Path, need: int) -> Path:
        made.append(workdirs.search_folder(out_dir, need))
        raise KeyboardInterrupt

    assert project.run().returncode == 0
    monkeypatch.setattr(search, "search_folder", made_then_stopped)
    before = tree_digest(project.out)
    other = project.out.parent / f"._site.search-{os.getppid()}-x"  # a live run's: left alone
    other.mkdir()
    change = project.root / "content" / "site.yaml"
    change.write_text(change.read_text("utf-8") + "\n", "utf-8")

    assert main(["--root", str(project.root), "--no-cache", "--quiet"]) == 130

    assert made and not made[0].exists()
    assert leftovers(project) == [other.name]
    assert tree_digest(project.out) == before
    assert "Stopped: the site was not written" in capsys.readouterr().err


def test_a_work_folder_that_cannot_be_removed_is_said_to_remain(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old output the user made read-only (root removes anything, so the removal fails
    here by hand): the run says it is still there instead of saying it removed it."""
    project.out.mkdir()  # the new output is there: the old one is only to be removed
    left = project.out.parent / "._site.old-999999999-abc"
    left.mkdir()
    monkeypatch.setattr(workdirs.shutil, "rmtree", lambda *args, **kwargs: None)
    assert workdirs.tidy(project.out) == [
        "Could not remove ._site.old-999999999-abc, left by an earlier run: remove it yourself"
    ]
    monkeypatch.undo()
    assert workdirs.tidy(project.out) == [
        "Removed ._site.old-999999999-abc, left by a run that was stopped"
    ]
    assert not left.exists()


def test_the_search_index_works_in_memory_where_there_is_room_else_beside_the_output(
    project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    memory = tmp_path / "shm"
    memory.mkdir()
    monkeypatch.setattr(workdirs, "SCRATCH", memory)
    gone = memory / f"{workdirs.SEARCH_PREFIX}{dead_pid()}-old"  # a killed run's
    gone.mkdir()
    made: list[Path] = []

    def noted(out_dir: Path, need: int) -> Path:
        made.append(workdirs.search_folder(out_dir, need))
        return made[-1]

    monkeypatch.setattr(search, "search_folder", noted)
    assert main(["--root", str(project.root), "--no-cache", "--quiet"]) == 0
    assert made[-1].parent == memory and made[-1].name.startswith(workdirs.SEARCH_PREFIX)
    assert not gone.exists() and not made[-1].exists()  # the killed run's and its own removed
    assert (project.out / "pagefind" / "pagefind-entry.json").is_file()
    monkeypatch.setattr(workdirs, "SCRATCH_SPARE", 1 << 62)  # no room: beside the output
    (project.root / "content" / "site.yaml").write_text(
        (project.root / "content" / "site.yaml").read_text("utf-8") + "\n", "utf-8"
    )
    assert main(["--root", str(project.root), "--no-cache", "--quiet"]) == 0
    assert made[-1].parent == project.out.parent and ".search-" in made[-1].name
    assert (project.out / "pagefind" / "pagefind-entry.json").is_file()
    assert leftovers(project) == [] and list(memory.iterdir()) == []
    monkeypatch.setattr(workdirs, "SCRATCH_SPARE", 0)
    monkeypatch.setattr(workdirs, "SCRATCH", project.root / "build.py")  # unusable: a file
    made.append(workdirs.search_folder(project.out, 1))
    assert made[-1].parent == project.out.parent and ".search-" in made[-1].name


def dead_pid() -> int:
    """A process id no process has now (a child that has ended and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid
