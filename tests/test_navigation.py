"""How readers move around: tag pages, verdict families, related and adjacent guides, aliases,
the feed, the search bundle and the Netlify settings."""

from __future__ import annotations

import dataclasses
import json
import random
import tomllib
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import ROOT, SEED_VOCABULARY, seed_root, soup

from site_builder.config import BuildConfig
from site_builder.inputs.assemble import assemble
from site_builder.inputs.load import load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.models import Guide, Site
from site_builder.model.record_model import NearbyPage
from site_builder.present.navigation import SiteNavigation, navigation_of, verdict_family

GUIDES = {
    "glm-5-2-sglang-dsa-indexer-fusion": ("sglang", "kernel-fusion", "dsa-indexer"),
    "glm-5-2-sglang-weight-cache-daemon": ("sglang", "weight-cache", "model-loading"),
    "glm-5-2-vllm-decode-context-parallel": ("vllm", "context-parallel", "h200"),
    "glm-5-2-vllm-sequence-parallel-moe": ("vllm", "sequence-parallel", "moe"),
}
ATOM = "{http://www.w3.org/2005/Atom}"


def links(page: Path, selector: str) -> list[str]:
    """Return the hrefs of the links matching a CSS selector."""
    return [a["href"] for a in soup(page).select(selector)]


@pytest.mark.parametrize(
    ("classification", "family"),
    [
        ("reject-stable-and-current-main-wait-for-merged-correctness-fix", "hold"),
        ("fail-closed-low-load-canary-before-tp-dp-ep-promotion", "guardrails"),
        ("narrow-lab-pilot-only", "guardrails"),
        ("cuda-default-with-a-b-canary-and-one-env-rollback", "guardrails"),
        ("enable-by-default", "adopt"),
        ("adopt_now", "adopt"),
        ("needs-more-data", "other"),
        ("not-recommended-for-production", "hold"),
        ("keep-disabled-until-fix", "hold"),
    ],
)
def test_verdict_family_reads_the_classification_words(classification: str, family: str) -> None:
    families = SEED_VOCABULARY.families
    assert verdict_family(classification, families).anchor == family


def test_guides_index_groups_guides_by_verdict_family(site: Path) -> None:
    page = soup(site / "guides" / "index.html")
    groups = {
        section.h2["id"]: [a["href"] for a in section.select(".guide-card h3 a")]
        for section in page.select("section.family")
    }
    assert groups == {
        "hold": ["/guides/glm-5-2-vllm-decode-context-parallel/"],
        "guardrails": [
            "/guides/glm-5-2-sglang-dsa-indexer-fusion/",
            "/guides/glm-5-2-vllm-sequence-parallel-moe/",
            "/guides/glm-5-2-sglang-weight-cache-daemon/",
        ],
    }
    assert links(site / "guides" / "index.html", ".family-index a") == ["#hold", "#guardrails"]


def test_every_tag_has_a_page_listing_exactly_its_guides(site: Path) -> None:
    tags = {tag for tags in GUIDES.values() for tag in tags}
    assert {path.parent.name for path in (site / "tags").glob("*/index.html")} == tags
    for tag in tags:
        listed = links(site / "tags" / tag / "index.html", ".guide-card h2 a")
        expected = {f"/guides/{slug}/" for slug, own in GUIDES.items() if tag in own}
        assert set(listed) == expected, tag
        assert len(listed) == len(expected), tag
    index = soup(site / "tags" / "index.html")
    engines = [a.text for a in index.select("#tags-engine ~ ul a")][:2]
    assert engines == ["sglang", "vllm"]
    assert set(links(site / "tags" / "index.html", ".tag-index a")) == {
        f"/tags/{tag}/" for tag in tags
    }


