"""Injected failures at every stage: the build stops with a clear message and `_site/` survives.

Every case starts from a project copy whose `_site/` a successful build produced (one real
`python build.py` run per module, copied with its output for each case), breaks one thing,
builds again and checks: exit code 1 (2 for bad usage), a message on stderr and no
traceback, `_site/` byte-identical to before, and no staging or old folder left beside it.

Input, template and check failures run the real entry point in a subprocess. Output failures
(disk full, permission denied, a failed rename, Ctrl-C) cannot be caused for real when the
tests run as root, so they run `site_builder.cli.main` in-process with `Path.write_bytes`,
`os.mkdir`, `os.rename`, `os.chmod` or `tempfile.mkdtemp` patched to fail at their Nth call.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from site_builder.cli import main
from site_builder.model.models import Page
from site_builder.output import search
from site_builder.runtime import workdirs
from tests.conftest import Project, copy_project, run_build, tree_digest

RECORD = "records/000_f07234cca5c1d19d.json"
MOE = "records/003_d837ec4df0827390.json"
CACHE = "records/002_586eeffa1bb1f1a1.json"
GUIDE = "content/glm-5-2-vllm-sequence-parallel-moe.md"
GUIDE_RECORD = "20260823213641-315eecbf11"
LINE_FORM = re.compile(r"^(?P<source>[^:\s][^:]*): (?P<location>[^:]+): (?P<message>.+)$")
INPUT_SUMMARY = re.compile(r"^Aborted: (\d+) input errors?; nothing was written\.$")
CHECK_SUMMARY = re.compile(r"^Aborted: (\d+) check errors?; nothing was written\.$")
OUTPUT_SUMMARY = "Aborted: the site was not written; the previous output is untouched."


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, str]]:
    """The project copied once and built once with the real CLI."""
    project = copy_project(tmp_path_factory.mktemp("pristine") / "project")
    result = run_build(project.root)
    assert result.returncode == 0, result.stderr
    digest = tree_digest(project.out)
    assert len(digest) >= 10 and "index.html" in digest
    return project, digest


@pytest.fixture
def built(pristine: tuple[Project, dict[str, str]], tmp_path: Path) -> Project:
    """A fresh copy of the successfully built project, `_site/` included."""
    source, digest = pristine
    project = Project(tmp_path / "project")
    shutil.copytree(source.root, project.root, ignore=shutil.ignore_patterns("__pycache__"))
    assert tree_digest(project.out) == digest
    return project


def outdated(site: Path) -> None:
    """Make every file of the built site in `site` differ from what a build writes, so the
    next build writes each one (it links the files the site it replaces already holds)."""
    for path in site.rglob("*"):
        if path.is_file():
            path.write_bytes(path.read_bytes() + b"\n")


def leftovers(folder: Path) -> list[str]:
    """Staging or old-output folders the writer left in `folder`."""
    return sorted(p.name for p in folder.iterdir() if ".staging-" in p.name or ".old-" in p.name)


def edit(project: Project, relative: str, pattern: str, replacement: str) -> None:
    """Replace the first match of `pattern` (multi-line mode) in a project file."""
    path = project.root / relative
    text, count = re.subn(pattern, replacement, path.read_text("utf-8"), count=1, flags=re.M)
    assert count == 1, f"{pattern!r} not found in {relative}"
    path.write_text(text, "utf-8")


def change_record(relative: str, change: Callable[[dict[str, Any]], Any]) -> Callable[..., None]:
    """Return a fault that loads a record, lets `change` mutate it and saves it."""

    def fault(project: Project) -> None:
        path = project.root / relative
        data = json.loads(path.read_text("utf-8"))
        change(data)
        path.write_text(json.dumps(data, indent=2), "utf-8")

    return fault


def write_bytes(relative: str, content: bytes) -> Callable[[Project], None]:
    """Return a fault that replaces a project file's bytes."""
    return lambda project: (project.root / relative).write_bytes(content)


