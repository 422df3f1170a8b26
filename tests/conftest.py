"""Shared fixtures: the real project, throwaway copies of it, and a CLI runner."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from site_builder.config import BuildConfig
from site_builder.pipeline import build

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EDITORIAL_KEYS = ("aiHot", "aiHotCandidate", "serp", "discovery")
BOUNDARY_KEYS = ("boundary", "claimBoundary", "auditBoundary", "transferWarning")


def load_records() -> dict[str, dict[str, Any]]:
    """Return the real seed records by file name."""
    return {
        path.name: json.loads(path.read_text("utf-8"))
        for path in sorted((ROOT / "records").glob("*.json"))
    }


def tree_digest(folder: Path) -> dict[str, str]:
    """Return {relative path: sha256} of every file under `folder`."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def soup(path: Path) -> BeautifulSoup:
    """Parse a built HTML file."""
    return BeautifulSoup(path.read_text("utf-8"), "html.parser")


@dataclass
class Project:
    """A throwaway copy of the project that a test may change."""

    root: Path

    @property
    def out(self) -> Path:
        """The default output folder of this copy."""
        return self.root / "_site"

    def write(self, relative: str, text: str) -> Path:
        """Write a file inside the project."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        return path

    def record(self, name: str) -> dict[str, Any]:
        """Return a record of this copy as a dict."""
        return json.loads((self.root / "records" / name).read_text("utf-8"))

    def save_record(self, name: str, data: dict[str, Any]) -> Path:
        """Write a record as JSON."""
        return self.write(f"records/{name}", json.dumps(data, indent=2))

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `python build.py ARGS` in this copy, as a user would."""
        return run_build(self.root, *args, env=env)


def run_build(
    root: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real entry point in a subprocess and capture its output."""
    return subprocess.run(
        [sys.executable, str(root / "build.py"), *args],
        cwd=cwd or root,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def copy_project(target: Path, source: Path = ROOT) -> Project:
    """Copy the inputs and entry point of a project into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("records", "content", "templates"):
        if (source / name).exists():
            shutil.copytree(source / name, target / name)
    shutil.copy2(ROOT / "build.py", target / "build.py")
    shutil.copytree(
        ROOT / "site_builder", target / "site_builder", ignore=shutil.ignore_patterns("__pycache__")
    )
    return Project(target)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh copy of the real project."""
    return copy_project(tmp_path / "project")


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Project]:
    """Return a factory of project copies, from the real project or a fixture folder."""

    def factory(fixture: str | None = None, name: str = "project") -> Project:
        source = FIXTURES / fixture if fixture else ROOT
        made = copy_project(tmp_path / name, source)
        if fixture:
            for folder in ("content", "templates"):
                if not (made.root / folder).exists():
                    shutil.copytree(
                        ROOT / folder, made.root / folder, ignore=shutil.ignore_patterns("*.md")
                    )
        return made

    return factory


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real project built once into a temporary folder."""
    out = tmp_path_factory.mktemp("site") / "_site"
    build(BuildConfig.for_root(ROOT, out))
    return out
