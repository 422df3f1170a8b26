"""The project set-up a newcomer relies on: the README's commands, CI, Netlify, the layout.

What records/ and content/ hold is the publisher's and grows with every guide: nothing here
counts or names it. The seed project of the tests (tests/fixtures/seed-site/) is checked
instead; tests/test_real_content.py builds the real inputs."""

from __future__ import annotations

import re
import tomllib

import pytest

from site_builder.cli import make_parser
from tests.conftest import ROOT, SEED_SITE

README = (ROOT / "README.md").read_text("utf-8")
SEEDS = ROOT.parent / "shared" / "seeds"


def readme_commands() -> list[str]:
    """Return the shell commands in the README's `sh` code blocks."""
    return re.findall(r"```sh\n(.+?)\n```", README)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    build, test = readme_commands()[:2]
    assert build.endswith("python build.py")
    assert test.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert test in ci.splitlines()
    assert "python3 -m venv" in ci


def test_every_cli_option_is_documented() -> None:
    options = [opt for action in make_parser()._actions for opt in action.option_strings]
    assert options
    for option in options:
        assert f"`{option}" in README, option


def test_netlify_runs_the_same_build_and_publishes_the_output_folder() -> None:
    config = tomllib.loads((ROOT / "netlify.toml").read_text("utf-8"))
    assert config["build"]["command"].endswith("python build.py")
    assert config["build"]["publish"] == "_site"
    version = config["build"]["environment"]["PYTHON_VERSION"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert project["project"]["requires-python"] == f">={version}"


def test_top_level_layout_is_as_designed() -> None:
    for name in (
        "pyproject.toml",
        "site_builder",
        "templates",
        "records",
        "content",
        "tests",
        "build.py",
        "netlify.toml",
        "README.md",
        ".ci/run",
    ):
        assert (ROOT / name).exists(), name


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared/seeds is not beside this checkout")
def test_fixture_records_are_the_seed_records_unchanged() -> None:
    seeds = {path.stem: path.read_bytes() for path in SEEDS.glob("*.txt")}
    records = {path.stem: path.read_bytes() for path in (SEED_SITE / "records").glob("*.json")}
    assert records == seeds


def test_every_fixture_record_has_one_prose_file() -> None:
    records = {
        re.search(r'"operationId": "([^"]+)"', path.read_text("utf-8")).group(1)
        for path in (SEED_SITE / "records").glob("*.json")
    }
    referenced = [
        re.search(r"^record: (\S+)$", path.read_text("utf-8"), re.MULTILINE).group(1)
        for path in (SEED_SITE / "content").glob("*.md")
    ]
    assert records and sorted(referenced) == sorted(records)
