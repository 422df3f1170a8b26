"""The preview after a sequence of edits serves exactly what a cold build writes.

Rebuilds after the first reuse the build cache held in memory and hard-link unchanged files;
the search index follows in the background without reloading open tabs.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from tests.conftest import Project, tree_digest
from tests.preview_helpers import EventStream, Preview, start_preview
from tests.test_incremental import add_guide, grow, probes

SETTLE_SECONDS = 60


def served_folder(preview: Preview) -> Path:
    """Return the site folder the preview serves now (its newest)."""
    folders = [path for path in preview.workdir.iterdir() if path.name.startswith("site-")]
    return max(folders, key=lambda path: int(path.name.split("-")[1]))


def settles_to(preview: Preview, expected: dict[str, str]) -> dict[str, str]:
    """Wait until the served folder holds `expected` (the search index may follow later)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    served: dict[str, str] = {}
    while time.monotonic() < deadline:
        served = tree_digest(served_folder(preview))
        if served == expected:
            break
        time.sleep(0.2)
    return served


def cold_build(project: Project, out: Path) -> dict[str, str]:
    """Build what the preview shows (drafts included) from scratch; return its digest."""
    result = project.run("--drafts", "--no-cache", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return tree_digest(out)


def test_after_a_sequence_of_edits_the_preview_serves_what_a_cold_build_writes(
    project: Project, tmp_path: Path
) -> None:
    import random

    rng = random.Random(5)
    grow(project, 6)
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1, timeout=60)
        assert settles_to(preview, cold_build(project, tmp_path / "cold-0")) == tree_digest(
            tmp_path / "cold-0"
        )
        prose = probes(project)[0]
        edits = [
            lambda: prose.write_text(prose.read_text("utf-8") + "\nA line about warmup.\n"),
            lambda: add_guide(project, "probe-late", rng),
            lambda: _retitle(probes(project)[1], "Retitled"),
            lambda: _delete_guide(project, "probe-02"),
        ]
        for step, edit in enumerate(edits, start=2):
            edit()
            preview.wait_for_rebuilds(step, timeout=60)
            time.sleep(2)  # a burst of saves (record + prose) is one rebuild
            expected = cold_build(project, tmp_path / f"cold-{step}")
            assert settles_to(preview, expected) == expected, f"after edit {step - 1}"
        assert not any(line.startswith("Rebuild failed") for line in preview.stderr)
    finally:
        preview.stop()


def _delete_guide(project: Project, name: str) -> None:
    (project.root / "records" / f"{name}.json").unlink()
    (project.root / "content" / f"{name}.md").unlink()


def _retitle(prose: Path, prefix: str) -> None:
    _, front_text, body = prose.read_text("utf-8").split("---\n", 2)
    front = yaml.safe_load(front_text)
    front["title"] = f"{prefix}: {front['title']}"
    prose.write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", "utf-8")


def test_the_search_index_follows_an_edit_without_reloading_tabs(project: Project) -> None:
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1, timeout=60)
        before = preview.get("/pagefind/pagefind-entry.json")[2]
        events = EventStream(preview, version="")
        prose = next((project.root / "content").glob("glm-5-2-*.md"))
        prose.write_text(prose.read_text("utf-8") + "\nThe word quokkafication is new.\n")
        preview.wait_for_rebuilds(2, timeout=60)
        # Served at once: the last index, until Pagefind has read the new pages.
        assert preview.get("/pagefind/pagefind-entry.json")[0] == 200
        deadline = time.monotonic() + SETTLE_SECONDS
        while preview.get("/pagefind/pagefind-entry.json")[2] == before:
            assert time.monotonic() < deadline, "the search index never followed the edit"
            time.sleep(0.2)
        time.sleep(1)
        reloads = [event for event in events.events if event == "reload"]
        assert len(reloads) == 1, events.events  # the rebuild's, not the index's
        assert sum(line.startswith("Rebuilt") for line in preview.stderr) == 2
    finally:
        preview.stop()
