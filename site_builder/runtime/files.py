"""Reading a file that must be a regular file. Whatever else is found in its place is refused
at once: a named pipe (opening one for reading waits for a writer, forever), a socket, a
device, a folder, and, where a symlink must not be followed, a symlink. The check is made on
the file opened, not on its name beforehand, so a file swapped since it was listed is caught.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class NotRegular(OSError):
    """What is at a path is not a regular file (or is a symlink that was not to be followed)."""


@contextmanager
def opened(path: str | Path, *, follow: bool = True) -> Iterator[BinaryIO]:
    """Open a regular file for reading, never waiting on what else is there (`NotRegular`);
    without `follow`, never through a symlink either."""
    opener = _without_waiting if follow else _without_waiting_or_following
    try:
        with open(path, "rb", opener=opener) as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                raise NotRegular(errno.EINVAL, "not a regular file", os.fspath(path))
            yield stream
    except OSError as error:
        if not follow and error.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "a symlink", os.fspath(path)) from None
        raise


def regular_bytes(path: str | Path) -> bytes:
    """Return the bytes of a regular file (following symlinks), never waiting on a named pipe
    put in its place (`NotRegular`)."""
    with opened(path) as stream:
        return stream.read()


def holds(path: Path, content: bytes) -> bool:
    """Whether the file at `path` is a regular file (not a symlink) holding exactly
    `content` (its size is looked at first)."""
    try:
        with opened(path, follow=False) as stream:
            if os.fstat(stream.fileno()).st_size != len(content):
                return False
            return stream.read() == content
    except OSError:
        return False


def _without_waiting(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)


def _without_waiting_or_following(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW)
