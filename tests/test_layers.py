"""Modules import only from modules above them: one-way dependencies, no cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Project

PKG = Path(__file__).resolve().parent.parent / "site_builder"
PACKAGES: list[tuple[str, list[str]]] = [
    ("", ["errors", "config", "urls"]),
    (
        "model",
        [
            "claims",
            "schema",
            "vocabulary",
            "raw",
            "images",
            "links",
            "record_model",
            "declared",
            "models",
            "humanize",
            "formula",
        ],
    ),
    ("runtime", ["files", "lending", "workers", "workdirs", "progress", "stopwatch"]),
    ("cache", ["store", "fragments", "reuse"]),
    (
        "inputs",
        [
            "decode",
            "kept_fronts",
            "listing",
            "load",
            "evidence",
            "kept_records",
            "normalize",
            "assemble",
        ],
    ),
    ("verify", ["infer", "measurements", "kept_verifications", "records"]),
    (
        "present",
        [
            "ids",
            "cells",
            "measures",
            "charts",
            "caveats",
            "grids",
            "blocks",
            "views",
            "navigation",
            "structured",
        ],
    ),
    (
        "render",
        [
            "words",
            "stored_pages",
            "prose_blocks",
            "code_blocks",
            "markdown",
            "pageview",
            "page_keys",
            "deploy",
            "search_cut",
            "scan",
            "template_errors",
            "drawn_cells",
            "site_files",
            "pages",
            "site_pages",
        ],
    ),
    (
        "checks",
        [
            "seo",
            "minhash",
            "boilerplate",
            "sketches",
            "compared",
            "overlap",
            "consistency",
            "site",
            "acknowledge",
            "report",
        ],
    ),
    ("output", ["unchanged", "shard_cache", "shards", "search", "write"]),
    ("", ["pipeline"]),
    ("preview", ["served", "watching", "state", "builds", "server", "serve"]),
    ("commands", ["scaffold", "registry"]),
    ("", ["cli"]),
]
"""The stages in the order they may import each other: a package imports only from the
packages above it (and the top-level modules above it), a module only from modules above it."""
ORDER = [f"{package}.{name}" if package else name for package, names in PACKAGES for name in names]
# Each third-party library lives in one module.
OWNERS = {
    "jinja2": "render.pages",
    "markdown_it": "render.markdown",
    "pygments": "render.code_blocks",
    "mdit_py_plugins": "render.markdown",
    "yaml": "inputs.decode",
    "numpy": None,  # arrays: overlap shingles and signatures, related-guide scores (navigation)
    "selectolax": "render.scan",
    "defusedxml": None,  # XML: sitemaps (registry) and SVG images (images)
    "PIL": "model.images",
    "watchfiles": "preview.watching",
    "rich": "runtime.progress",
    "pydantic": None,
}


def imports(name: str) -> set[str]:
    """Return the top-level names a module imports."""
    tree = ast.parse(_file(name).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:  # `from site_builder.runtime import files`: the module
                module = f"{node.module}.{alias.name}"
                inner = module.removeprefix("site_builder.")
                found.add(module if module != inner and _file(inner).is_file() else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _file(name: str) -> Path:
    """Return the file of a module named as in ORDER (`render.scan`)."""
    return PKG / f"{name.replace('.', '/')}.py"


def test_every_module_is_in_the_layer_order() -> None:
    modules = {
        path.relative_to(PKG).with_suffix("").as_posix().replace("/", ".")
        for path in PKG.rglob("*.py")
        if path.name != "__init__.py"
    }
    assert modules == set(ORDER)


def test_every_package_says_what_it_holds() -> None:
    for package in {package for package, _ in PACKAGES if package}:
        assert ast.get_docstring(ast.parse((PKG / package / "__init__.py").read_text()))


@pytest.mark.parametrize("name", ORDER)
def test_imports_point_upstream(name: str) -> None:
    deps = {m.removeprefix("site_builder.") for m in imports(name) if m.startswith("site_builder.")}
    assert all(ORDER.index(dep) < ORDER.index(name) for dep in deps), deps


@pytest.mark.parametrize(("library", "owner"), [(k, v) for k, v in OWNERS.items() if v])
def test_each_library_lives_in_one_module(library: str, owner: str) -> None:
    users = {name for name in ORDER if any(m.split(".")[0] == library for m in imports(name))}
    assert users == {owner}


def test_a_build_loads_neither_the_preview_nor_other_commands(project: Project) -> None:
    """A build pays for what it runs: the preview's server, the registry import, the guide
    scaffold and the terminal display (a build whose output is piped) are not imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "build.py", "--quiet"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "site_builder.pipeline" in loaded and "jinja2" in loaded
    unwanted = {"site_builder.preview.serve", "site_builder.commands.registry"}
    unwanted |= {"site_builder.commands.scaffold", "rich", "http.server"}
    assert not unwanted & loaded
