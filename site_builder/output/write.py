"""Write the site atomically: into a staging folder (in parts, if need be: `StagedSite`), then
swap it into place.

A failed build, or one interrupted before the swap, leaves the previous output untouched; one
killed between the swap's two renames is repaired by the next run (`workdirs.tidy`).

With a build cache, the site a swap replaces is not deleted but kept in the cache as the spare
(`SPARE`), and the next build stages into it: it changes only the files that differ and removes
the ones the new site has not, instead of making every folder and file of the site again (a
build after one edit at 1,000 guides made 1,100 folders and deleted as many). A file is kept
only if it is the very file the page's bytes are stored in, or holds exactly the page's bytes;
every other one is unlinked and written anew, never written into (it may be a link to the live
site's). Deleting the cache deletes the spare: the next build stages into a new folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from site_builder.errors import OutputError
from site_builder.model.models import Page
from site_builder.render.stored_pages import put
from site_builder.runtime.files import holds
from site_builder.runtime.workdirs import work_folder

SPARE = "spare-site"
"""The folder, in the build cache's, of the site the last swap replaced (the next staging)."""


def write_site(
    pages: Sequence[Page],
    out_dir: Path,
    inputs: Sequence[Path] = (),
    spare: Path | None = None,
) -> None:
    """Write `pages` to `out_dir`, replacing its previous contents in one swap (staged in the
    `spare` site, if there is one, which the replaced site then becomes)."""
    with StagedSite(out_dir, inputs, spare) as staged:
        staged.add(pages)
        staged.publish()


class StagedSite:
    """A site written in parts into a staging folder beside `out_dir`, then swapped into place
    by `publish` (so a build writes its pages while Pagefind still indexes them). Leaving the
    `with` block unpublished, for whatever reason, removes the staging folder and leaves the
    previous site untouched. With a `spare` folder (see the module), the staging folder is
    the spare site if there is one, and the replaced site becomes the spare."""

    def __init__(
        self, out_dir: Path, inputs: Sequence[Path] = (), spare: Path | None = None
    ) -> None:
        self.out_dir = out_dir.resolve()
        _refuse_input_folder(self.out_dir, inputs)
        self._spare = spare
        try:
            self.out_dir.parent.mkdir(parents=True, exist_ok=True)
            self._staging = work_folder(self.out_dir, "staging")
        except OSError as error:
            message = f"cannot create the staging folder: {error.strerror or error}"
            raise OutputError(self.out_dir.parent, message) from None
        self._left = _claimed(spare, self._staging)
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
            write_tree(pages, self._staging, previous, self._left)
        except OSError as error:
            message = f"cannot write the site: {error.strerror or error}"
            raise OutputError(self.out_dir, message) from None

    def publish(self) -> None:
        """Remove what the spare site held that the new one has not, and swap the staged
        site into place."""
        try:
            if self._left is not None:
                self._left.remove_the_rest(self._staging)
            _swap(self._staging, self.out_dir, self._spare)
        except OSError as error:
            message = f"cannot write the site: {error.strerror or error}"
            raise OutputError(self.out_dir, message) from None
        self._published = True


