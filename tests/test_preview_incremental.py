"""The preview after a sequence of edits serves exactly what a cold build writes.

Rebuilds after the first reuse the build cache held in memory and are served from memory
(nothing is written); the search index follows in the background without reloading open tabs.
What is served is fetched over HTTP, as a browser would, and compared byte for byte with the
cold build's files (HTML without the reload script and banners the preview adds).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Iterable
from pathlib import Path

import yaml

from site_builder.preview.state import KEPT
from tests.conftest import Project, tree_digest
from tests.preview_helpers import EventStream, Preview, start_preview
from tests.test_incremental import add_guide, grow, probes

SETTLE_SECONDS = 60
LATE = "/guides/glm-5-2-probe-late/"


PREVIEW_ADDITIONS = re.compile(
    r'(?:<div id="glm52-build-error".*?</div>)?'
    r'(?:<details id="glm52-build-warnings".*?</details>)?'
    r'<script src="/__livereload\.js\?v=\w+" data-version="\d+" data-index="\d+"></script>(?=</body>(?!.*</body>))',
    re.DOTALL,
)


def as_built(path: str, body: bytes) -> bytes:
    """Return a served file as the build made it: HTML without the preview's reload script
    and banners (added to responses only)."""
    if not path.endswith(".html"):
        return body
    text, added = PREVIEW_ADDITIONS.subn("", body.decode("utf-8"))
    assert added == 1, f"/{path}: the preview's additions are not where expected"
    return text.encode("utf-8")


def served_digest(preview: Preview, paths: Iterable[str]) -> dict[str, str]:
    """Fetch each site path from the preview; return {path: sha256 of it as built}."""
    digest = {}
    for path in paths:
        status, _, body = preview.get(f"/{path}")
        assert status == 200, f"/{path} answered {status}"
        digest[path] = hashlib.sha256(as_built(path, body)).hexdigest()
    return digest


def settles_to(preview: Preview, expected: dict[str, str]) -> dict[str, str]:
    """Wait until the preview serves every file of `expected` with its bytes (the search
    index may follow later)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    served: dict[str, str] = {}
    while time.monotonic() < deadline:
        served = served_digest(preview, expected)
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
    rng = random.Random(5)
    grow(project, 6)
    # The live site has a guide this one does not build yet: the prose may link to it.
    registry = project.root / "content" / "registry.json"
    pages = json.loads(registry.read_text("utf-8"))
    live = {"url": f"https://glm52.ai{LATE}", "title": "", "reader_job": "Late guide"}
    pages["pages"].append({**live, "published": None, "lastmod": ""})
    registry.write_text(json.dumps(pages, indent=2), "utf-8")
    preview = start_preview(project.root)
    try:
        preview.wait_for_rebuilds(1, timeout=60)
        expected = cold_build(project, tmp_path / "cold-0")
        assert settles_to(preview, expected) == expected
        ever_built = set(expected)
        prose = probes(project)[0]
        edits = [
            # A link to a live guide not built here (its canonical URL), then the guide built
            # here (the link is site-relative), then gone again.
            lambda: prose.write_text(
                prose.read_text("utf-8") + f"\nA line about [warmup]({LATE}).\n"
            ),
            lambda: _add_late_guide(project, rng),
            lambda: _retitle(probes(project)[1], "Retitled"),
            lambda: _delete_guide(project, "probe-02"),
            # A new folder, then the folder renamed: the watcher names the folder alone.
            lambda: _move_into(probes(project)[2], project.root / "content" / "part"),
            lambda: (project.root / "content" / "part").rename(project.root / "content" / "two"),
            lambda: _delete_guide(project, "probe-late"),
        ]
        for step, edit in enumerate(edits, start=2):
            edit()
            preview.wait_for_rebuilds(step, timeout=60)
            time.sleep(2)  # a burst of saves (record + prose) is one rebuild
            expected = cold_build(project, tmp_path / f"cold-{step}")
            assert settles_to(preview, expected) == expected, f"after edit {step - 1}"
            # Nothing else is served: pages of earlier builds that this one lacks are gone
            # (the assets and search index files of the last ones stay for a minute, for
            # tabs still loading them: their names are their contents' hash).
            for path in sorted(ever_built - set(expected)):
                if not path.startswith(tuple(f"{folder}/" for folder in KEPT)):
                    assert preview.get(f"/{path}")[0] == 404, f"/{path} after edit {step - 1}"
            ever_built |= set(expected)
        assert not any(line.startswith("Rebuild failed") for line in preview.stderr)
    finally:
        preview.stop()


def _add_late_guide(project: Project, rng: random.Random) -> None:
    """Add the guide that takes over the live page at LATE, as its front matter says."""
    add_guide(project, "probe-late", rng)
    prose = project.root / "content" / "probe-late.md"
    _, front_text, body = prose.read_text("utf-8").split("---\n", 2)
    front = {**yaml.safe_load(front_text), "replaces": LATE}
    prose.write_text(f"---\n{yaml.safe_dump(front)}---\n{body}", "utf-8")


def _delete_guide(project: Project, name: str) -> None:
    (project.root / "records" / f"{name}.json").unlink()
    (project.root / "content" / f"{name}.md").unlink()


def _move_into(prose: Path, folder: Path) -> None:
    folder.mkdir()
    prose.rename(folder / prose.name)


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
        # Open tabs are told of the new index (a search page starts over on it), not
        # reloaded: the one reload is the rebuild's.
        events.wait_for("search")
        time.sleep(1)
        assert [event for event in events.events if event != "search"] == ["reload"]
        assert sum(line.startswith("Rebuilt") for line in preview.stderr) == 2
    finally:
        preview.stop()
