"""A build reads its templates once: the digest its cache keys hold and the pages it renders
come from the same bytes, and a template swapped for a named pipe is a located error, never
a wait."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.render import site_pages
from tests.conftest import Project, assert_as_cold, build_with_a_fifo_at_render, tree_digest

TEMPLATE = "templates/guide.html"
EDITED = "<p>Saved while the build ran.</p>\n"


def guide_pages(folder: Path) -> list[str]:
    return [path.read_text("utf-8") for path in sorted(folder.glob("guides/*/index.html"))]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_template_saved_while_pages_render_is_not_cached_under_the_key_of_the_one_read(
    project: Project, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """The editor saves a template just after the build took its digest, then undoes the
    save: no page made of the saved template is served under the original's key."""
    template = project.root / TEMPLATE
    original = template.read_text("utf-8")
    end = original.rindex("{% endblock %}")  # of the page's last block
    config = BuildConfig.for_root(project.root, jobs=jobs)
    draw_assets = site_pages.asset_pages

    def saved_now(*args: object) -> object:  # runs right after the templates were read
        template.write_text(original[:end] + EDITED + original[end:], "utf-8")
        return draw_assets(*args)

    monkeypatch.setattr(site_pages, "asset_pages", saved_now)
    assert build(config).written
    monkeypatch.undo()
    pages = guide_pages(project.out)
    assert pages and not any(EDITED in page for page in pages), "rendered from other bytes"
    template.write_text(original, "utf-8")  # undone
    assert build(config).written
    assert not any(EDITED in page for page in guide_pages(project.out))
    assert_as_cold(project)


def test_an_asset_saved_while_the_build_runs_is_never_linked_from_pages_it_is_not_in(
    project: Project,
) -> None:
    """The stylesheet is saved after the build read it but before the pages render: the
    pages link the stylesheet the build read and publishes, and so does the next build,
    which publishes the saved one (its cache holds no page under the saved one's key)."""
    style = project.root / "templates" / "assets" / "style.css"
    config = BuildConfig.for_root(project.root, jobs=2)

    stages: list[str] = []

    def save(stage: str) -> None:
        stages.append(stage)
        if stages.count("render") == 1 and stage == "render":
            style.write_text(style.read_text("utf-8") + "\n.saved { color: red; }\n", "utf-8")

    for on_stage in (save, None):
        report = build(config, on_stage=on_stage)
        assert report.written, [f.message for f in report.findings if f.severity == "error"]
        published = {path.name for path in (project.out / "assets").iterdir()}
        for page in guide_pages(project.out):
            linked = set(re.findall(r'href="/assets/(style\.[0-9a-f]+\.css)"', page))
            assert linked and linked <= published, (linked, published)
    assert_as_cold(project)


def test_a_template_swapped_for_a_fifo_after_it_was_checked_stops_the_build_without_waiting(
    project: Project,
) -> None:
    """The templates are read by the builder alone, each opened as a regular file: a pipe
    put in a template's place after the inputs were checked is one located error (Jinja
    reported "not found" before), and the site on disk stays as it was."""
    assert project.run().returncode == 0
    before = tree_digest(project.out)
    template = project.root / TEMPLATE
    template.write_bytes(template.read_bytes() + b"\n")  # not skipped as unchanged
    code, stderr = build_with_a_fifo_at_render(project.root, TEMPLATE, seconds=60)
    assert code == 1
    message = f"{TEMPLATE}: file: cannot be read: no longer a regular file; build again"
    assert stderr.strip().splitlines() == [message]
    assert tree_digest(project.out) == before
    assert project.run().returncode == 0
    assert_as_cold(project)
