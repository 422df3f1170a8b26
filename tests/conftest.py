"""Shared fixtures: the seed project, throwaway copies of it, and a CLI runner.

The tests never read the publisher's `records/` and `content/` (they grow with every guide).
They read `tests/fixtures/seed-site/` instead: byte copies of the four seed records and of
the prose and settings written for them. Templates and code are shared with the real project
(`ROOT/templates`, `ROOT/site_builder`, `ROOT/build.py`). Only `tests/test_real_content.py`
builds the real records and content.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

from site_builder.config import BuildConfig
from site_builder.model.vocabulary import Vocabulary, using
from site_builder.pipeline import build
from site_builder.runtime import files

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEED_SITE = FIXTURES / "seed-site"
"""The test project's inputs: `records/` and `content/` (no templates: those are ROOT's)."""
SEED_VOCABULARY = Vocabulary.model_validate(
    yaml.safe_load((SEED_SITE / "content/vocabulary.yaml").read_text("utf-8"))
)
"""The fixture project's record vocabulary: what its builds read records with."""
EDITORIAL_KEYS = ("aiHot", "aiHotCandidate", "serp", "discovery")
BOUNDARY_KEYS = ("boundary", "claimBoundary", "auditBoundary", "transferWarning")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Run two test processes a core (`--numprocesses=auto`, pyproject's default): about half
    of the suite waits on browsers, servers and subprocesses, so the cores stay busy. The
    suite on the project's 2-core machine: 1,000 s in one process, 714 s in two, 590 s in four.
    `-n 0` runs it in this process (for a debugger or `-x`)."""
    return 2 * (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def load_records() -> dict[str, dict[str, Any]]:
    """Return the seed records of the fixture project by file name."""
    return {
        path.name: json.loads(path.read_text("utf-8"))
        for path in sorted((SEED_SITE / "records").glob("*.json"))
    }


def tree_digest(folder: Path) -> dict[str, str]:
    """Return {relative path: sha256} of every file under `folder`."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


FIFO_AT_RENDER = """
import os, sys
from pathlib import Path
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.pipeline import build
{prelude}
root, swapped = Path(sys.argv[1]), Path(sys.argv[1]) / sys.argv[2]
def swap(stage):
    if stage == "render":
        swapped.unlink()
        os.mkfifo(swapped)
try:
    build(BuildConfig.for_root(root, jobs=2), on_stage=swap)
except InputError as error:
    sys.exit(str(error))
"""


def build_with_a_fifo_at_render(
    root: Path, relative: str, prelude: str = "", seconds: float = 120
) -> tuple[int, str]:
    """Build the project at `root` with its file `relative` made a named pipe as the render
    stage starts (after the inputs were listed and checked), then put the file back; return
    the build's exit code and its stderr. The build runs in a process group of its own, so
    one that waits on the pipe is killed, workers and all, and fails the test."""
    path = root / relative
    kept = path.read_bytes()
    command = [sys.executable, "-c", FIFO_AT_RENDER.format(prelude=prelude), str(root), relative]
    building = subprocess.Popen(
        command, cwd=root, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        _, stderr = building.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(building.pid, signal.SIGKILL)
        building.communicate()
        raise AssertionError(f"the build waits on the FIFO at {relative}") from None
    finally:
        path.unlink(missing_ok=True)
        path.write_bytes(kept)
    return building.returncode, stderr


def without_waiting(call: Callable[[], object], seconds: float = 20) -> object:
    """Return what `call()` returns, or the OSError it raises, failing the test if it takes
    over `seconds` (it waits on a named pipe; the thread is left blocked, as a daemon)."""
    done: list[object] = []

    def run() -> None:
        try:
            done.append(call())
        except OSError as error:
            done.append(error)

    running = threading.Thread(target=run, daemon=True)
    running.start()
    running.join(timeout=seconds)
    assert done, "it waits (on a named pipe?)"
    return done[0]


def refuse_reading(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Make reading `target` fail as reading an unreadable file does (as root, chmod cannot
    make a file unreadable)."""
    original, regular = Path.read_bytes, files.regular_bytes

    def read_bytes(path: Path) -> bytes:
        if path == target:
            raise PermissionError(13, "Permission denied")
        return original(path)

    def regular_bytes(path: str | Path) -> bytes:
        if Path(path) == target:
            raise PermissionError(13, "Permission denied")
        return regular(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(files, "regular_bytes", regular_bytes)


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


def audit(project: Project) -> tuple[int, dict[str, Any]]:
    """Run `--audit --format json` in a project; return the exit code and the parsed report."""
    result = project.run("--audit", "--format", "json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


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


def assert_as_cold(project: Project) -> None:
    """The site written is what a build without a cache writes."""
    cold = project.root / "_cold"
    assert build(BuildConfig.for_root(project.root, cold, cache=False)).written
    assert tree_digest(project.out) == tree_digest(cold)


def copy_project(target: Path, source: Path = SEED_SITE) -> Project:
    """Copy the inputs of a project (default: the seed project) and the entry point into `target`.

    `records/` and `content/` come from `source` when it has them; `templates/` from `source`
    when it has them, else ROOT's (the fixture projects share the real templates).
    """
    target.mkdir(parents=True, exist_ok=True)
    for name in ("records", "content"):
        if (source / name).exists():
            shutil.copytree(source / name, target / name)
    templates = source / "templates" if (source / "templates").exists() else ROOT / "templates"
    shutil.copytree(templates, target / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "build.py", target / "build.py")
    shutil.copytree(
        ROOT / "site_builder", target / "site_builder", ignore=shutil.ignore_patterns("__pycache__")
    )
    return Project(target)


@pytest.fixture(autouse=True)
def seed_vocabulary() -> Iterator[Vocabulary]:
    """In-process tests read records with the seed project's vocabulary, as its builds do."""
    with using(SEED_VOCABULARY):
        yield SEED_VOCABULARY


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh copy of the seed project."""
    return copy_project(tmp_path / "project")


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Project]:
    """Return a factory of project copies: the seed project, or a fixture folder.

    A fixture folder without `content/` gets the seed project's settings, rules and registry
    (not its prose); one without `templates/` gets ROOT's.
    """

    def factory(fixture: str | None = None, name: str = "project") -> Project:
        source = FIXTURES / fixture if fixture else SEED_SITE
        made = copy_project(tmp_path / name, source)
        if not (made.root / "content").exists():
            # A records-only fixture is about rendering records: the seed's settings, rules and
            # registry, no prose, no acknowledgements, and its records published without prose.
            ignore = shutil.ignore_patterns("*.md", "acknowledged.yaml")
            shutil.copytree(SEED_SITE / "content", made.root / "content", ignore=ignore)
            settings = made.root / "content" / "site.yaml"
            settings.write_text(settings.read_text("utf-8") + "publish_without_prose: true\n")
        return made

    return factory


SEED_ROOT_ENV = "GLM52_TESTS_SEED_ROOT"
"""Where this process's seed_root() lives, as `pid:path`. pytest imports this file as
`conftest` and the tests as `tests.conftest`: the variable lets both share one copy."""


@functools.cache
def seed_root() -> Path:
    """A complete copy of the seed project (inputs, templates, code), made once per process in
    a temporary folder that is removed at exit. Treat it as read-only: copy it to change it."""
    pid, _, path = os.environ.get(SEED_ROOT_ENV, "").partition(":")
    if pid == str(os.getpid()) and (Path(path) / "build.py").is_file():
        return Path(path)
    base = Path(tempfile.mkdtemp(prefix="seed-site-"))
    atexit.register(shutil.rmtree, base, True)
    root = copy_project(base / "project").root
    os.environ[SEED_ROOT_ENV] = f"{os.getpid()}:{root}"
    return root


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed project built once into a temporary folder."""
    out = tmp_path_factory.mktemp("site") / "_site"
    build(BuildConfig.for_root(seed_root(), out))
    return out
