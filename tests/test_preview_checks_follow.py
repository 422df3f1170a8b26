"""A preview rebuild shows the edit as soon as the pages are rendered; the checks follow.

Run in process on the seed project: `Previewer.rebuild` is what the watcher calls on a save.
The checks' findings reach the banner after the new site is served, with one more reload of
open tabs only when they changed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from site_builder import pipeline
from site_builder.config import BuildConfig
from site_builder.preview.builds import Previewer
from site_builder.preview.served import ServedSite
from tests.conftest import Project

GUIDE_PAGE = re.compile(r"guides/[^/]+/index\.html")


@pytest.fixture
def previewer(project: Project) -> Iterator[Previewer]:
    """A previewer of the seed project that has built once."""
    lines: list[str] = []
    built = Previewer(BuildConfig.for_root(project.root), lines.append)
    try:
        assert built.rebuild(), lines
        yield built
    finally:
        built.close()


def prose_files(project: Project) -> list[Path]:
    """The seed guides' prose files, in name order."""
    return sorted((project.root / "content").glob("glm-5-2-*.md"))


def set_front(prose: Path, **changes: str) -> None:
    """Change fields of a prose file's front matter."""
    _, front_text, body = prose.read_text("utf-8").split("---\n", 2)
    front = yaml.safe_load(front_text) | changes
    prose.write_text(f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}", "utf-8")


def front(prose: Path) -> dict[str, Any]:
    """Return a prose file's front matter."""
    return dict(yaml.safe_load(prose.read_text("utf-8").split("---\n", 2)[1]))


def test_the_edit_is_served_before_the_checks_run(
    project: Project, previewer: Previewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, version = previewer.state.site, previewer.state.version
    seen: list[tuple[ServedSite | None, int]] = []
    original = pipeline.run_checks

    def checks_watching_the_server(*args: Any, **kwargs: Any) -> Any:
        seen.append((previewer.state.site, previewer.state.version))
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "run_checks", checks_watching_the_server)
    for prose in prose_files(project):
        prose.write_text(prose.read_text("utf-8") + "\nThe word quokkafication is new.\n")
    assert previewer.rebuild()
    [(served, served_version)] = seen
    assert served is not None and served is not first and served_version == version + 1
    guides = [body for path, body in served.files.items() if GUIDE_PAGE.fullmatch(path)]
    assert guides and all(b"quokkafication" in body for body in guides)
    # The findings did not change: the open tabs reloaded once, for the new pages.
    assert previewer.state.version == version + 1


def test_an_error_found_by_the_checks_is_shown_over_the_new_site(
    project: Project, previewer: Previewer
) -> None:
    one, other = prose_files(project)[:2]
    original_title = front(other)["title"]
    set_front(other, title=front(one)["title"])
    version = previewer.state.version
    assert not previewer.rebuild()
    assert previewer.state.version == version + 2  # the new pages, then the banner
    assert any("title" in error for error in previewer.state.errors), previewer.state.errors
    assert previewer.state.site is not None
    titles = [
        body.decode("utf-8").count(str(front(one)["title"]))
        for path, body in previewer.state.site.files.items()
        if GUIDE_PAGE.fullmatch(path)
    ]
    assert sum(count > 0 for count in titles) >= 2  # the edit is served, under the banner
    set_front(other, title=original_title)
    assert previewer.rebuild()
    assert previewer.state.errors == ()


def test_changed_warnings_reach_the_banner_with_a_second_reload(
    project: Project, previewer: Previewer
) -> None:
    one, other = prose_files(project)[:2]
    warnings = previewer.state.warnings
    set_front(other, description=str(front(one)["description"]))
    version = previewer.state.version
    assert previewer.rebuild()
    assert previewer.state.version == version + 2
    assert len(previewer.state.warnings) > len(warnings)
    assert any("description" in line for _, line in previewer.state.warnings)


def test_a_save_that_keeps_the_size_and_modified_time_is_still_seen(
    project: Project, previewer: Previewer
) -> None:
    # The preview skips reading files whose status is unchanged; the status includes the
    # change time, which no tool can set back, so a same-size edit with its modified time
    # restored (an editor keeping time stamps, a sync tool) is read all the same.
    record = project.root / "records" / "000_f07234cca5c1d19d.json"
    a_day_ago = time.time_ns() - 86_400 * 10**9
    os.utime(record, ns=(a_day_ago, a_day_ago))
    assert previewer.rebuild()
    text = record.read_text("utf-8")
    assert "one-env-rollback" in text
    record.write_text(text.replace("one-env-rollback", "two-env-rollback"), "utf-8")
    os.utime(record, ns=(a_day_ago, a_day_ago))
    assert previewer.rebuild()
    assert previewer.state.site is not None
    pages = [
        body for path, body in previewer.state.site.files.items() if GUIDE_PAGE.fullmatch(path)
    ]
    assert any(b"two env rollback" in page for page in pages)
    assert not any(b"one env rollback" in page for page in pages)