def test_guide_tags_link_to_their_tag_pages_and_tag_pages_are_in_the_sitemap(site: Path) -> None:
    for slug, tags in GUIDES.items():
        page = site / "guides" / slug / "index.html"
        assert links(page, ".guide-meta a.tag") == [f"/tags/{tag}/" for tag in tags]
    tree = ElementTree.parse(site / "sitemap.xml")
    locs = {loc.text for loc in tree.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")}
    assert "https://glm52.ai/tags/" in locs
    assert "https://glm52.ai/tags/moe/" in locs
    assert "https://glm52.ai/search/" not in locs  # noindex: a search page is no landing page


def test_the_sitemap_dates_each_list_page_by_its_newest_guide(site: Path) -> None:
    space = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    tree = ElementTree.parse(site / "sitemap.xml")
    lastmod = {
        url.findtext(f"{space}loc"): url.findtext(f"{space}lastmod")
        for url in tree.iter(f"{space}url")
    }
    of_guide = {slug: lastmod[f"https://glm52.ai/guides/{slug}/"] for slug in GUIDES}
    assert len(set(of_guide.values())) > 1  # the seeds were checked at different times
    for tag in {tag for tags in GUIDES.values() for tag in tags}:
        newest = max(when for slug, when in of_guide.items() if tag in GUIDES[slug])
        assert lastmod[f"https://glm52.ai/tags/{tag}/"] == newest, tag
    for page in ("", "guides/", "tags/"):
        assert lastmod[f"https://glm52.ai/{page}"] == max(of_guide.values())


def test_guides_link_to_newer_older_and_related_guides(site: Path) -> None:
    order = links(site / "guides" / "index.html", ".guide-card h3 a")
    by_evidence = [a["href"] for a in soup(site / "index.html").select(".guide-card h3 a")]
    for position, url in enumerate(by_evidence):
        page = site / url.strip("/") / "index.html"
        newer = links(page, ".pager-newer a")
        older = links(page, ".pager-older a")
        assert newer == ([by_evidence[position - 1]] if position > 0 else [])
        assert older == ([by_evidence[position + 1]] if position + 1 < len(by_evidence) else [])
        related = links(page, ".related-list a")
        assert url not in related and len(related) <= 3
        own = set(GUIDES[url.split("/")[2]])
        for other in related:
            nearby = links(page, ".nearby-list a")
            assert own & set(GUIDES[other.split("/")[2]]) or other in nearby, (url, other)
    assert sorted(order) == sorted(by_evidence)


def test_same_engine_guides_are_related(site: Path) -> None:
    page = site / "guides" / "glm-5-2-vllm-sequence-parallel-moe" / "index.html"
    assert links(page, ".related-list a")[0] == "/guides/glm-5-2-vllm-decode-context-parallel/"


def test_atom_feed_lists_every_guide_newest_first_with_record_dates(site: Path) -> None:
    feed = ElementTree.parse(site / "atom.xml").getroot()
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == len(GUIDES)
    updated = [entry.find(f"{ATOM}updated").text for entry in entries]
    assert updated == sorted(updated, reverse=True)
    assert feed.find(f"{ATOM}updated").text == updated[0]
    first = entries[0]
    assert first.find(f"{ATOM}id").text.startswith("https://glm52.ai/guides/")
    assert "Verdict:" in first.find(f"{ATOM}summary").text
    page = soup(site / "index.html")
    assert page.find("link", rel="alternate", type="application/atom+xml")["href"] == "/atom.xml"


def test_search_bundle_is_built_and_indexes_only_guides(site: Path) -> None:
    bundle = site / "pagefind"
    assert (bundle / "pagefind-ui.js").is_file() and (bundle / "pagefind.js").is_file()
    entry = json.loads((bundle / "pagefind-entry.json").read_text("utf-8"))
    assert entry["languages"]["en"]["page_count"] == len(GUIDES)
    assert not (bundle / "pagefind-component-ui.js").exists()
    search = soup(site / "search" / "index.html")
    assert search.find("script")["src"] == "/pagefind/pagefind-ui.js"
    for path in site.rglob("*.html"):
        form = soup(path).find("form", role="search")
        assert form is not None and form["action"] == "/search/", path
        assert form.find("input", attrs={"name": "q"}) is not None, path


def test_netlify_sets_security_headers_for_every_path_and_long_cache_for_assets() -> None:
    config = tomllib.loads((ROOT / "netlify.toml").read_text("utf-8"))
    headers = {block["for"]: block["values"] for block in config["headers"]}
    every = headers["/*"]
    csp = dict(
        (part.split()[0], part.split()[1:]) for part in every["Content-Security-Policy"].split("; ")
    )
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == ["'self'", "'wasm-unsafe-eval'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in every["Content-Security-Policy"]
    for name in (
        "Strict-Transport-Security",
        "X-Content-Type-Options",
        "Referrer-Policy",
        "Permissions-Policy",
    ):
        assert every[name], name
    assert "immutable" in headers["/assets/*"]["Cache-Control"]
    assert config["build"]["publish"] == "_site"
    assert {"from": "/*", "to": "/404.html", "status": 404} in config["redirects"]


def test_aliases_become_permanent_redirects_and_moved_pages(make_project) -> None:
    project = make_project()
    prose = project.root / "content" / "glm-5-2-vllm-sequence-parallel-moe.md"
    text = prose.read_text("utf-8")
    text = text.replace(
        "\npublished:", "\naliases: [/guides/old-moe-guide/, /moe.html]\npublished:", 1
    )
    prose.write_text(text, "utf-8")
    result = project.run()
    assert result.returncode == 0, result.stderr
    rules = (project.out / "_redirects").read_text("utf-8").splitlines()
    target = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
    assert f"/guides/old-moe-guide/ {target} 301!" in rules
    assert f"/moe.html {target} 301!" in rules
    for moved in ("guides/old-moe-guide/index.html", "moe.html"):
        page = soup(project.out / moved)
        assert page.find("link", rel="canonical")["href"] == "https://glm52.ai" + target
        assert page.find("meta", attrs={"name": "robots"})["content"] == "noindex"
        assert page.find("a")["href"] == target
    sitemap = (project.out / "sitemap.xml").read_text("utf-8")
    assert "old-moe-guide" not in sitemap


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        ("[/guides/glm-5-2-vllm-decode-context-parallel/]", "already /guides/glm-5-2-vllm-decode"),
        ("[/guides/glm-5-2-vllm-sequence-parallel-moe]", "this guide's own URL"),
        ("[/tags/moe/]", "a page the site builds itself"),
        ("[/]", "a page the site builds itself"),
        ("['/../etc/passwd']", "String should match pattern"),
        ("[javascript:alert(1)]", "String should match pattern"),
    ],
)
def test_bad_aliases_are_one_line_errors(make_project, aliases: str, message: str) -> None:
    project = make_project()
    prose = project.root / "content" / "glm-5-2-vllm-sequence-parallel-moe.md"
    text = prose.read_text("utf-8").replace("\npublished:", f"\naliases: {aliases}\npublished:", 1)
    prose.write_text(text, "utf-8")
    result = project.run()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    line = next(line for line in result.stderr.splitlines() if "aliases" in line)
    assert line.startswith("content/glm-5-2-vllm-sequence-parallel-moe.md: front matter.aliases")
    assert message in line


