"""Write the site atomically: into a fresh staging folder (in parts, if need be: `StagedSite`),
then swap it into place.

A failed build, or one interrupted before the swap, leaves the previous output untouched; one
killed between the swap's two renames is repaired by the next run (`workdirs.tidy`).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.render.stored_pages import put
from site_builder.runtime.workdirs import work_folder


def write_site(
    pages: Sequence[Page],
    out_dir: Path,
    inputs: Sequence[Path] = (),
) -> None:
    """Write `pages` to `out_dir`, replacing its previous contents in one swap."""
    with StagedSite(out_dir, inputs) as staged:
        staged.add(pages)
        staged.publish()


class StagedSite:
    """A site written in parts into a staging folder beside `out_dir`, then swapped into place
    by `publish` (so a build writes its pages while Pagefind still indexes them). Leaving the
    `with` block unpublished, for whatever reason, removes the staging folder and leaves the
    previous site untouched."""

    def __init__(self, out_dir: Path, inputs: Sequence[Path] = ()) -> None:
        self.out_dir = out_dir.resolve()
        _refuse_input_folder(self.out_dir, inputs)
        try:
            self.out_dir.parent.mkdir(parents=True, exist_ok=True)
            self._staging = work_folder(self.out_dir, "staging")
        except OSError as error:
            message = f"cannot create the staging folder: {error.strerror or error}"
            raise OutputError(self.out_dir.parent, message) from None
        self._published = False

    def __enter__(self) -> StagedSite:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._published:
            shutil.rmtree(self._staging, ignore_errors=True)

    def add(self, pages: Sequence[Page]) -> None:
        """Write more pages into the staging folder (a page the site it replaces already has,
        byte for byte, is linked from it)."""
        previous = self.out_dir if self.out_dir.is_dir() else None
        try:
            write_tree(pages, self._staging, previous)
        except OSError as error:
            message = f"cannot write the site: {error.strerror or error}"
            raise OutputError(self.out_dir, message) from None

    def publish(self) -> None:
        """Swap the staged site into place."""
        try:
            _swap(self._staging, self.out_dir)
        except OSError as error:
            message = f"cannot write the site: {error.strerror or error}"
            raise OutputError(self.out_dir, message) from None
        self._published = True


def write_tree(pages: Sequence[Page], folder: Path, previous: Path | None = None) -> None:
    """Write every page under `folder` (a new folder, which must exist). A page whose bytes
    are in a file (`Page.stored`), or whose bytes the file at its path under `previous` (the
    site being replaced) already holds, is hard-linked from there: on this project's disks
    creating a file costs about 15 times what linking one does, and a build after one edit
    rewrites almost nothing."""
    root = folder.resolve()
    made = {root}
    plain: dict[str, bool] = {}  # folders of `previous` with no symlink on the way
    for page in pages:
        name = os.path.normpath(page.path)
        if os.path.isabs(name) or name == os.pardir or name.startswith(os.pardir + os.sep):
            raise OSError(f"page path {page.path!r} leaves the output folder")
        target = root / name
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.update(target.parent.parents)
            made.add(target.parent)
        if page.stored is not None:
            put(page, target)
        elif previous is None or not _linked(previous, name, page.content, target, plain):
            target.write_bytes(page.content)
    os.chmod(root, 0o755)


def _linked(
    previous: Path, name: str, content: bytes, target: Path, plain: dict[str, bool]
) -> bool:
    """Hard-link `target` to the file `name` under `previous` if that is a regular file
    inside it holding exactly `content`; return whether it did. `plain` remembers which
    folders have no symlink on the way (each is looked at once, not once a file)."""
    source = previous / name
    folder = str(source.parent)
    try:
        if folder not in plain:
            plain[folder] = os.path.realpath(folder) == folder
        if not plain[folder]:
            return False  # a symlink on the way: never link to what it points at
        with open(source, "rb", opener=_no_follow) as file:  # nor if the file is one
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size != len(content):
                return False
            if file.read() != content:
                return False
        os.link(source, target, follow_symlinks=False)
    except OSError:
        return False
    return True


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)


def _swap(staging: Path, out_dir: Path) -> None:
    """Move the staging folder to `out_dir`; the old output is removed only after the move."""
    if not out_dir.exists():
        staging.rename(out_dir)
        return
    old = work_folder(out_dir, "old")
    old.rmdir()
    with _signals_deferred():
        out_dir.rename(old)
        try:
            staging.rename(out_dir)
        except BaseException:
            if not out_dir.exists():
                old.rename(out_dir)
            raise
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM during the two renames, so they cannot leave no output at all."""
    signals = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _refuse_input_folder(out_dir: Path, inputs: Sequence[Path]) -> None:
    """Refuse an output folder that is, holds or sits inside an input folder (records/, ...)."""
    for folder in inputs:
        folder = folder.resolve()
        if folder.is_relative_to(out_dir) or out_dir.is_relative_to(folder):
            message = (
                f"refusing to write into or replace a folder that holds build inputs ({folder})"
            )
            raise OutputError(out_dir, message)


def write_file_atomic(path: Path, text: str) -> None:
    """Replace one file in a single rename, so a reader never sees half of it."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise OutputError(path, f"cannot write: {error.strerror or error}") from None
