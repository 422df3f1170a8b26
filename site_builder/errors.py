"""The exceptions the builder raises; only the CLI turns them into exit codes.

SiteError
├── InputError     bad records, front matter, config or file layout (all problems of one run)
├── OutputError    the output folder could not be written or swapped
├── BuilderError   a bug in the builder itself, met while building one page's view
└── ServeError     the preview server could not start (port in use, bad host)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def one_line(text: str) -> str:
    """Return text safe for one terminal line: control characters and newlines escaped."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input: where it is and what is wrong."""

    source: str
    location: str
    message: str

    def __str__(self) -> str:
        """Return the one-line form `source: location: message`."""
        return one_line(f"{self.source}: {self.location}: {self.message}")


class SiteError(Exception):
    """Base class of every error the builder reports to the user."""


class InputError(SiteError):
    """One or more inputs are invalid; carries every problem found in the stage."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))

    def __reduce__(self) -> tuple[type, tuple[tuple[Problem, ...]]]:
        """Pickle by the problems, so an error raised in a worker process arrives whole."""
        return type(self), (self.problems,)


class OutputError(SiteError):
    """The site could not be written; the previous output is left as it was."""

    def __init__(self, folder: object, message: str) -> None:
        self.folder = str(folder)
        self.message = message
        super().__init__(f"{self.folder}: output: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        """Pickle by folder and message (errors cross from worker processes)."""
        return type(self), (self.folder, self.message)


class BuilderError(SiteError):
    """The builder failed on valid input: a bug to report, not a mistake in the editor's files."""

    def __init__(
        self, source: str, error: Exception | str, doing: str = "building the page's view"
    ) -> None:
        self.source = source
        self.detail = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.doing = doing
        super().__init__(
            f"{source}: builder bug: {doing} failed ({one_line(self.detail)}); this is a bug "
            f"in the site builder, not in the file: please report it with this file"
        )

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        """Pickle by text: the original exception may not pickle."""
        return type(self), (self.source, self.detail, self.doing)


class ServeError(SiteError):
    """The preview server could not listen on the requested address."""
