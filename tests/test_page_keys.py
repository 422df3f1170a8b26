"""The preview keys again only the guide pages an edit can change, and its keys are always
those a build keying every page computes."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
from conftest import seed_root

from site_builder.cache.store import BuildCache
from site_builder.config import BuildConfig
from site_builder.inputs.assemble import assemble
from site_builder.inputs.load import load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.models import Guide, Site
from site_builder.model.record_model import NearbyPage
from site_builder.present.navigation import SiteNavigation, navigation_of
from site_builder.render import page_keys

GUIDES = 300
TOPICS = ["moe", "fp8", "lora", "spec", "kv", "tp", "ep", "cp"]


def random_site(chance: random.Random) -> Site:
    """A site of GUIDES guides made from a seed guide, with random tags and audit names."""
    real = assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))
    base = real.guides[0]
    guides = []
    for n in range(GUIDES):
        engine = chance.choice(["sglang", "vllm"])
        tags = (engine, *chance.sample(TOPICS, chance.randint(0, 2)))
        named = chance.sample(range(GUIDES), chance.choice([0, 0, 1, 2]))
        nearby = tuple(
            NearbyPage(url=f"https://glm52.ai/guides/g{m:03d}/", reader_job="x", difference="y")
            for m in named
        )
        evidence = dataclasses.replace(base.evidence, nearby=nearby)
        guides.append(dataclasses.replace(base, slug=f"g{n:03d}", tags=tags, evidence=evidence))
    return with_guides(real, guides)


def with_guides(site: Site, guides: list[Guide]) -> Site:
    return dataclasses.replace(site, guides=tuple(guides), by_url={g.url: g for g in guides})


def every_key(site: Site) -> list[str]:
    """The keys a build without the preview's memory computes, one guide after the other."""
    return page_keys.guide_page_keys(site.guides, "site", SiteNavigation(site), None)


def test_the_preview_keys_again_only_the_pages_showing_a_changed_guide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chance = random.Random(11)
    site = random_site(chance)
    cache = BuildCache(tmp_path / ".cache", memory=True)
    keyed: list[str] = []  # the guides whose pages' shown guides were looked up
    shown = SiteNavigation.shown
    monkeypatch.setattr(
        SiteNavigation, "shown", lambda self, guide: keyed.append(guide.slug) or shown(self, guide)
    )
    for step in range(40):
        guides = list(site.guides)
        index = chance.randrange(GUIDES)
        if step % 4 == 3:  # new tags: the layout changes, every page is looked at again
            tags = (guides[index].tags[0], *chance.sample(TOPICS, 2))
            guides[index] = dataclasses.replace(guides[index], tags=tags)
        else:  # a new title: the same layout
            guides[index] = dataclasses.replace(guides[index], title=f"Edit {step}")
        site = with_guides(site, guides)
        cache.begin()
        keyed.clear()
        navigation = navigation_of(site)
        got = page_keys.guide_page_keys(site.guides, "site", navigation, cache)
        looked_up = list(keyed)
        edited = guides[index]
        showing = {g.slug for g in site.guides if any(o is edited for o in shown(navigation, g))}
        assert got == every_key(site), step
        if step and step % 4 != 3:
            # Only the edited guide's page and the pages showing it were looked at.
            assert sorted(looked_up) == sorted({edited.slug} | showing), step
            assert len(looked_up) < 20
        else:
            assert len(looked_up) == GUIDES