def replace_text(relative: str, pattern: str, replacement: str) -> Callable[[Project], None]:
    """Return a fault that edits one line of a project file."""
    return lambda project: edit(project, relative, pattern, replacement)


def remove(relative: str) -> Callable[[Project], None]:
    """Return a fault that deletes a project file."""
    return lambda project: (project.root / relative).unlink()


def nest(depth: int) -> Any:
    """Return a JSON value nested `depth` levels deep."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def copy_record(project: Project) -> None:
    """A second record file with the same operationId."""
    shutil.copy(project.root / CACHE, project.root / "records/004_copy.json")


def second_guide_for_one_record(project: Project) -> None:
    """A second prose file rendering the same record under another slug."""
    text = (project.root / GUIDE).read_text("utf-8")
    text = re.sub(r"(?m)^slug: .*$", "slug: another-slug", text)
    project.write("content/zz-copy.md", text)


def guide_link(target: str) -> Callable[[Project], None]:
    """Return a fault that adds a prose link to `target` in the guide."""

    def fault(project: Project) -> None:
        path = project.root / GUIDE
        path.write_text(path.read_text("utf-8") + f"\nSee [this]({target}).\n", "utf-8")

    return fault


# id: (fault, expected stderr fragments, exit code, extra CLI arguments)
CLI_CASES: dict[str, tuple[Callable[[Project], None], tuple[str, ...], int, tuple[str, ...]]] = {
    # --- records: decoding ---
    "record-truncated-json": (
        lambda p: (p.root / RECORD).write_text((p.root / RECORD).read_text()[:900]),
        (f"{RECORD}: line ", "invalid JSON"),
        1,
        (),
    ),
    "record-invalid-utf8": (
        write_bytes(RECORD, b'{"schemaVersion": 1, "status": "\xff\xfe"}'),
        (f"{RECORD}: byte 32: invalid UTF-8",),
        1,
        (),
    ),
    "record-empty-file": (
        write_bytes(RECORD, b""),
        (f"{RECORD}: line 1 column 1: invalid JSON",),
        1,
        (),
    ),
    "record-root-is-a-list": (
        write_bytes(RECORD, b"[1, 2, 3]"),
        (f"{RECORD}: <root>: a record must be a JSON object, not an array",),
        1,
        (),
    ),
    "record-duplicate-key": (
        replace_text(RECORD, r'^  "status": ', '  "status": "x",\n  "status": '),
        (f"{RECORD}: JSON: duplicate key 'status'",),
        1,
        (),
    ),
    "record-nan": (
        replace_text(RECORD, r'^  "schemaVersion": 1,', '  "schemaVersion": NaN,'),
        (f"{RECORD}: JSON: NaN is not valid JSON",),
        1,
        (),
    ),
    "record-lone-surrogate": (
        replace_text(RECORD, r'^  "status": "', '  "status": "\\\\ud800'),
        (f"{RECORD}: status: contains a lone surrogate",),
        1,
        (),
    ),
    "record-nested-too-deep": (
        change_record(RECORD, lambda d: d.update(deep=nest(70))),
        (f"{RECORD}: deep", "nested deeper than 64 levels"),
        1,
        (),
    ),
    "record-integer-too-large": (
        change_record(RECORD, lambda d: d["model"].update(huge=10**40)),
        (f"{RECORD}: model.huge: integer has more than 30 digits",),
        1,
        (),
    ),
    "record-over-8-mib": (
        change_record(RECORD, lambda d: d.update(padding="x" * (8 * 1024 * 1024))),
        (f"{RECORD}: file: is ", "the limit is 8,388,608"),
        1,
        (),
    ),
    # --- records: validation ---
    "record-checked-at-without-zone": (
        change_record(RECORD, lambda d: d.update(checkedAt="2026-08-24T11:09:48")),
        (f"{RECORD}: checkedAt: Input should have timezone info",),
        1,
        (),
    ),
    "record-schema-version-zero": (
        change_record(RECORD, lambda d: d.update(schemaVersion=0)),
        (f"{RECORD}: schemaVersion: Input should be greater than or equal to 1",),
        1,
        (),
    ),
    "record-schema-version-string": (
        change_record(RECORD, lambda d: d.update(schemaVersion="1")),
        (f"{RECORD}: schemaVersion: Input should be a valid integer",),
        1,
        (),
    ),
    "record-operation-id-pattern": (
        change_record(RECORD, lambda d: d.update(operationId="has space")),
        (f"{RECORD}: operationId: String should match pattern",),
        1,
        (),
    ),
    "record-missing-status": (
        change_record(RECORD, lambda d: d.pop("status")),
        (f"{RECORD}: status: Field required",),
        1,
        (),
    ),
    "record-revision-is-a-list": (
        change_record(RECORD, lambda d: d["revisions"].update(sglangAuditTag=["v0.5.18"])),
        (f"{RECORD}: revisions.sglangAuditTag.str: Input should be a valid string",),
        1,
        (),
    ),
    "record-receipt-bytes-string": (
        change_record(RECORD, lambda d: d["sourceReceipts"][2].update(bytes="56377")),
        (f"{RECORD}: sourceReceipts.2.bytes: Input should be a valid integer",),
        1,
        (),
    ),
    "record-invariant-string": (
        change_record(RECORD, lambda d: d["invariants"].update(allSourceHashesValid="true")),
        (f"{RECORD}: invariants.allSourceHashesValid: Input should be a valid boolean",),
        1,
        (),
    ),
    "record-two-decisions": (
        change_record(MOE, lambda d: d.update(decision={"classification": "go"})),
        (f"{MOE}: decision: needs exactly one of 'decision' or 'rolloutDecision'",),
        1,
        (),
    ),
    "record-empty-classification": (
        change_record(MOE, lambda d: d["rolloutDecision"].update(classification=" ")),
        (f"{MOE}: rolloutDecision.classification: a non-empty string is required",),
        1,
        (),
    ),
    "record-overlap-audit-not-object": (
        change_record(MOE, lambda d: d.update(overlapAudit=["x"])),
        (f"{MOE}: overlapAudit: must be an object",),
        1,
        (),
    ),
    "record-nearest-page-without-url": (
        change_record(MOE, lambda d: d["overlapAudit"].update(nearestPages=[{"readerJob": "x"}])),
        (f"{MOE}: overlapAudit.nearestPages.0: needs a 'url' string",),
        1,
        (),
    ),
    "record-duplicate-operation-id": (
        copy_record,
        ("records/004_copy.json: operationId: duplicate operationId",),
        1,
        (),
    ),
    # --- front matter ---
    "front-matter-missing-fence": (
        replace_text(GUIDE, r"\A---\n", ""),
        (f"{GUIDE}: line 1: front matter missing",),
        1,
        (),
    ),
    "front-matter-no-closing-fence": (
        replace_text(GUIDE, r"^---\n(?=## )", ""),
        (f"{GUIDE}: front matter: no closing '---' line",),
        1,
        (),
    ),
    "front-matter-invalid-yaml": (
        replace_text(GUIDE, r"^reader_job: .*$", "reader_job: broken: value"),
        (f"{GUIDE}: line 6: invalid YAML",),
        1,
        (),
    ),
    "front-matter-duplicate-key": (
        replace_text(GUIDE, r"^(slug: .*)$", r'\1\ntitle: "Again"'),
        (f"{GUIDE}: line 5: invalid YAML: duplicate key 'title'",),
        1,
        (),
    ),
    "front-matter-python-tag": (
        replace_text(GUIDE, r"^title: .*$", "title: !!python/object/apply:os.system [echo hi]"),
        (f"{GUIDE}: line 2: invalid YAML: could not determine a constructor",),
        1,
        (),
    ),
    "front-matter-bad-slug": (
        replace_text(GUIDE, r"^slug: .*$", "slug: Bad_Slug"),
        (f"{GUIDE}: front matter.slug: String should match pattern",),
        1,
        (),
    ),
    "front-matter-long-description": (
        replace_text(GUIDE, r"^description: .*$", "description: " + "d" * 160),
        (f"{GUIDE}: front matter.description: String should have at most 159 characters",),
        1,
        (),
    ),
    "front-matter-unknown-field": (
        replace_text(GUIDE, r"^title:", "titel:"),
        (f"{GUIDE}: front matter.titel: Extra inputs are not permitted",),
        1,
        (),
    ),
    "front-matter-unknown-record": (
        replace_text(GUIDE, r"^record: .*$", "record: 20990101000000-deadbeef00"),
        (f"{GUIDE}: front matter.record: no record with operationId '20990101000000-deadbeef00'",),
        1,
        (),
    ),
    "front-matter-is-a-list": (
        write_bytes(GUIDE, b"---\n- title\n- slug\n---\nBody\n"),
        (f"{GUIDE}: front matter: must be a YAML mapping of fields",),
        1,
        (),
    ),
    "front-matter-bad-date": (
        replace_text(GUIDE, r"^published: .*$", "published: 2026-02-30"),
        (f"{GUIDE}: ",),
        1,
        (),
    ),
    "front-matter-bad-tag": (
        replace_text(GUIDE, r"^tags: .*$", "tags: [vLLM]"),
        (f"{GUIDE}: front matter.tags.0: String should match pattern",),
        1,
        (),
    ),
    "front-matter-second-guide-for-record": (
        second_guide_for_one_record,
        (f"content/zz-copy.md: front matter.record: record '{GUIDE_RECORD}'",),
        1,
        (),
    ),
    # --- settings, rules, registry ---
    "settings-missing": (
        remove("content/site.yaml"),
        ("content/site.yaml: file: missing: the site settings file is required",),
        1,
        (),
    ),
    "settings-http-base-url": (
        replace_text("content/site.yaml", r"^base_url: .*$", 'base_url: "http://glm52.ai"'),
        ("content/site.yaml: base_url: String should match pattern",),
        1,
        (),
    ),
    "rules-bad-formula": (
        replace_text("content/rules.yaml", r"^    formula: \(fusionOn.*$", "    formula: (1 +"),
        ("content/rules.yaml: derived.0.formula: invalid formula",),
        1,
        (),
    ),
    "registry-foreign-url": (
        replace_text(
            "content/registry.json",
            r"https://glm52.ai/guides/glm-5-2-dsa-cache-layer-split/",
            "https://example.org/x/",
        ),
        ("content/registry.json: pages.0.url: 'https://example.org/x/' is not a page of",),
        1,
        (),
    ),
    # --- templates ---
    "template-syntax-error": (
        replace_text("templates/guides.html", r"^<h1>All guides</h1>$", "<h1>{% if %}</h1>"),
        ("templates/guides.html: line 13: ",),
        1,
        (),
    ),
    "template-undefined-name": (
        replace_text("templates/base.html", r"^<title>", "<title>{{ no_such_name }}"),
        ("templates/base.html: line 7: 'no_such_name' is undefined",),
        1,
        (),
    ),
    "template-unknown-filter": (
        replace_text("templates/guides.html", r"<h1>All guides", "<h1>{{ 1 | nosuch }}"),
        ("templates/guides.html: line 13: No filter named 'nosuch'",),
        1,
        (),
    ),
    "template-missing-file": (
        remove("templates/guides.html"),
        ("templates/: template: 'guides.html' not found",),
        1,
        (),
    ),
    "template-missing-include": (
        replace_text(
            "templates/guides.html", r"^<h1>All guides</h1>$", '{% include "gone.html" %}'
        ),
        ("templates/guides.html: line 13: 'gone.html' not found",),
        1,
        (),
    ),
    # --- checks ---
    "check-broken-internal-link": (
        guide_link("/guides/no-such-guide/"),
        ("error   link", "'/guides/no-such-guide/' resolves to no page (/guides/no-such-guide/)"),
        1,
        (),
    ),
    "check-broken-anchor": (
        guide_link("/guides/glm-5-2-sglang-dsa-indexer-fusion/#no-such-anchor"),
        ("error   link", "#no-such-anchor, which /guides/glm-5-2-sglang-dsa-indexer-fusion/"),
        1,
        (),
    ),
    "check-contradicted-claim": (
        change_record(RECORD, lambda d: d["sourceReceipts"][3].update(sha256="abc123")),
        ("error   verify", "sourceReceipts.3.sha256: expected 64 lower-case hex digits"),
        1,
        (),
    ),
    "check-unknown-nearest-page": (
        change_record(MOE, lambda d: d["overlapAudit"].update(nearestPage="/guides/nowhere/")),
        ("error   nearest-page", "nearest page /guides/nowhere/ is not in the sitemap registry"),
        1,
        (),
    ),
    "check-failure-in-audit-json": (
        guide_link("/guides/no-such-guide/"),
        ('"ok": false', '"check": "link"'),
        1,
        ("--format", "json"),
    ),
    # --- usage and output folder ---
    "usage-unknown-option": (lambda p: None, ("unrecognized arguments: --bogus",), 2, ("--bogus",)),
    "usage-bad-format": (lambda p: None, ("invalid choice: 'xml'",), 2, ("--format", "xml")),
    "usage-root-not-a-project": (
        lambda p: None,
        ("not a project folder (no records/ inside)",),
        2,
        ("--root", "/"),
    ),
    "output-into-records": (
        lambda p: None,
        ("output: refusing to write into or replace a folder that holds build inputs",),
        1,
        ("--out", "records"),
    ),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_broken_input_fails_cleanly_and_keeps_the_site(built: Project, case: str) -> None:
    fault, fragments, code, args = CLI_CASES[case]
    before = tree_digest(built.out)
    fault(built)
    result = built.run(*args)
    output = result.stdout + result.stderr
    assert result.returncode == code, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    shown = result.stdout if "json" in args else result.stderr
    for fragment in fragments:
        assert fragment in shown, f"{fragment!r} not in:\n{shown[-3000:]}"
    lines = result.stderr.splitlines()
    if "json" in args:
        assert json.loads(result.stdout)["summary"]["ok"] is False
    elif code == 2:
        assert lines[0].startswith("usage:") or lines[0].startswith("error:"), lines
    elif INPUT_SUMMARY.match(lines[-1]):
        assert int(INPUT_SUMMARY.match(lines[-1])[1]) == len(lines) - 1
        assert all(LINE_FORM.match(line) for line in lines[:-1]), lines
    else:
        assert CHECK_SUMMARY.match(lines[-1]) or lines[-1] == OUTPUT_SUMMARY, lines[-1]
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


@pytest.mark.parametrize(
    "expression", ['{{ "x" + 1 }}', "{{ (site.guides | length) / 0 }}", "{{ 'a' | int(1, 2, 3) }}"]
)
def test_template_runtime_error_is_reported_without_traceback(
    built: Project, expression: str
) -> None:
    # render_site catches jinja2.TemplateError only; a TypeError or ZeroDivisionError raised
    # while a template runs escapes the CLI as a Python traceback.
    before = tree_digest(built.out)
    edit(built, "templates/guides.html", r"^<h1>All guides</h1>$", f"<h1>{expression}</h1>")
    result = built.run()
    assert tree_digest(built.out) == before
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.stderr.splitlines()[0].startswith("templates/guides.html: line 13: ")


@pytest.mark.parametrize(
    ("macro", "user"), [("guide_card", "guides.html"), ("feed_entry", "atom.xml")]
)
def test_a_macro_the_listings_need_missing_from_macros_html_is_one_line(
    built: Project, macro: str, user: str
) -> None:
    before = tree_digest(built.out)
    edit(built, "templates/macros.html", rf"macro {macro}\(", f"macro renamed_{macro}(")
    result = built.run()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    first = result.stderr.splitlines()[0]
    assert first == f"templates/: template: macros.html has no {macro} macro ({user} uses it)"
    assert tree_digest(built.out) == before


def deep_tags(project: Project) -> None:
    """Front matter tags nested 1,000 levels deep (2 KB of brackets)."""
    edit(project, GUIDE, r"^tags: .*$", "tags: " + "[" * 1000 + "]" * 1000)


# Inputs that crash the build today (see the report). Fixed, each may build or fail with
# located problems; either way there must be no traceback and no damage to `_site/`.
CRASHING_INPUTS: dict[str, tuple[Callable[[Project], None], str]] = {
    "release-row-with-numeric-tag": (
        change_record(
            MOE,
            lambda d: d.update(
                releases=[
                    {"tag": 1.5, "publishedAt": "2026-01-01T00:00:00Z"},
                    {"tag": 1.6, "publishedAt": "2026-01-02T00:00:00Z"},
                ]
            ),
        ),
        "verify._version: TypeError",
    ),
    "link-with-unbalanced-bracket": (
        change_record(MOE, lambda d: d.update(sources={"paper": "http://[abc"})),
        "consistency._link_problem: ValueError: Invalid IPv6 URL",
    ),
    "front-matter-nested-1000-deep": (deep_tags, "load._yaml: RecursionError"),
    "checked-at-year-1-with-offset": (
        change_record(MOE, lambda d: d.update(checkedAt="0001-01-01T00:00:00+05:00")),
        "render._iso: OverflowError: date value out of range",
    ),
    "front-matter-control-character": (
        replace_text(GUIDE, r"^tags: \[", "tags: [\x07"),
        "a YAML reader error prints as two lines",
    ),
}


@pytest.mark.parametrize("case", sorted(CRASHING_INPUTS))
def test_input_that_crashes_today_builds_or_fails_cleanly(built: Project, case: str) -> None:
    fault, _ = CRASHING_INPUTS[case]
    before = tree_digest(built.out)
    fault(built)
    result = built.run()
    assert "Traceback" not in result.stderr, result.stderr[-1500:]
    assert result.returncode in (0, 1)
    assert leftovers(built.root) == []
    if result.returncode == 1:
        lines = result.stderr.splitlines()
        assert tree_digest(built.out) == before
        if INPUT_SUMMARY.match(lines[-1]):
            assert all(LINE_FORM.match(line) for line in lines[:-1]), lines


# --- output failures, in-process ---------------------------------------------------------


class Injected:
    """Counts calls of a patched function made from one stage's module (the writer unless
    told otherwise); its Nth such call raises `error` instead of running."""

    def __init__(
        self,
        original: Callable[..., Any],
        nth: int,
        error: BaseException,
        stage: str = "output/write",
    ) -> None:
        self.original, self.nth, self.error, self.calls = original, nth, error, 0
        self.stage = str(Path("site_builder") / f"{stage}.py")

    def from_stage(self) -> bool:
        """Return whether the current call comes (at any depth) from the stage's module."""
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.endswith(self.stage):
                return True
            frame = frame.f_back
        return False

    def function(self) -> Callable[..., Any]:
        """Return a plain function (so a patched method still binds `self`)."""

        def injected(*args: Any, **kwargs: Any) -> Any:
            if not self.from_stage():
                return self.original(*args, **kwargs)
            self.calls += 1
            if self.calls == self.nth:
                raise self.error
            return self.original(*args, **kwargs)

        return injected


def enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def eacces() -> PermissionError:
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES))


TARGETS: dict[str, tuple[Any, str]] = {
    "write_bytes": (Path, "write_bytes"),
    "mkdir": (os, "mkdir"),
    "rename": (os, "rename"),
    "chmod": (os, "chmod"),
    "mkdtemp": (tempfile, "mkdtemp"),
}
FILES = 39
"""Files of the built seed site (pages, assets, the search bundle); written in page order."""

# id: (patched function, failing call, error factory, stderr fragment)
OUTPUT_CASES: dict[str, tuple[str, int, Callable[[], BaseException], str]] = {
    "disk-full-on-first-file": ("write_bytes", 1, enospc, "No space left on device"),
    "disk-full-on-second-file": ("write_bytes", 2, enospc, "No space left on device"),
    "disk-full-on-sixth-file": ("write_bytes", 6, enospc, "No space left on device"),
    "disk-full-on-last-file": ("write_bytes", FILES, enospc, "No space left on device"),
    "permission-denied-on-first-file": ("write_bytes", 1, eacces, "Permission denied"),
    "permission-denied-on-seventh-file": ("write_bytes", 7, eacces, "Permission denied"),
    # mkdir call 1 is the parent's (exist_ok swallows errors), 2 is mkdtemp's, 3 and 4 are the
    # staging folder again (for 404.html and _redirects; exist_ok), 5 makes assets/
    "unwritable-parent-mkdir": ("mkdir", 2, eacces, "cannot create the staging folder"),
    "unwritable-parent-mkdtemp": ("mkdtemp", 1, eacces, "cannot create the staging folder"),
    "disk-full-creating-staging": ("mkdtemp", 1, enospc, "No space left on device"),
    "disk-full-creating-subfolder": ("mkdir", 5, enospc, "No space left on device"),
    "disk-full-creating-old-folder": ("mkdtemp", 2, enospc, "No space left on device"),
    "chmod-denied": ("chmod", 1, eacces, "Permission denied"),
    "rename-old-site-aside-fails": ("rename", 1, eacces, "Permission denied"),
    "rename-staging-into-place-fails": ("rename", 2, enospc, "No space left on device"),
}


