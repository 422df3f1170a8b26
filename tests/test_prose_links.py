"""Prose links are resolved or refused, never leaked: each finding names the file, line and link."""

from __future__ import annotations

import re

from tests.conftest import Project, soup
from tests.new_guide import SLUG, write_probe_guide

OTHER = "glm-5-2-sglang-weight-cache-daemon"
"""A seed guide built in every fixture project."""


def write_body(project: Project, body: str) -> str:
    """Give the probe guide this prose body; return the prose file's path in the project."""
    path = write_probe_guide(project.root)
    front = path.read_text("utf-8").split("---\n")[1]
    path.write_text(f"---\n{front}---\n{body}", "utf-8")
    return path.relative_to(project.root).as_posix()


def link_errors(project: Project) -> list[str]:
    """Build; return the link check's errors as `file: message` lines."""
    result = project.run()
    assert "Traceback" not in result.stderr
    found = (re.match(r"\s+error\s+link\s+(.*)$", line) for line in result.stderr.splitlines())
    return [match.group(1) for match in found if match]


def line_of(project: Project, source: str, text: str) -> int:
    """Return the 1-based line of the file that holds `text`."""
    lines = (project.root / source).read_text("utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_a_relative_link_resolves_against_the_guides_url(project: Project) -> None:
    write_body(project, f"## Where next\n\nRead [the daemon guide](../{OTHER}/#verdict) next.\n")
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / f"guides/{SLUG}/index.html")
    link = page.select_one(".prose a")
    assert link["href"] == f"/guides/{OTHER}/#verdict"
    assert "](" not in page.select_one(".prose").get_text()


def test_a_dead_relative_link_is_refused_at_its_line_as_typed(project: Project) -> None:
    source = write_body(project, "Intro.\n\nSee [the other guide](../other-guide/) too.\n")
    [line] = link_errors(project)
    number = line_of(project, source, "../other-guide/")
    assert line.startswith(f"{source}: line {number}: '../other-guide/'")
    assert "resolves to no page (/guides/other-guide/)" in line
    assert "write the site path of a page" in line
    assert not project.out.exists()


def test_a_mistyped_scheme_is_a_located_error_with_a_suggestion(project: Project) -> None:
    source = write_body(project, "One.\nTwo [docs](htps://docs.example.org/x) here.\n")
    [line] = link_errors(project)
    number = line_of(project, source, "htps:")
    assert line == (
        f"{source}: line {number}: 'htps://docs.example.org/x' unknown scheme 'htps:'; "
        f"did you mean 'https:'?"
    )


def test_other_schemes_are_refused(project: Project) -> None:
    source = write_body(project, "Mail [us](mailto:editor@example.org).\n")
    [line] = link_errors(project)
    number = line_of(project, source, "mailto:")
    assert f"line {number}: 'mailto:editor@example.org' 'mailto:' links are not published" in line


def test_link_markdown_that_does_not_parse_is_reported_not_published(project: Project) -> None:
    source = write_body(project, "A [broken link](my page.md) in text.\n")
    [line] = link_errors(project)
    number = line_of(project, source, "[broken link]")
    assert line.startswith(f"{source}: line {number}: '[broken link](my page.md)' is not a link")
    assert "backticks" in line


def test_link_markdown_in_code_is_text(project: Project) -> None:
    write_body(project, "Write links as `[text](https://example.org)` in Markdown.\n")
    result = project.run()
    assert result.returncode == 0, result.stderr
    code = soup(project.out / f"guides/{SLUG}/index.html").select_one(".prose code")
    assert code.get_text() == "[text](https://example.org)"


def test_a_successful_build_never_publishes_raw_link_markdown(project: Project) -> None:
    write_body(
        project,
        f"[Absolute](https://example.org/a), [site](/guides/{OTHER}/), "
        f"[relative](../{OTHER}/) and [anchor](#verdict).\n",
    )
    assert project.run().returncode == 0
    for page in project.out.rglob("*.html"):
        text = soup(page).get_text()
        assert not re.search(r"\[[^\]]+\]\([^)]*\)", text), page


def test_an_unregistered_nearest_page_named_only_in_the_record_is_the_records_fault(
    project: Project,
) -> None:
    path = write_probe_guide(project.root)
    record = project.record("900_latency_probe.json")
    record["overlapAudit"] = {
        "nearestPages": [{"url": "https://glm52.ai/guides/not-a-page/", "difference": "x"}]
    }
    project.save_record("900_latency_probe.json", record)
    result = project.run()
    assert result.returncode == 1
    prose = path.relative_to(project.root).as_posix()
    errors = [line.split(None, 2)[2] for line in result.stderr.splitlines() if "not-a-page" in line]
    assert len(errors) == 2  # the nearest-page check and the link check, both on the record
    assert all(line.startswith("records/900_latency_probe.json: ") for line in errors), errors
    assert not [line for line in result.stderr.splitlines() if " error " in line and prose in line]


def test_line_numbers_count_the_front_matter_and_soft_breaks(project: Project) -> None:
    path = write_probe_guide(project.root, tags=["a", "b", "c"])
    with path.open("a", encoding="utf-8") as prose:
        prose.write("\nA paragraph\nwith a soft break\nand [bad](htps://x.example) here.\n")
    source = path.relative_to(project.root).as_posix()
    [line] = link_errors(project)
    number = line_of(project, source, "[bad](htps://x.example)")
    assert number > 15 and f"{source}: line {number}: 'htps://x.example'" in line