@pytest.mark.parametrize(
    ("alias", "message"),
    [
        ("/gu\u0456des/glm-5-2-vllm-decode-context-parallel/", "not ASCII: '\u0456' (U+0456,"),
        ("/guides/glm-5-2-vllm-decode-context-parallel\uff0f", "should match pattern"),
        ("/_redirects", "a file the site writes itself (_redirects)"),
        ("/robots.txt", "a file the site writes itself (robots.txt)"),
        ("/Sitemap.xml/old/", "a file the site writes itself (Sitemap.xml)"),
        ("/atom.xml/", "a page the site builds itself"),
        ("/404.html/x.html", "a file the site writes itself (404.html)"),
        ("/pagefind/pagefind.js", "a page the site builds itself"),
        ("/legacy/notes.html", "a file copied from static/"),
        ("/legacy/notes.html/", "a file copied from static/"),
    ],
)
def test_look_alike_and_reserved_aliases_are_refused_by_the_audit(
    make_project, alias: str, message: str
) -> None:
    project = make_project()
    (project.root / "static" / "legacy").mkdir(parents=True)
    (project.root / "static" / "legacy" / "notes.html").write_text("<p>old</p>", "utf-8")
    prose = project.root / "content" / "glm-5-2-vllm-sequence-parallel-moe.md"
    text = prose.read_text("utf-8").replace(
        "\npublished:", f"\naliases: ['{alias}']\npublished:", 1
    )
    prose.write_text(text, "utf-8")
    for command in (["--audit"], []):
        result = project.run(*command)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        [line] = [line for line in result.stderr.splitlines() if "front matter.aliases" in line]
        assert line.startswith(
            "content/glm-5-2-vllm-sequence-parallel-moe.md: front matter.aliases"
        )
        assert message in line
    assert not project.out.exists()


def test_only_long_guides_get_an_on_this_page_list(site: Path, make_project) -> None:
    for slug in GUIDES:
        toc = soup(site / "guides" / slug / "index.html").find("nav", class_="toc")
        assert toc is not None and len(toc.find_all("a")) >= 6, slug
    project = make_project()
    for path in (project.root / "content").glob("*.md"):
        path.unlink()
    for path in sorted((project.root / "records").glob("*.json"))[1:]:
        path.unlink()
    (name,) = [path.name for path in (project.root / "records").glob("*.json")]
    core = ("schemaVersion", "operationId", "checkedAt", "status", "revisions", "sourceReceipts")
    record = project.record(name)
    short = {key: record[key] for key in (*core, "model", "invariants", "decision")}
    project.save_record(name, short)
    result = project.run("--drafts")  # a record with no prose is a draft
    assert result.returncode == 0, result.stderr
    (page,) = (project.out / "guides").glob("*/index.html")
    assert soup(page).find("nav", class_="toc") is None
    assert soup(page).find(id="verdict") is not None