def run_in_process(
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    nth: int,
    error: BaseException,
    out: Path | None = None,
    stage: str = "output/write",
) -> tuple[int, Injected]:
    """Run the CLI in-process with one function patched to fail at its Nth call from `stage`."""
    owner, name = TARGETS[target]
    injected = Injected(getattr(owner, name), nth, error, stage)
    monkeypatch.setattr(owner, name, injected.function())
    # Without the build cache: an unchanged project would be up to date and write nothing.
    args = ["--root", str(project.root), "--no-cache"] + (["--out", str(out)] if out else [])
    try:
        return main(args), injected
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("case", sorted(OUTPUT_CASES))
def test_output_failure_keeps_the_previous_site(
    built: Project,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target, nth, error, fragment = OUTPUT_CASES[case]
    outdated(built.out)
    before = tree_digest(built.out)
    capsys.readouterr()
    code, injected = run_in_process(built, monkeypatch, target, nth, error())
    captured = capsys.readouterr()
    assert injected.calls >= nth, f"{target} was called only {injected.calls} times"
    assert code == 1, captured
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert lines[-1] == OUTPUT_SUMMARY, lines
    assert lines[0].startswith(f"{built.out}: output: ") or lines[0].startswith(
        f"{built.root}: output: "
    ), lines
    assert fragment in captured.err
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


@pytest.mark.parametrize("after", [0, 1, 5, FILES - 1])
def test_ctrl_c_while_writing_keeps_the_previous_site(
    built: Project, after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    outdated(built.out)
    before = tree_digest(built.out)
    code, _ = run_in_process(built, monkeypatch, "write_bytes", after + 1, KeyboardInterrupt())
    assert code == 130  # Stopped: the site was not written
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


@pytest.mark.parametrize(("target", "nth"), [("mkdtemp", 1), ("mkdir", 4), ("chmod", 1)])
def test_ctrl_c_before_the_swap_keeps_the_previous_site(
    built: Project, target: str, nth: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree_digest(built.out)
    code, _ = run_in_process(built, monkeypatch, target, nth, KeyboardInterrupt())
    assert code == 130  # Stopped: the site was not written
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


def test_ctrl_c_as_the_old_site_is_moved_aside_keeps_it(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree_digest(built.out)
    code, _ = run_in_process(built, monkeypatch, "rename", 1, KeyboardInterrupt())
    assert code == 130  # Stopped: the site was not written
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


def test_ctrl_c_between_the_two_renames_of_the_swap_keeps_a_site(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # write._swap moves _site/ to .old-*, then the staging folder to _site/. It restores the
    # old site only on OSError; on KeyboardInterrupt write_site deletes the staging folder
    # and re-raises, so neither site is at _site/ and the old one is left in .old-*.
    before = tree_digest(built.out)
    code, _ = run_in_process(built, monkeypatch, "rename", 2, KeyboardInterrupt())
    assert code == 130  # Stopped: the site was not written
    assert built.out.is_dir(), f"_site/ is gone; left beside it: {leftovers(built.root)}"
    assert tree_digest(built.out) == before
    assert leftovers(built.root) == []


def test_disk_full_into_a_separate_out_folder_keeps_it(
    built: Project,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "elsewhere" / "public"
    assert main(["--root", str(built.root), "--out", str(out), "--quiet"]) == 0
    outdated(out)
    before = tree_digest(out)
    code, _ = run_in_process(built, monkeypatch, "write_bytes", 4, enospc(), out=out)
    assert code == 1
    assert "No space left on device" in capsys.readouterr().err
    assert tree_digest(out) == before
    assert leftovers(out.parent) == []


SEARCH_CASES = {
    "search-temp-folder-disk-full": ("mkdtemp", 1, enospc, "No space left on device"),
    "search-page-copy-disk-full": ("write_bytes", 3, enospc, "No space left on device"),
    "search-temp-folder-denied": ("mkdir", 1, eacces, "Permission denied"),
}


@pytest.mark.parametrize("case", sorted(SEARCH_CASES))
def test_search_index_failure_keeps_the_previous_site(
    built: Project,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target, nth, error, fragment = SEARCH_CASES[case]
    before = tree_digest(built.out)
    capsys.readouterr()
    # No file system in memory: the folder goes beside the output (else a failure there is
    # only a reason to use that one, test_workdirs.py).
    monkeypatch.setattr(workdirs, "SCRATCH", built.root / "no-memory-file-system")
    code, injected = run_in_process(built, monkeypatch, target, nth, error(), stage="output/search")
    captured = capsys.readouterr()
    assert injected.calls >= nth, f"{target} was called only {injected.calls} times"
    assert code == 1, captured
    assert "Traceback" not in captured.err
    (line,) = [line for line in captured.err.splitlines() if "search index" in line]
    assert line.startswith("pagefind: output: search index failed") and fragment in line, line
    assert tree_digest(built.out) == before
    assert leftovers(built.out.parent) == []


def test_a_failing_pagefind_is_one_line_and_keeps_the_previous_site(
    built: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(built.root / ".cache", ignore_errors=True)  # else its bundle is reused
    before = tree_digest(built.out)
    real_popen = subprocess.Popen
    exploding = "import sys; print('Error: index exploded', file=sys.stderr); sys.exit(3)"

    def broken(command: list[str], **kwargs: Any) -> subprocess.Popen[str]:
        if any("pagefind" in part for part in command):
            command = [sys.executable, "-c", exploding]
        return real_popen(command, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", broken)
    code = main(["--root", str(built.root)])
    captured = capsys.readouterr()
    assert code == 1
    assert "pagefind: output: search index failed: Error: index exploded" in captured.err
    assert "Traceback" not in captured.err
    assert tree_digest(built.out) == before
    assert leftovers(built.out.parent) == [], "the pages staged while it ran are removed"


def test_the_site_is_written_while_pagefind_indexes_it(
    built: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged: list[str] = []
    waited = search.SearchIndex.pages

    def pages(index: search.SearchIndex, take: Any = None) -> list[Page]:
        (folder,) = [p for p in built.out.parent.iterdir() if ".staging-" in p.name]
        staged.extend(sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*")))
        return waited(index, take)

    monkeypatch.setattr(search.SearchIndex, "pages", pages)
    edit(built, "content/vocabulary.yaml", r"\Z", "\n")  # inputs changed: not skipped
    assert main(["--root", str(built.root)]) == 0
    written = sorted(path.relative_to(built.out).as_posix() for path in built.out.rglob("*"))
    assert "index.html" in staged and "sitemap.xml" in staged
    assert not any(path.startswith("pagefind") for path in staged)
    assert [path for path in written if not path.startswith("pagefind")] == staged
    assert "pagefind/pagefind.js" in written
    assert leftovers(built.out.parent) == []
