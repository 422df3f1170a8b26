"""Temporary work beside the output folder, owned by one process, and its repair.

Every folder a run makes next to the output (`.<out>.staging-<pid>-*` while writing,
`.<out>.old-<pid>-*` during the swap, `.<out>.search-<pid>-*` while Pagefind indexes,
`.<out>.pages-<pid>-*` holding links to the cached pages a build writes) carries
its owner's process id. A build stopped by Ctrl-C or SIGTERM removes its own as it stops
(`tidy(ours=True)`), even one it made a moment before the signal. A run that was killed
leaves them behind; the next run of any command removes those whose owner is gone, and if
the kill fell between the two renames of the swap (no output folder, an `old` one beside
it) it puts the previous site back first. The preview's folder in the system's temporary
directory is named the same way, and so is the search index's where Linux gives it memory to
write to (`search_folder`: `/dev/shm/glm52-search-<pid>-*`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

KINDS = ("staging", "old", "search", "pages")
PREVIEW_PREFIX = "glm52-preview-"
SCRATCH = Path("/dev/shm")
"""A file system in memory (Linux's tmpfs), where the search index does its work when there is
room: Pagefind reads and writes thousands of small files, which cost a disk file system about
a second of system time at 1,000 guides (docs/performance.md)."""
SEARCH_PREFIX = "glm52-search-"
SCRATCH_SPARE = 256 << 20
"""Memory the search index leaves free in SCRATCH beyond what it asks for."""


def work_folder(out_dir: Path, kind: str) -> Path:
    """Make an empty folder beside `out_dir` for this process's `kind` of work."""
    assert kind in KINDS
    if not out_dir.parent.is_dir():
        out_dir.parent.mkdir(parents=True)
    prefix = f".{out_dir.name}.{kind}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=out_dir.parent))


def search_folder(out_dir: Path, need: int) -> Path:
    """Make an empty folder for this process's search index: in SCRATCH when it has `need`
    bytes free and SCRATCH_SPARE more, else beside `out_dir` (`work_folder`)."""
    try:
        free = os.statvfs(SCRATCH)
        roomy = (
            os.access(SCRATCH, os.W_OK) and free.f_bavail * free.f_frsize >= need + SCRATCH_SPARE
        )
        if roomy:
            _remove_gone(SCRATCH, SEARCH_PREFIX, ours=False)
            return Path(tempfile.mkdtemp(prefix=f"{SEARCH_PREFIX}{os.getpid()}-", dir=SCRATCH))
    except OSError:
        pass
    return work_folder(out_dir, "search")


def tidy(out_dir: Path, *, ours: bool = False) -> list[str]:
    """Repair an interrupted swap and remove the work folders of runs that died, or with
    `ours` those of this process (a build stopped by Ctrl-C or SIGTERM may be stopped before
    it could note a folder it made); return what was done, one line each (for the terminal)."""
    _remove_gone(SCRATCH, SEARCH_PREFIX, ours)
    parent = out_dir.parent
    if not parent.is_dir():
        return []
    pattern = re.compile(rf"\.{re.escape(out_dir.name)}\.({'|'.join(KINDS)})-(\d+)-")
    left: dict[str, list[Path]] = {kind: [] for kind in KINDS}
    for entry in parent.iterdir():
        found = pattern.match(entry.name)
        owner = int(found[2]) if found else 0
        if found and entry.is_dir() and not entry.is_symlink() and _gone(owner, ours):
            left[found[1]].append(entry)
    done = []
    olds = sorted(left["old"], key=lambda path: path.stat().st_mtime)
    if olds and not out_dir.exists():
        olds.pop().rename(out_dir)
        done.append(f"Restored {out_dir}: a run stopped between the two renames of its swap")
    for path in [*left["staging"], *left["search"], *left["pages"], *olds]:
        shutil.rmtree(path, ignore_errors=True)
        if path.exists():  # a folder inside it the user may not change (chmod a-w)
            done.append(f"Could not remove {path.name}, left by an earlier run: remove it yourself")
        else:
            done.append(f"Removed {path.name}, left by a run that was stopped")
    return done


def preview_folder() -> Path:
    """Make the preview's folder in the system's temporary directory, first removing those of
    previews that were killed (`glm52-preview-<pid>-*` whose process is gone)."""
    _remove_gone(Path(tempfile.gettempdir()), PREVIEW_PREFIX, ours=False)
    return Path(tempfile.mkdtemp(prefix=f"{PREVIEW_PREFIX}{os.getpid()}-"))


def _remove_gone(folder: Path, prefix: str, ours: bool) -> None:
    """Remove the folders `<prefix><pid>-*` in `folder` whose process is gone (`_gone`)."""
    try:
        entries = list(folder.glob(f"{prefix}*"))
    except OSError:
        return
    for entry in entries:
        found = re.match(rf"{re.escape(prefix)}(\d+)-", entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and _gone(int(found[1]), ours):
            shutil.rmtree(entry, ignore_errors=True)


def _gone(pid: int, ours: bool) -> bool:
    """Whether a work folder's owner is gone, or with `ours`, whether it is this process."""
    return pid == os.getpid() if ours else not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts as alive)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
