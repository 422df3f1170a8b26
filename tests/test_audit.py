"""The pre-publication audit: each check fails on the fixture made to break it, seeds pass."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from site_builder.checks import boilerplate, compared, minhash, overlap
from site_builder.checks.consistency import check_site
from site_builder.checks.seo import Doc
from site_builder.checks.site import run_checks
from site_builder.checks.sketches import kept_sketches
from site_builder.config import BuildConfig
from site_builder.model.models import Guide, Page
from site_builder.output.search import promised_pages
from site_builder.pipeline import build
from site_builder.render.scan import scan_pages
from site_builder.render.words import gram_codes
from site_builder.verify.records import verify_site
from tests.conftest import Project, audit, tree_digest

SEQUENCE_RECORD = "003_d837ec4df0827390.json"
FUSION_RECORD = "000_f07234cca5c1d19d.json"
SEQUENCE_URL = "https://glm52.ai/guides/glm-5-2-vllm-sequence-parallel-moe/"
SEQUENCE_GUIDE = "content/glm-5-2-vllm-sequence-parallel-moe.md"


def errors(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    """Return the error findings of one check."""
    return [f for f in report["findings"] if f["check"] == check and f["severity"] == "error"]


def edit_registry(project: Project, target: str, **fields: Any) -> None:
    """Change the registry entry whose URL is `target`."""
    path = project.root / "content" / "registry.json"
    registry = json.loads(path.read_text("utf-8"))
    (entry,) = [page for page in registry["pages"] if page["url"] == target]
    entry.update(fields)
    path.write_text(json.dumps(registry, indent=2), "utf-8")


def test_seeds_pass_the_audit_with_no_errors(project: Project) -> None:
    code, report = audit(project)
    assert code == 0
    assert report["schema"] == "glm52-audit/1"
    assert report["summary"]["ok"] is True
    assert report["summary"]["errors"] == 0
    # Every seed guide is at a registry page it published itself: no takeover to declare.
    assert not [f for f in report["findings"] if f["check"] in {"takeover", "canonical"}]


def test_sitemap_count_differences_are_warnings_showing_both_numbers(project: Project) -> None:
    _, report = audit(project)
    counts = [f for f in report["findings"] if f["check"] == "sitemap-count"]
    assert {f["severity"] for f in counts} == {"warning"}
    sequence = next(f for f in counts if f["source"] == f"records/{SEQUENCE_RECORD}")
    assert "counts 86 canonicals" in sequence["message"]
    assert "at most 8 (11 pages, less 3 published on or after that day)" in sequence["message"]
    assert "--import-sitemap" in sequence["message"]


def test_copy_of_a_seed_under_a_new_operation_id_is_a_near_duplicate(project: Project) -> None:
    record = project.record(SEQUENCE_RECORD)
    record["operationId"] = "20260901000000-copy"
    project.save_record("copy.json", record)
    before = tree_digest(project.out) if project.out.exists() else {}
    code, report = audit(project)
    assert code == 1
    (near,) = errors(report, "overlap")
    assert near["score"] >= 0.9
    assert "near-duplicate" in near["message"]
    assert set([near["page"], *near["related"]]) == {
        "/guides/glm-5-2-vllm-sequence-parallel-moe/",
        f"/guides/{record['status']}/",
    }
    (claim,) = errors(report, "distinct-intent")  # the copy's record claims distinctIntent
    assert claim["source"] == "records/copy.json", "filed against the new record only"
    build_result = project.run()
    assert build_result.returncode == 1
    assert (tree_digest(project.out) if project.out.exists() else {}) == before


def test_nearest_page_missing_from_the_registry_names_record_and_url(project: Project) -> None:
    record = project.record(FUSION_RECORD)
    record["overlapAudit"]["nearestPages"][0]["url"] = "/guides/glm-5-2-never-published/"
    project.save_record(FUSION_RECORD, record)
    code, report = audit(project)
    assert code == 1
    (finding,) = errors(report, "nearest-page")
    assert finding["source"] == f"records/{FUSION_RECORD}"
    assert "/guides/glm-5-2-never-published/" in finding["message"]


def test_seed_001_nearest_page_resolves_to_the_guide_built_from_seed_003(
    project: Project,
) -> None:
    registry = project.root / "content" / "registry.json"
    data = json.loads(registry.read_text("utf-8"))
    data["pages"] = [page for page in data["pages"] if page["url"] != SEQUENCE_URL]
    registry.write_text(json.dumps(data), "utf-8")
    guide = project.root / SEQUENCE_GUIDE  # no live page left to take over
    text = guide.read_text("utf-8")
    guide.write_text("".join(line for line in text.splitlines(True) if "replaces:" not in line))
    code, report = audit(project)
    assert code == 0, report
    assert not errors(report, "nearest-page")


def test_two_guides_on_one_slug_fail(project: Project) -> None:
    text = (project.root / SEQUENCE_GUIDE).read_text("utf-8")
    (project.root / "content" / "glm-5-2-sglang-weight-cache-daemon.md").write_text(
        text.replace("record: 20260823213641-315eecbf11", "record: 20260822061545-7cc6dd6133"),
        "utf-8",
    )
    code, report = audit(project)
    assert code == 1
    (finding,) = errors(report, "input")
    assert "slug 'glm-5-2-vllm-sequence-parallel-moe' is also used by" in finding["message"]


def test_registry_entry_and_guide_on_one_canonical_with_different_slash(project: Project) -> None:
    edit_registry(project, SEQUENCE_URL, url=SEQUENCE_URL.rstrip("/"))
    code, report = audit(project)
    assert code == 1
    (finding,) = errors(report, "canonical")
    assert finding["page"] == "/guides/glm-5-2-vllm-sequence-parallel-moe/"
    assert SEQUENCE_URL.rstrip("/") in finding["message"]
    assert finding["source"] == SEQUENCE_GUIDE


def test_two_registry_entries_for_one_page_are_an_error(project: Project) -> None:
    registry = project.root / "content" / "registry.json"
    data = json.loads(registry.read_text("utf-8"))
    data["pages"].append({"url": "http://www.glm52.ai/Guides/glm-5-2-expert-parallelism"})
    registry.write_text(json.dumps(data), "utf-8")
    code, report = audit(project)
    assert code == 1
    (finding,) = errors(report, "canonical")
    assert finding["source"] == "content/registry.json"


def test_broken_internal_anchor_is_an_error(project: Project) -> None:
    guide = project.root / SEQUENCE_GUIDE
    guide.write_text(
        guide.read_text("utf-8") + "\nSee [the verdict](#no-such-section) and "
        "[DCP](/guides/glm-5-2-vllm-decode-context-parallel/#missing-anchor).\n",
        "utf-8",
    )
    code, report = audit(project)
    assert code == 1
    messages = [f["message"] for f in errors(report, "link")]
    assert len(messages) == 2
    assert any("#missing-anchor" in m and "decode-context-parallel" in m for m in messages)
    page = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
    assert any(f"points at #no-such-section, which {page} does not have" in m for m in messages)


def test_link_to_an_unbuilt_unregistered_page_is_an_error(project: Project) -> None:
    guide = project.root / SEQUENCE_GUIDE
    guide.write_text(guide.read_text("utf-8") + "\n[gone](/guides/not-a-page/)\n", "utf-8")
    code, report = audit(project)
    assert code == 1
    (finding,) = errors(report, "link")
    assert "/guides/not-a-page/" in finding["message"]


def _front_field(project: Project, name: str) -> str:
    """Return one quoted front matter field of the sequence-parallel guide."""
    front = (project.root / SEQUENCE_GUIDE).read_text("utf-8")
    return front.split(f'{name}: "', 1)[1].split('"', 1)[0]


def test_strong_overlap_is_a_warning_naming_both_pages_and_marked_reviewed(
    project: Project,
) -> None:
    # The registry page's reader job is the guide's description: a strong overlap of intent.
    description, job = _front_field(project, "description"), _front_field(project, "reader_job")
    edit_registry(
        project, "https://glm52.ai/guides/glm-5-2-expert-parallelism/", reader_job=description
    )
    code, report = audit(project)
    assert code == 0
    (warning,) = [f for f in report["findings"] if f["check"] == "overlap"]
    assert warning["severity"] == "warning"
    assert 0.4 <= warning["score"] < 0.8
    assert warning["page"] == "/guides/glm-5-2-vllm-sequence-parallel-moe/"
    assert warning["source"] == SEQUENCE_GUIDE
    assert warning["related"] == ["/guides/glm-5-2-expert-parallelism/"]
    assert job in warning["message"] and description in warning["message"], "both reader jobs"
    assert warning["reviewed"] is True, "seed 003 names that page with its own intent"


def test_a_live_page_with_the_guides_reader_job_is_cannibalisation_even_when_reviewed(
    project: Project,
) -> None:
    # Seed 003 names the expert-parallelism page with a stated difference: the pair is
    # reviewed, but one reader job on two pages (score 1.00) stays an error.
    title, job = _front_field(project, "title"), _front_field(project, "reader_job")
    edit_registry(
        project, "https://glm52.ai/guides/glm-5-2-expert-parallelism/", title=title, reader_job=job
    )
    code, report = audit(project)
    assert code == 1
    (error,) = errors(report, "cannibalisation")
    assert error["score"] == 1.0 and error["reviewed"] is True
    assert error["source"] == SEQUENCE_GUIDE
    assert error["related"] == ["/guides/glm-5-2-expert-parallelism/"]
    assert "reader_job" in error["message"]
    (overlap_warning,) = [f for f in report["findings"] if f["check"] == "overlap"]
    assert overlap_warning["severity"] == "warning" and overlap_warning["reviewed"] is True
    (duplicate_title,) = errors(report, "title")
    assert duplicate_title["source"] == SEQUENCE_GUIDE


def test_lsh_candidates_find_the_same_overlaps_as_exact_comparison(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = project.record(SEQUENCE_RECORD)
    record["operationId"] = "20260901000000-copy"
    project.save_record("copy.json", record)
    config = BuildConfig.for_root(project.root)
    exact = [f for f in build(config, write=False).findings if f.check == "overlap"]
    monkeypatch.setattr(overlap, "EXACT_PAIR_LIMIT", 0)
    approximate = [f for f in build(config, write=False).findings if f.check == "overlap"]
    assert exact
    assert approximate == exact


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shingles_counted_once_each_give_every_pair_its_shared_count(seed: int) -> None:
    """A small site's exact comparison counts the shingles two texts share once per shingle
    over the texts that have it: every pair's count is the one comparing the two texts gives,
    with shingles on one text, on a few and on many, and texts with none."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(-(2**63), 2**63 - 1, 400, dtype=np.int64)
    texts = [np.unique(rng.choice(pool, rng.integers(0, 120))) for _ in range(30)]
    texts[4] = np.empty(0, np.int64)
    docs = [cast(Any, None)] * len(texts)
    group = compared.Group("visible text", docs, list, lambda n: texts[n])
    counted = overlap._shared_counts(group)
    assert counted is not None
    for n, a in enumerate(texts):
        for m, b in enumerate(texts):
            expected = len(np.intersect1d(a, b)) if n != m else counted[n, m]
            assert counted[n, m] == expected
    assert counted.sum() > 0 and not counted[4].any()
    intents = compared.Group("intent", docs, list, lambda n: frozenset({n}))
    assert overlap._shared_counts(intents) is None  # sets are compared pair by pair


