"""A build keeps each record's verification in its cache and holds only what its checks and
report show (the checks that did not verify, and how many there are); every check is read
back for a page it renders, and a record whose entry is gone by then is verified again."""

from __future__ import annotations

import hashlib
import json
import shutil

from site_builder.cache.store import BuildCache
from site_builder.checks.report import format_json, format_text
from site_builder.checks.site import run_checks
from site_builder.config import BuildConfig
from site_builder.inputs.assemble import assemble
from site_builder.inputs.load import load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.claims import LaterChecks, Verification
from site_builder.model.models import Site
from site_builder.pipeline import build
from site_builder.verify.records import verify_site
from tests.conftest import Project, tree_digest


def site_of(project: Project) -> Site:
    return assemble(normalize(load_inputs(BuildConfig.for_root(project.root))))


def not_read(verification: Verification) -> bool:
    """Whether the verification's checks are still on disk only."""
    checks = verification.checks
    return isinstance(checks, LaterChecks) and checks._load is not None


def reports(site: Site, verifications: dict[str, Verification]) -> tuple[str, str]:
    findings = run_checks(site, [], verifications)
    listed = list(verifications.values())
    text = format_text(findings, 0, include_info=True, verifications=listed)
    return text, format_json(findings, 0, listed)


def test_checks_and_reports_read_no_check_of_a_kept_verification(project: Project) -> None:
    site = site_of(project)
    cache = BuildCache(project.root / ".cache")
    first = verify_site(site, cache=cache)
    cold = verify_site(site)  # no cache: every check in memory
    assert all(not_read(kept) for kept in first.values())  # verified, kept, let go
    again = verify_site(site_of(project), cache=BuildCache(project.root / ".cache"))
    assert all(not_read(kept) for kept in again.values())
    assert reports(site, again) == reports(site, cold)
    assert json.loads(reports(site, again)[1])["records"][0]["checked"] > 100
    assert all(not_read(kept) for kept in again.values()), "the report read every check"
    # Pages read every check back: the same as verifying again.
    for operation, kept in again.items():
        assert tuple(kept.checks) == cold[operation].checks
        assert kept == cold[operation]


def test_a_kept_verification_whose_entry_is_gone_is_verified_again(project: Project) -> None:
    site = site_of(project)
    cold = verify_site(site)
    kept = verify_site(site, cache=BuildCache(project.root / ".cache"))
    shutil.rmtree(project.root / ".cache")
    for operation, verification in kept.items():
        assert tuple(verification.checks) == cold[operation].checks


def test_a_damaged_entry_is_verified_again(project: Project) -> None:
    site = site_of(project)
    cold = verify_site(site)
    verify_site(site, cache=BuildCache(project.root / ".cache"))
    entries = sorted((project.root / ".cache").glob("v*/verify/*"))
    assert len(entries) == 4
    for entry in entries:
        checksum, _, payload = entry.read_bytes().partition(b"\n")
        entry.write_bytes(checksum + b"\n" + payload.replace(b'"verified"', b'"contradicted"'))
    again = verify_site(site, cache=BuildCache(project.root / ".cache"))
    assert again == cold


def test_a_damaged_head_is_caught_by_its_own_checksum(project: Project) -> None:
    """Builds read an entry's head alone; a head changed on disk is verified again, even
    where the whole entry's checksum was made to match."""
    site = site_of(project)
    cold = verify_site(site)
    verify_site(site, cache=BuildCache(project.root / ".cache"))
    for entry in sorted((project.root / ".cache").glob("v*/verify/*")):
        _, payload = entry.read_bytes().split(b"\n", 1)
        sha, head, checks = payload.split(b"\n", 2)
        head = head.replace(b'"records/', b'"elsewhere/')
        payload = b"\n".join((sha, head, checks))
        entry.write_bytes(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    again = verify_site(site, cache=BuildCache(project.root / ".cache"))
    assert again == cold
    assert all(v.source.startswith("records/") for v in again.values())


def test_a_build_that_reads_its_verifications_back_writes_what_a_cold_one_does(
    project: Project,
) -> None:
    assert build(BuildConfig.for_root(project.root)).written
    prose = next((project.root / "content").glob("glm-*.md"))
    prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
    # That guide's page is rendered again with its verification read back from the cache.
    assert build(BuildConfig.for_root(project.root)).written
    cold = project.root / "_cold"
    assert build(BuildConfig.for_root(project.root, cold, cache=False)).written
    assert tree_digest(project.out) == tree_digest(cold)
