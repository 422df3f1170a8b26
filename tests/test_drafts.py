"""Drafts, prose-less records and scheduled guides: audited and previewed, never deployed."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

from bs4 import BeautifulSoup

from tests.conftest import Project, soup
from tests.new_guide import OPERATION_ID, SLUG, TITLE, write_probe_guide
from tests.preview_helpers import start_preview

GUIDE_PATH = f"guides/{SLUG}/index.html"


def epoch(day: str) -> str:
    """Return SOURCE_DATE_EPOCH for noon UTC of an ISO date."""
    return str(int(datetime.fromisoformat(f"{day}T12:00:00+00:00").timestamp()))


def traces(site: Path, *needles: str) -> list[str]:
    """Return the files of a built site that mention any needle, search bundle included."""
    found = []
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":  # Pagefind's index and fragments are gzip files
            data = gzip.decompress(data)
        text = data.decode("utf-8", errors="replace")
        if any(needle in text for needle in needles):
            found.append(path.relative_to(site).as_posix())
    return found


def test_a_draft_leaves_no_trace_in_any_output_file(project: Project) -> None:
    write_probe_guide(project.root, draft=True)
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert "1 draft(s) left out" in result.stdout and SLUG in result.stdout
    assert traces(project.out, SLUG, TITLE, OPERATION_ID) == []
    # The search bundle is really searched: a published guide's slug is in it.
    assert any(name.startswith("pagefind/") for name in traces(project.out, "vllm"))


def test_a_published_guide_appears_everywhere_a_draft_does_not(project: Project) -> None:
    write_probe_guide(project.root)
    assert project.run().returncode == 0
    found = traces(project.out, SLUG)
    for expected in (GUIDE_PATH, "sitemap.xml", "atom.xml", "guides/index.html", "index.html"):
        assert expected in found
    assert "tags/chunked-prefill/index.html" in found
    assert any(name.startswith("pagefind/") for name in found)


def test_drafts_flag_writes_the_draft_with_a_banner(project: Project) -> None:
    write_probe_guide(project.root, draft=True)
    result = project.run("--drafts")
    assert result.returncode == 0, result.stderr
    page = BeautifulSoup((project.out / GUIDE_PATH).read_text("utf-8"), "html.parser")
    banner = page.select_one(".draft-banner")
    assert banner is not None and "Draft, not published" in banner.get_text()
    assert SLUG in (project.out / "sitemap.xml").read_text("utf-8")


def test_a_draft_is_audited_and_its_errors_fail_the_build(project: Project) -> None:
    prose = write_probe_guide(project.root, draft=True)
    prose.write_text(prose.read_text("utf-8") + "\nSee [the missing page](/guides/no-such/).\n")
    before = project.run()
    assert before.returncode == 1
    assert "/guides/no-such/" in before.stderr
    audit = project.run("--audit")
    assert audit.returncode == 1 and "/guides/no-such/" in audit.stderr


def test_audit_lists_the_draft_and_why(project: Project) -> None:
    write_probe_guide(project.root, draft=True)
    audit = project.run("--audit")
    assert audit.returncode == 0, audit.stderr
    assert f"/guides/{SLUG}/" in audit.stderr
    assert "not published (front matter says draft: true)" in audit.stderr


def test_a_record_without_prose_is_a_draft_that_needs_prose(project: Project) -> None:
    write_probe_guide(project.root).unlink()
    status_slug = "pinned-source-chunked-prefill-latency-probe"
    result = project.run()
    assert result.returncode == 0, result.stderr
    assert traces(project.out, status_slug, OPERATION_ID) == []
    audit = project.run("--audit")
    assert "not published (needs prose)" in audit.stderr
    assert project.run("--drafts").returncode == 0
    assert (project.out / f"guides/{status_slug}/index.html").is_file()


def test_site_yaml_can_publish_records_without_prose(project: Project) -> None:
    write_probe_guide(project.root).unlink()
    settings = project.root / "content/site.yaml"
    settings.write_text(settings.read_text("utf-8") + "publish_without_prose: true\n", "utf-8")
    assert project.run().returncode == 0
    assert (project.out / "guides/pinned-source-chunked-prefill-latency-probe/index.html").is_file()


def test_a_scheduled_guide_is_published_on_its_day_not_before(project: Project) -> None:
    write_probe_guide(project.root, published="2026-12-05")
    before = project.run(env={"SOURCE_DATE_EPOCH": epoch("2026-12-04")})
    assert before.returncode == 0, before.stderr
    assert not (project.out / GUIDE_PATH).exists()
    assert traces(project.out, SLUG) == []
    audit = project.run("--audit", env={"SOURCE_DATE_EPOCH": epoch("2026-12-04")})
    assert "scheduled for 2026-12-05" in audit.stderr
    drafts = project.run("--drafts", env={"SOURCE_DATE_EPOCH": epoch("2026-12-04")})
    assert drafts.returncode == 0, drafts.stderr
    banner = soup(project.out / GUIDE_PATH).select_one(".draft-banner time")
    assert (banner["datetime"], banner.get_text()) == ("2026-12-05", "2026-12-05")
    on_the_day = project.run(env={"SOURCE_DATE_EPOCH": epoch("2026-12-05")})
    assert on_the_day.returncode == 0, on_the_day.stderr
    assert (project.out / GUIDE_PATH).is_file()


def test_no_clock_value_reaches_the_output(project: Project) -> None:
    write_probe_guide(project.root)
    assert project.run(env={"SOURCE_DATE_EPOCH": epoch("2027-01-01")}).returncode == 0
    first = {
        p.relative_to(project.out): p.read_bytes() for p in project.out.rglob("*") if p.is_file()
    }
    assert project.run(env={"SOURCE_DATE_EPOCH": epoch("2031-06-30")}).returncode == 0
    second = {
        p.relative_to(project.out): p.read_bytes() for p in project.out.rglob("*") if p.is_file()
    }
    assert first == second
    assert not traces(project.out, "2027-01-01", "2031-06-30")


def test_a_bad_source_date_epoch_is_a_usage_error(project: Project) -> None:
    result = project.run(env={"SOURCE_DATE_EPOCH": "yesterday"})
    assert result.returncode == 2
    assert "SOURCE_DATE_EPOCH" in result.stderr and "Traceback" not in result.stderr


def test_the_preview_shows_drafts_with_their_banner(project: Project) -> None:
    write_probe_guide(project.root, draft=True)
    preview = start_preview(project.root)
    try:
        status, _, body = preview.get(f"/guides/{SLUG}/")
        assert status == 200
        page = BeautifulSoup(body, "html.parser")
        assert "Draft, not published" in page.select_one(".draft-banner").get_text()
        _, _, index = preview.get("/guides/")
        assert SLUG.encode() in index
    finally:
        preview.stop()


def test_the_clock_decides_when_no_epoch_is_set(project: Project) -> None:
    tomorrow = datetime.fromtimestamp(datetime.now(UTC).timestamp() + 2 * 86400, UTC).date()
    write_probe_guide(project.root, published=tomorrow.isoformat())
    result = project.run(env={"SOURCE_DATE_EPOCH": ""})
    assert result.returncode == 0, result.stderr
    assert not (project.out / GUIDE_PATH).exists()
    assert f"scheduled for {tomorrow.isoformat()}" in project.run("--audit").stderr


def test_the_preview_shows_a_record_without_prose_as_a_draft(project: Project) -> None:
    write_probe_guide(project.root).unlink()
    preview = start_preview(project.root)
    try:
        status, _, body = preview.get("/guides/pinned-source-chunked-prefill-latency-probe/")
        assert status == 200
        banner = BeautifulSoup(body, "html.parser").select_one(".draft-banner")
        assert banner is not None and "needs prose" in banner.get_text()
    finally:
        preview.stop()
