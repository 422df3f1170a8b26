"""Modules import only from modules above them: one-way dependencies, no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "site_builder"
ORDER = [
    "errors",
    "cache",
    "lending",
    "claims",
    "config",
    "schema",
    "vocabulary",
    "inputs",
    "images",
    "urls",
    "links",
    "record_model",
    "declared",
    "models",
    "workers",
    "workdirs",
    "humanize",
    "ids",
    "formula",
    "infer",
    "measurements",
    "cells",
    "decode",
    "kept_fronts",
    "listing",
    "load",
    "evidence",
    "kept_records",
    "words",
    "normalize",
    "assemble",
    "scaffold",
    "fragments",
    "reuse",
    "kept_verifications",
    "stored_pages",
    "unchanged",
    "verify",
    "measures",
    "charts",
    "caveats",
    "grids",
    "blocks",
    "views",
    "prose_blocks",
    "code_blocks",
    "markdown",
    "pageview",
    "navigation",
    "page_keys",
    "structured",
    "deploy",
    "scan",
    "template_errors",
    "site_files",
    "render",
    "site_pages",
    "shard_cache",
    "shards",
    "search",
    "seo",
    "minhash",
    "boilerplate",
    "sketches",
    "compared",
    "overlap",
    "consistency",
    "checks",
    "acknowledge",
    "report",
    "write",
    "registry",
    "progress",
    "stopwatch",
    "pipeline",
    "served",
    "watching",
    "preview_state",
    "preview",
    "server",
    "serve",
    "cli",
]
# Each third-party library lives in one module.
OWNERS = {
    "jinja2": "render",
    "markdown_it": "markdown",
    "pygments": "code_blocks",
    "mdit_py_plugins": "markdown",
    "yaml": "decode",
    "numpy": None,  # arrays: overlap shingles and signatures, related-guide scores (navigation)
    "selectolax": "scan",
    "defusedxml": None,  # XML: sitemaps (registry) and SVG images (images)
    "PIL": "images",
    "watchfiles": "watching",
    "rich": "progress",
    "pydantic": None,
}


def imports(name: str) -> set[str]:
    """Return the top-level names a module imports."""
    tree = ast.parse((PKG / f"{name}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_module_is_in_the_layer_order() -> None:
    modules = {path.stem for path in PKG.glob("*.py")} - {"__init__"}
    assert modules == set(ORDER)


@pytest.mark.parametrize("name", ORDER)
def test_imports_point_upstream(name: str) -> None:
    deps = {m.split(".")[1] for m in imports(name) if m.startswith("site_builder.")}
    assert all(ORDER.index(dep) < ORDER.index(name) for dep in deps), deps


@pytest.mark.parametrize(("library", "owner"), [(k, v) for k, v in OWNERS.items() if v])
def test_each_library_lives_in_one_module(library: str, owner: str) -> None:
    users = {name for name in ORDER if any(m.split(".")[0] == library for m in imports(name))}
    assert users == {owner}


@pytest.mark.parametrize("name", ORDER)
def test_modules_stay_small(name: str) -> None:
    assert len((PKG / f"{name}.py").read_text().splitlines()) <= 300
