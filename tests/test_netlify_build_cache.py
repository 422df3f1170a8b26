"""Deploys reuse the build cache: netlify.toml's local Build plugin (netlify/build-cache/) keeps
`.cache/` in Netlify's build cache between deploys, so a deploy from a fresh clone renders only
the guides that changed. Run by the real Netlify Build (the pinned netlify-cli `.ci/run`
installs), offline, on a copy of the seed project with the real netlify.toml and plugin.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, Project, tree_digest
from tests.netlify_cli import netlify_cli, offline_environment

REAL_COMMAND = 'command = "pip install . && python build.py"'
FROM_CACHE = re.compile(r"\((\d+) of (\d+) guide pages from the build cache\)")


def deployable(project: Project) -> Path:
    """Give the project the real netlify.toml and plugin. The build command alone is this
    interpreter's `python build.py`: the real one first runs `pip install .`, which fetches."""
    root = project.root
    shutil.copytree(ROOT / "netlify", root / "netlify")
    settings = (ROOT / "netlify.toml").read_text("utf-8")
    assert REAL_COMMAND in settings
    command = f'command = "{sys.executable} build.py"'
    (root / "netlify.toml").write_text(settings.replace(REAL_COMMAND, command), "utf-8")
    return root


def deploy(root: Path, home: Path, *, on_netlify: bool = False) -> str:
    """Run one deploy preview's build as Netlify does (`on_netlify`: as its build servers do,
    `--mode buildbot`; else as `netlify build` does on a laptop); return its log."""
    cli = netlify_cli()
    if on_netlify:
        command = [str(cli.parent / "netlify-build"), "--mode", "buildbot"]
    else:
        command = [str(cli), "build"]
    result = subprocess.run(
        [*command, "--offline", "--context", "deploy-preview"],
        cwd=root,
        env=offline_environment(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-3000:]
    return log


def fresh_clone(root: Path) -> None:
    """What a new deploy starts from: the repository, with no .cache/ and no _site/."""
    shutil.rmtree(root / ".cache", ignore_errors=True)
    shutil.rmtree(root / "_site", ignore_errors=True)


def from_cache(log: str) -> tuple[int, int] | None:
    """The build's '(N of M guide pages from the build cache)', or None if it took none."""
    found = FROM_CACHE.search(log)
    return (int(found[1]), int(found[2])) if found else None


def test_a_deploy_from_a_fresh_clone_renders_only_the_guides_that_changed(
    project: Project, tmp_path: Path
) -> None:
    root = deployable(project)
    home = tmp_path / "home"
    first = deploy(root, home)
    assert "No .cache/ saved yet" in first
    assert from_cache(first) is None  # nothing to take: every guide rendered
    assert "Saved .cache/ to Netlify's build cache" in first
    built = tree_digest(root / "_site")
    assert (root / ".cache").is_dir()  # a laptop's `netlify build` copies: its cache stays

    fresh_clone(root)
    again = deploy(root, home)
    assert "Restored .cache/ from Netlify's build cache" in again
    assert from_cache(again) == (4, 4)
    assert tree_digest(root / "_site") == built

    prose = sorted((root / "content").glob("*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + "\nA sentence only this deploy has.\n", "utf-8")
    fresh_clone(root)
    edited = deploy(root, home)
    assert from_cache(edited) == (3, 4)
    pages = (root / "_site" / "guides").glob("*/index.html")
    assert sum("A sentence only this deploy has." in page.read_text("utf-8") for page in pages) == 1


def test_on_netlify_the_cache_is_moved_out_and_back_and_the_site_keeps_its_pages(
    project: Project, tmp_path: Path
) -> None:
    root = deployable(project)
    home = tmp_path / "home"
    first = deploy(root, home, on_netlify=True)
    assert "Saved .cache/ to Netlify's build cache" in first
    # Moved, not copied: nothing is left in the checkout, and the site's pages (hard links to
    # the cache's entries) are whole.
    assert not (root / ".cache").exists()
    built = tree_digest(root / "_site")
    assert any(path.endswith("index.html") and path.startswith("guides/") for path in built)

    fresh_clone(root)
    again = deploy(root, home, on_netlify=True)
    assert "Restored .cache/ from Netlify's build cache" in again
    assert from_cache(again) == (4, 4)
    assert tree_digest(root / "_site") == built


def test_the_spare_site_of_a_build_is_not_saved_in_netlify_s_cache(
    project: Project, tmp_path: Path
) -> None:
    root = deployable(project)
    home = tmp_path / "home"
    deploy(root, home, on_netlify=True)
    prose = sorted((root / "content").glob("*.md"))[0]
    prose.write_text(prose.read_text("utf-8") + "\nA sentence only this deploy has.\n", "utf-8")
    again = deploy(root, home, on_netlify=True)  # _site/ is still there: it is replaced
    assert "Saved .cache/ to Netlify's build cache" in again
    assert from_cache(again) == (3, 4)
    assert not list(tmp_path.rglob("spare-site")), "the replaced site went into the cache"