class SpareSite:
    """What a spare site held when a build took it as its staging folder: its files (and
    symlinks) and its folders, by path relative to it. `write_tree` takes out of it each
    path it writes; `remove_the_rest` removes what is left."""

    def __init__(self, root: Path) -> None:
        self.files: dict[str, os.stat_result] = {}
        self.folders: set[str] = set()
        self.used: set[str] = set()
        """The folders the new site has files in."""
        pending = [""]
        while pending:
            relative = pending.pop()
            with os.scandir(root / relative) as entries:
                for entry in entries:
                    name = os.path.join(relative, entry.name)
                    if entry.is_dir(follow_symlinks=False):
                        self.folders.add(name)
                        pending.append(name)
                    else:
                        self.files[name] = entry.stat(follow_symlinks=False)

    def folder(self, root: Path, name: str) -> None:
        """Make the folder `name` (and those above it) a real folder under `root`, removing
        a file or symlink in its way."""
        parts = name.split(os.sep)
        for depth in range(1, len(parts) + 1):
            above = os.sep.join(parts[:depth])
            self.used.add(above)
            if above in self.folders:
                continue
            if self.files.pop(above, None) is not None:
                os.unlink(root / above)
            os.mkdir(root / above)
            self.folders.add(above)

    def kept(self, root: Path, name: str, page: Page, stored: os.stat_result | None) -> bool:
        """Whether the spare's file at `name` already is the page: the file its bytes are
        stored in (`stored`), or a file holding exactly its bytes. Otherwise whatever is at
        `name` is removed (unlinked, never written into), so the page can be written."""
        if name in self.folders:
            shutil.rmtree(root / name)
            prefix = name + os.sep
            self.files = {
                path: held for path, held in self.files.items() if not path.startswith(prefix)
            }
            self.folders = {path for path in self.folders if not path.startswith(prefix)}
            self.folders.discard(name)
            return False
        held = self.files.pop(name, None)
        if held is None:
            return False
        if stat.S_ISREG(held.st_mode):
            if stored is not None:
                if (held.st_ino, held.st_dev) == (stored.st_ino, stored.st_dev):
                    return True
            elif holds(root / name, page.content):
                return True
        os.unlink(root / name)
        return False

    def remove_the_rest(self, root: Path) -> None:
        """Remove the files no page was written to, then the folders left empty."""
        for name in self.files:
            os.unlink(root / name)
        self.files = {}
        unused = self.folders - self.used
        for name in sorted(unused, key=lambda name: name.count(os.sep), reverse=True):
            os.rmdir(root / name)
        self.folders -= unused


def _claimed(spare: Path | None, staging: Path) -> SpareSite | None:
    """Move the spare site, if there is one, to `staging` (an empty folder: the move replaces
    it) and return what it holds; None, with `staging` still empty, if there is none (or it is
    on another file system, or another build took it first)."""
    if spare is None:
        return None
    try:
        if not stat.S_ISDIR(os.lstat(spare).st_mode):
            return None
        os.rename(spare, staging)
    except OSError:
        return None
    try:
        return SpareSite(staging)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        return None


def write_tree(
    pages: Sequence[Page],
    folder: Path,
    previous: Path | None = None,
    spare: SpareSite | None = None,
) -> None:
    """Write every page under `folder` (a new folder, which must exist; or a spare site's, as
    `spare` describes it). A page whose bytes are in a file (`Page.stored`), or whose bytes
    its `linkable` file or the file at its path under `previous` (the site being replaced)
    still holds, is hard-linked from there: on this project's disks creating a file costs
    about 15 times what linking one does, and a build after one edit rewrites almost nothing."""
    root = folder.resolve()
    made = {root}
    plain: dict[str, bool] = {}  # folders of `previous` with no symlink on the way
    for page in pages:
        name = os.path.normpath(page.path)
        if os.path.isabs(name) or name == os.pardir or name.startswith(os.pardir + os.sep):
            raise OSError(f"page path {page.path!r} leaves the output folder")
        target = root / name
        if target.parent not in made:
            if spare is None:
                target.parent.mkdir(parents=True, exist_ok=True)
            else:
                spare.folder(root, os.path.dirname(name))
            made.update(target.parent.parents)
            made.add(target.parent)
        if spare is not None:
            stored = os.stat(page.stored) if page.stored is not None else None
            if spare.kept(root, name, page, stored):
                continue
        if page.stored is not None:
            put(page, target)
        elif page.linkable is not None and _link(page.linkable, page.content, target):
            continue
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
    except OSError:
        return False
    return plain[folder] and _link(source, content, target)  # never through a symlink


def _link(source: Path, content: bytes, target: Path) -> bool:
    """Hard-link `target` to `source` if that is a regular file (not a symlink) holding
    exactly `content`; return whether it did."""
    if not holds(source, content):
        return False
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        return False
    return True


def _swap(staging: Path, out_dir: Path, spare: Path | None = None) -> None:
    """Move the staging folder to `out_dir`; the old output is removed only after the move
    (or becomes the `spare` site, where there is none yet)."""
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
    if spare is not None and not os.path.lexists(spare):
        with suppress(OSError):  # on another file system, or another build's came first
            old.rename(spare)
            return
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