def test_sitemap_and_canonical_disagreements_are_found(project: Project) -> None:
    config = BuildConfig.for_root(project.root)
    report = build(config, write=False)
    pages = {page.path: page for page in report.pages}
    sitemap = pages["sitemap.xml"].content.replace(
        f"<loc>{SEQUENCE_URL}</loc>".encode(), b"<loc>https://glm52.ai/guides/stray/</loc>"
    )
    guide_path = "guides/glm-5-2-vllm-decode-context-parallel/index.html"
    guide = pages[guide_path].content.replace(
        b'<meta property="og:url" content="https://glm52.ai/guides/glm-5-2-vllm-decode-context-parallel/">',
        b'<meta property="og:url" content="https://glm52.ai/guides/elsewhere/">',
    )
    pages["sitemap.xml"] = Page("sitemap.xml", sitemap)
    pages[guide_path] = Page(guide_path, guide)
    site = _site(config)
    findings = check_site(
        site, list(pages.values()), scan_pages(pages.values(), site.settings.base_url)
    )
    messages = [f.message for f in findings if f.severity == "error"]
    assert any("/guides/glm-5-2-vllm-sequence-parallel-moe/ is missing" in m for m in messages)
    assert any("/guides/stray/ is listed but is no page" in m for m in messages)
    assert any("og:url https://glm52.ai/guides/elsewhere/ differs" in m for m in messages)
    assert any(f"canonical {SEQUENCE_URL} is not the page's entry" in m for m in messages)


