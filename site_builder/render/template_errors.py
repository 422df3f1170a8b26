"""Locate a template error for the editor: the template file and line that failed.

Syntax errors carry their line; errors raised while a template runs are found in the
traceback's frames that belong to a file under `templates/`.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from site_builder.config import BuildConfig
from site_builder.errors import Problem


def template_problem(error: Exception, config: BuildConfig) -> Problem:
    """Locate a template error: syntax errors carry their line, runtime errors their traceback."""
    name, line = getattr(error, "filename", None), getattr(error, "lineno", None)
    if name is None:
        frames = [
            frame
            for frame in traceback.extract_tb(error.__traceback__)
            if Path(frame.filename).resolve().is_relative_to(config.templates_dir)
        ]
        if frames:
            name, line = frames[-1].filename, frames[-1].lineno
    source = "templates/"
    if name:
        path = Path(name).resolve()
        source = (
            path.relative_to(config.root).as_posix() if path.is_relative_to(config.root) else name
        )
    message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
    return Problem(source, f"line {line}" if line else "template", message)
