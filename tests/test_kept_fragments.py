"""A build keeps each guide's card and feed entry in the build cache: after an edit to one
guide's record, the next build draws that guide's alone, and writes what a build from
scratch writes."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.preview.builds import Previewer
from site_builder.render import site_pages
from tests.conftest import Project, tree_digest
from tests.new_guide import probe_record, write_probe_guide


def drawn_by_macro(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count each guide a card or feed-entry macro draws, by macro and slug."""
    drawn: Counter[str] = Counter()
    original = site_pages.template_macro

    def counted(env: Any, name: str, user: str) -> Any:
        macro = original(env, name, user)

        def draw(*args: Any) -> Any:  # the feed entry's first argument is the site
            guide = next(arg for arg in args if hasattr(arg, "slug"))
            drawn[f"{name} {guide.slug}"] += 1
            return macro(*args)

        return draw

    monkeypatch.setattr(site_pages, "template_macro", counted)
    return drawn


def test_after_one_record_edit_only_its_guides_card_and_feed_entry_are_drawn(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_probe_guide(project.root)
    drawn = drawn_by_macro(monkeypatch)
    config = BuildConfig.for_root(project.root)
    assert build(config).written
    guides = {key.split(" ", 1)[1] for key in drawn}
    assert len(guides) == 5  # the four seeds and the probe (drawn once more without drafts)

    drawn.clear()
    record = project.root / "records" / "900_latency_probe.json"
    record.write_text(json.dumps(probe_record(rowsProbe={"rows": [{"ms": 1}]}), indent=2))
    assert build(config).written
    probe = next(slug for slug in guides if "probe" in slug or "latency" in slug)
    assert set(drawn) == {f"guide_card {probe}", f"feed_entry {probe}"}

    edited = tree_digest(project.out)
    assert project.run("--no-cache").returncode == 0
    assert tree_digest(project.out) == edited, "the same site as a build from scratch"


def test_a_preview_session_leaves_the_builds_cards_and_entries_kept(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BuildConfig.for_root(project.root)
    assert build(config).written
    template = project.root / "templates" / "base.html"
    original = template.read_text("utf-8")
    template.write_text(original + "\n", "utf-8")
    assert build(config).written  # another site's cards and entries: both sites' are kept
    template.write_text(original, "utf-8")
    kept = sorted(path.name for path in project.root.glob(".cache/v*/fragments/*"))
    assert len(kept) > 2
    previewer = Previewer(config, lambda line: None)  # keeps its own in memory
    try:
        for line in ("One more line.", "And another."):
            prose = next((project.root / "content").glob("glm-*.md"))
            prose.write_text(prose.read_text("utf-8") + f"\n{line}\n", "utf-8")
            assert previewer.rebuild()
    finally:
        previewer.close()
    assert sorted(path.name for path in project.root.glob(".cache/v*/fragments/*")) == kept
    drawn = drawn_by_macro(monkeypatch)
    assert build(config).written
    edited = next(key for key in drawn if key.startswith("guide_card "))
    assert set(drawn) == {edited, edited.replace("guide_card", "feed_entry")}