def test_checks_are_pure_and_deterministic(project: Project) -> None:
    config = BuildConfig.for_root(project.root)
    report = build(config, write=False)
    site = _site(config)
    verifications = verify_site(site)
    pages = [*report.pages, *promised_pages()]  # the search bundle, indexed while checks run
    first = run_checks(site, pages, verifications)
    assert first == run_checks(site, pages, verify_site(site))
    # The build's findings are these, with the acknowledged warnings marked.
    assert [replace(f, acknowledged="") for f in report.findings] == [
        f for f in first if f.check != "acknowledge"
    ]
    assert any(f.acknowledged for f in report.findings)


def test_audit_writes_nothing(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "never"
    assert project.run("--audit", "--out", str(out)).returncode == 0
    assert not out.exists()
    shutil.rmtree(project.root / "records")
    assert project.run("--audit").returncode == 2


def _site(config: BuildConfig):
    """Return the assembled Site of a project."""
    from site_builder.inputs.assemble import assemble
    from site_builder.inputs.load import load_inputs
    from site_builder.inputs.normalize import normalize

    return assemble(normalize(load_inputs(config)))


@pytest.mark.parametrize("buckets", [boilerplate.BUCKETS, 1, 64])  # codes counted in ranges
def test_template_text_shared_by_many_guides_does_not_make_them_alike(
    buckets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(boilerplate, "BUCKETS", buckets)
    template = "evidence checked pinned revisions and model sources each with the size and sha"
    pages = [" ".join([template, *(f"topic{n}word{m}" for m in range(4))]) for n in range(30)]
    pages[1] = pages[0]  # a real duplicate: its shingles are on two pages only
    docs = [Doc(f"/guides/g{n}/", "", f"content/g{n}.md", None, frozenset()) for n in range(30)]
    codes = [gram_codes(page) for page in pages]
    kept = compared.text_group("visible text", docs, codes).shingles

    def score(a: Any, b: Any) -> float:
        return len(np.intersect1d(a, b)) / len(np.union1d(a, b))

    assert score(kept(2), kept(3)) == 0.0
    assert score(kept(0), kept(1)) == 1.0
    few = compared.text_group("visible text", docs[:BOILERPLATE_FREE], codes[:BOILERPLATE_FREE])
    assert score(few.shingles(2), few.shingles(3)) > 0.4  # a small site keeps every shingle


@pytest.mark.parametrize("buckets", [boilerplate.BUCKETS, 1, 3, 64])
def test_common_codes_counted_in_ranges_are_those_counted_at_once(
    buckets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(boilerplate, "BUCKETS", buckets)
    rng = np.random.default_rng(5)
    pool = rng.integers(-(1 << 63), (1 << 63) - 1, 400, dtype=np.int64, endpoint=True)
    pool[:3] = [-(1 << 63), (1 << 63) - 1, 0]  # the ends of the range, and its middle
    pages = [np.unique(rng.choice(pool, rng.integers(0, 120))) for _ in range(60)]
    values, counts = np.unique(np.concatenate(pages), return_counts=True)
    for more_than in (0, 5, 10.5, 59):
        common, how_many = boilerplate.common_codes(pages, more_than)
        assert common.tolist() == values[counts > more_than].tolist()
        assert how_many.tolist() == counts[counts > more_than].tolist()
    assert compared.text_group("evidence", [], []).inputs() == []
    assert not len(boilerplate.common_codes([], 0)[0])


def test_minhash_at_scale_does_not_import_datasketch_or_scipy() -> None:
    # Importing datasketch imports scipy: 1.2 s of every build and audit over 200 guides.
    code = """
import sys
from site_builder.checks import compared
from site_builder.checks import overlap
from site_builder.checks.seo import Doc
from site_builder.render.words import gram_codes
docs = [Doc(f"/g{n}/", "", "", object(), frozenset()) for n in range(300)]
texts = [gram_codes(f"page {n} about the canary rollout") for n in range(300)]
assert len(docs) * len(docs) > overlap.EXACT_PAIR_LIMIT
overlap._scored_pairs(compared.text_group("visible text", docs, texts), None)
print(sorted(name for name in ("datasketch", "scipy") if name in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_lsh_candidates_are_those_datasketchs_minhash_lsh_proposes() -> None:
    from datasketch import MinHash, MinHashLSH

    rng = random.Random(7)
    words = [f"w{n}" for n in range(400)]
    pages = [[rng.choice(words) for _ in range(rng.randrange(20, 80))] for _ in range(300)]
    for n in range(0, 90, 3):  # pages sharing a third, two thirds or all of another's words
        cut = len(pages[n]) * (n // 3 % 3 + 1) // 3
        pages[n + 1] = pages[n][:cut] + pages[n + 1][cut:]
    texts = [" ".join(page) for page in pages]
    guide = cast(Guide, object())  # only whether a page is a guide matters here
    docs = [Doc(f"/g{n:03}/", "", "", guide if n % 4 else None, frozenset()) for n in range(300)]
    group = compared.text_group("visible text", docs, [gram_codes(text) for text in texts])
    sketches = kept_sketches(None, group.kind, group.inputs(), group.shingles)
    everyone = list(range(len(docs)))
    guides = [n for n in everyone if docs[n].guide is not None]
    pairs = overlap._lsh_candidates(sketches.signatures, everyone, guides)
    found = [(docs[n].key, docs[m].key) for n, m in pairs if n != m]
    # The former implementation: datasketch's MinHash of each shingle's crc32, and its index.
    template = MinHash(num_perm=minhash.NUM_PERM, seed=1)
    lsh = MinHashLSH(
        threshold=overlap.STRONG_OVERLAP, num_perm=minhash.NUM_PERM, weights=(0.1, 0.9)
    )
    assert (lsh.b, lsh.r) == (minhash.BANDS, minhash.ROWS)
    hashes = {}
    for n, doc in enumerate(docs):
        hashed = MinHash(
            num_perm=minhash.NUM_PERM,
            hashfunc=lambda code: code & 0xFFFFFFFF,
            permutations=template.permutations,
            scheme=template.scheme,
        )
        hashed.update_batch(group.shingles(n))
        hashes[doc.key] = hashed
        lsh.insert(doc.key, hashed)
    signatures = [hashes[doc.key].hashvalues.tolist() for doc in docs]
    assert sketches.signatures.tolist() == signatures
    margin = overlap.STRONG_OVERLAP - overlap.ESTIMATE_MARGIN
    expected = [
        (doc.key, other)
        for doc in docs
        if doc.guide is not None
        for other in sorted(lsh.query(hashes[doc.key]))
        if other != doc.key and hashes[doc.key].jaccard(hashes[other]) >= margin
    ]
    assert len(expected) > 10, expected  # the pages planted
    assert sorted(found) == sorted(expected)


BOILERPLATE_FREE = boilerplate.BOILERPLATE_MIN