def test_related_guides_rank_shared_topics_over_the_same_engine() -> None:
    real = assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))
    base = next(g for g in real.guides if not g.evidence.nearby)
    tags = {
        "a": ("vllm", "moe", "fp8"),
        "b": ("vllm",),  # same engine only: 1
        "c": ("sglang", "moe"),  # one shared topic: 2
        "d": ("vllm", "moe", "fp8"),  # two topics and the engine: 5
        "e": ("sglang",),  # nothing shared
        "f": ("vllm", "fp8"),  # one topic and the engine: 3
        "g": ("vllm",),  # same engine only, older than b
    }
    guides = tuple(dataclasses.replace(base, slug=slug, tags=own) for slug, own in tags.items())
    site = dataclasses.replace(real, guides=guides, by_url={g.url: g for g in guides})
    navigation = SiteNavigation(site)
    related = navigation.neighbours(guides[0]).related
    assert [guide.slug for guide in related] == ["d", "f", "c"]
    lonely = navigation.neighbours(guides[4]).related
    assert [guide.slug for guide in lonely] == ["c"]
    assert navigation.neighbours(guides[0]).newer is None
    assert navigation.neighbours(guides[0]).older.slug == "b"


def test_related_guides_are_the_best_scored_of_every_other_guide() -> None:
    """On a site of 300 guides with random tags and audit names, the related guides are those
    a plain pair-by-pair scoring of every other guide ranks first (the indexes change nothing)."""
    real = assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))
    base = real.guides[0]
    chance = random.Random(7)
    pool = ["moe", "fp8", "lora", "spec", "kv", "tp", "ep", "cp"]
    guides = []
    for n in range(300):
        engine = chance.choice(["sglang", "vllm", "trt"])
        tags = (engine, *chance.sample(pool, chance.randint(0, 3))) if n % 17 else ()
        named = chance.sample(range(300), chance.choice([0, 0, 1, 2]))
        nearby = tuple(
            NearbyPage(url=f"https://glm52.ai/guides/g{m:03d}/", reader_job="x", difference="y")
            for m in named
        )
        evidence = dataclasses.replace(base.evidence, nearby=nearby)
        guides.append(dataclasses.replace(base, slug=f"g{n:03d}", tags=tags, evidence=evidence))
    site = dataclasses.replace(real, guides=tuple(guides), by_url={g.url: g for g in guides})
    navigation = SiteNavigation(site)

    def expected(guide: Guide) -> list[str]:
        topics, named = set(guide.tags[1:]), {page.url for page in guide.evidence.nearby}
        scored = []
        for position, other in enumerate(guides):
            score = 2 * len(topics & set(other.tags))
            score += 3 * (f"https://glm52.ai{other.url}" in named)
            score += bool(guide.tags) and other.tags[:1] == guide.tags[:1]
            if other is not guide and score:
                scored.append((-score, position, other.slug))
        return [slug for _, _, slug in sorted(scored)[:3]]

    for guide in guides:
        assert [g.slug for g in navigation.neighbours(guide).related] == expected(guide), guide.slug


def test_related_guides_kept_from_the_last_site_follow_every_change_of_layout() -> None:
    """`navigation_of` keeps the last site's related guides only while no slug, tag, order or
    nearest page changed; what it returns always names the new site's guide objects."""
    real = assemble(normalize(load_inputs(BuildConfig.for_root(seed_root()))))
    base = next(g for g in real.guides if not g.evidence.nearby)
    tags = [("vllm", "moe"), ("vllm", "fp8"), ("sglang", "moe"), ("vllm", "moe"), ("vllm",)]

    def site_of(tagging: list[tuple[str, ...]], title: str) -> Site:
        guides = tuple(
            dataclasses.replace(base, slug=f"g{n}", tags=own, title=f"{title} {n}")
            for n, own in enumerate(tagging)
        )
        return dataclasses.replace(real, guides=guides, by_url={g.url: g for g in guides})

    def related(site: Site) -> list[list[tuple[str, str]]]:
        navigation = navigation_of(site)
        return [[(o.slug, o.title) for o in navigation.neighbours(g).related] for g in site.guides]

    def fresh(site: Site) -> list[list[tuple[str, str]]]:
        navigation = SiteNavigation(site)
        return [[(o.slug, o.title) for o in navigation.neighbours(g).related] for g in site.guides]

    first = site_of(tags, "Old")
    assert related(first) == fresh(first)
    retitled = site_of(tags, "New")  # same layout: kept, with the new guides' titles
    assert related(retitled) == fresh(retitled)
    assert related(retitled)[0][0] == ("g3", "New 3")
    retagged = site_of([("sglang", "fp8"), *tags[1:]], "New")  # one guide's tags changed
    assert related(retagged) == fresh(retagged)
    assert related(retagged)[0][0] == ("g1", "New 1")
    shorter = site_of(tags[:3], "New")
    assert related(shorter) == fresh(shorter)
