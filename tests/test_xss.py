"""Every XSS payload of the corpus, in every string position of a record and of the prose, is inert.

The corpus is tests/fixtures/xss/payloads.txt (format in its header). Each payload gets a guide of
its own, whose record carries it in every string position (values, keys, receipt labels,
boundary texts, the decision, nearest-page differences, the evidence boundary, model, revisions,
invariants) and whose Markdown carries it as text, link target, image source, reference-link
definition, autolink, raw HTML line, heading, table cell and code. The payloads are grouped so one
real build (`python build.py`) covers a group. Every built HTML file is then parsed with
BeautifulSoup and must hold no script, no event handler, no dangerous URL and no element the
templates do not use; the payload must read back as literal text where it was put.

Receipt and nearest-page URLs are probed in builds of their own: `https://example.org/?q=` +
payload and the raw payload as receipt URLs, and the payload as a nearest page. What is not an
http(s) URL must fail verification (or the nearest-page check) with a finding naming it, and
whatever passes must be drawn as an ordinary link. Findings are read from the JSON report.
Record text must not forge report lines or reach the terminal as control characters.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup, Tag

from site_builder.render.pages import CONTROLS
from tests.conftest import FIXTURES, Project, soup

PAYLOAD_FILE = FIXTURES / "xss" / "payloads.txt"
GROUPS = 8
"""Payload i is probed in group i % GROUPS: one build of about 40 guides per group."""
URL_GROUPS = 2
"""URL probes are cheap (one record per group), so fewer, larger groups."""
SITE_TITLE = "GLM52.ai"
CHECKED_AT = "2026-01-15T09:30:00+01:00"
REGISTERED = (
    "/guides/glm-5-2-nvfp4-sglang/",
    "https://glm52.ai/guides/glm-5-2-expert-parallelism/",
    "https://glm52.ai/guides/glm-5-2-hicache-kv-offload/",
)
"""Registry pages of the fixture project that a record's overlap audit may name."""

_ESCAPE = re.compile(r"\\(\\|n|r|t|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")
_SIMPLE_ESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}

URL_ATTRIBUTES = frozenset(
    {
        "href",
        "src",
        "action",
        "formaction",
        "srcdoc",
        "data",
        "poster",
        "xlink:href",
        "background",
        "dynsrc",
        "lowsrc",
        "srcset",
        "codebase",
        "cite",
        "ping",
    }
)
DANGEROUS_SCHEMES = ("javascript:", "vbscript:", "data:")
FORBIDDEN_ELEMENTS = frozenset(
    {
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "applet",
        "base",
        "form",
        "input",
        "button",
        "svg",
        "math",
        "style",
        "template",
        "noscript",
        "textarea",
        "xmp",
        "plaintext",
        "portal",
    }
)
"""Never in a page: our templates use none of these (a script is allowed only from /assets/)."""
TEMPLATE_ELEMENTS = frozenset(
    [
        "a",
        "article",
        "aside",
        "body",
        "br",
        "code",
        "dd",
        "div",
        "dl",
        "dt",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "html",
        "li",
        "link",
        "main",
        "meta",
        "nav",
        "ol",
        "p",
        "section",
        "span",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "time",
        "title",
        "tr",
        "ul",
    ]
)
SEARCH_FORM_ELEMENTS = frozenset(["form", "label", "input", "button"])
"""The header's search form: fixed template markup, GET to /search/."""
CHART_ELEMENTS = frozenset(["svg", "title", "desc", "g", "rect", "line", "text", "tspan", "path"])
"""Inline SVG bar charts: drawn by the chart template from numbers, inside figure.chart."""
MARKDOWN_ELEMENTS = frozenset(["em", "s", "pre", "blockquote", "hr", "img", "sup"])
"""Elements the Markdown renderer adds (emphasis, strikethrough, code blocks, quotes, images)."""
ALLOWED_ELEMENTS = TEMPLATE_ELEMENTS | MARKDOWN_ELEMENTS
SAFE_LINK_PREFIXES = ("https://", "http://", "/", "#")
PROSE_LINK_ERROR = re.compile(
    r"line \d+: '.*' (resolves to no page \(.*\).*"
    r"|points at #.*, which /guides/\S+/ does not have.*"
    r"|is not a link: .*|unknown scheme .*|'[\w+.-]+:' links are not published.*"
    r"|not a full web address.*|a target starting with // .*|the link has no target"
    r"|is neither a web address .*"
    r"|link to the guide's URL .*|cannot be shown: .*)",
    re.DOTALL,
)
"""The link check's refusal of a site path or #anchor that leads nowhere."""


def decode_line(line: str, number: int) -> str:
    """Decode one corpus line: literal text with \\\\, \\n, \\r, \\t, \\xHH and \\uHHHH escapes."""
    if "\\" in _ESCAPE.sub("", line):
        raise ValueError(f"{PAYLOAD_FILE.name}: line {number}: unknown backslash escape")

    def unescape(match: re.Match[str]) -> str:
        code = match.group(1)
        return _SIMPLE_ESCAPES.get(code) or chr(int(code[1:], 16))

    return _ESCAPE.sub(unescape, line)


def load_payloads() -> list[str]:
    """Return the corpus in file order."""
    lines = PAYLOAD_FILE.read_text("utf-8").split("\n")
    return [
        decode_line(line, number)
        for number, line in enumerate(lines, 1)
        if line and not line.startswith("#")
    ]


PAYLOADS = load_payloads()


# ---------------------------------------------------------------------------------------------
# Inputs: one record and one guide per payload
# ---------------------------------------------------------------------------------------------


def fingerprint(tag: str, words: int = 40) -> str:
    """Return words unique to one guide, so the overlap audit never sees two probes as one page."""
    return " ".join(
        "w" + hashlib.sha256(f"{tag}-{index}".encode()).hexdigest()[:9] for index in range(words)
    )


def sha(text: str) -> str:
    """Return a 64-hex digest to stand in for a receipt's hash."""
    return hashlib.sha256(text.encode()).hexdigest()


def hostile_record(payload: str, tag: str) -> dict[str, Any]:
    """Return a record carrying `payload` in every string position that a record has."""
    p = payload
    return {
        "schemaVersion": 1,
        "operationId": tag,
        "checkedAt": CHECKED_AT,
        "status": p,
        "revisions": {"auditNote": p, p: p},
        "sourceReceipts": [
            {
                "name": p,
                "url": f"https://example.org/xss/{tag}/name",
                "bytes": 1,
                "sha256": sha(f"{tag}-name"),
                "note": p,
                p: [p, {"boundary": p}],
            },
            {
                "label": p,
                "role": "fallback name",
                "url": f"https://example.org/xss/{tag}/label",
                "bytes": 2,
                "sha256": sha(f"{tag}-label"),
            },
        ],
        "model": {"name": p, p: p, "aliases": [p, "plain"], "details": {p: p, "boundary": p}},
        "invariants": {p: True, "payloadShownAsText": False},
        "decision": {
            "classification": p,
            "rollback": p,
            "blockers": [p, "plain blocker"],
            p: p,
            "conditions": {"when": p, "boundary": p},
            "gates": [{"gate": p, "result": p, "claimBoundary": p}],
        },
        "runtimeBoundary": {"gpuRuns": 0, "modelCalls": 0, "note": p, p: p},
        "boundaries": p,
        "scope": {"what": p},
        "overlapAudit": {
            "nearestPages": [{"url": REGISTERED[0], "readerJob": p, "difference": p}],
            "closestPages": [REGISTERED[1]],
            "distinction": p,
            "nearestPage": REGISTERED[2],
            "nearestPageIntent": p,
            "newPageIntent": p,
            "auditorNote": p,
            p: p,
            "distinctIntent": True,
        },
        "hostileText": p,
        "hostileItems": [p, "plain item"],
        "hostileFacts": {"value": p, "verdict": p, p: p, "list": [p, "x"], "auditBoundary": p},
        "hostileRows": [
            {"value": p, p: p, "result": p, "boundary": p},
            {"value": "second row", "claimBoundary": p, "notes": [p, "x"], "nested": {p: p}},
        ],
        "hostileKeyed": {p: {"on": p, "off": 1}, "other": {"on": "plain", "off": 2}},
        "hostileMixed": [p, {"label": p, p: p}],
        "hostileNested": {
            "l1": {
                "l2": {
                    "l3": {"l4": {"l5": {"l6": {"l7": {p: p, "transferWarning": p, "l8": [p]}}}}}
                }
            }
        },
        p: {"value": p, "inner": {p: [p], "boundary": p}},
        "probeFingerprint": fingerprint(tag),
    }


def front_matter(fields: dict[str, Any]) -> str:
    """Return YAML front matter, every value double-quoted and escaped, checked by reading back."""
    text = yaml.safe_dump(
        fields, default_style='"', allow_unicode=False, width=1_000_000, sort_keys=False
    )
    assert yaml.safe_load(text) == fields, text
    return f"---\n{text}---\n"


def longest_run(text: str, character: str) -> int:
    """Return the length of the longest run of `character` in `text`."""
    return max((len(run) for run in re.findall(f"{re.escape(character)}+", text)), default=0)


def hostile_guide(payload: str, tag: str, targets: bool = True) -> tuple[str, dict[str, str]]:
    """Return a guide file holding `payload` in every Markdown position, and its front matter.

    Without `targets` the payload is left out of link targets, image sources, reference
    definitions and autolinks (for a payload that the link check refuses as a dead site path).
    """
    p = payload
    words = fingerprint(tag, 4).split()
    front = {
        "title": f"{p} ({tag})",  # payloads alike but for case or spacing: not a duplicate title
        "description": f"{p} (probe {tag} {words[0]} {words[1]})",
        "slug": tag,
        "record": tag,
        "reader_job": f"{p} (check {tag} {words[2]} {words[3]})",
        "published": "2026-01-16",
    }
    ticks = "`" * (longest_run(p, "`") + 1)
    fence = "`" * max(3, longest_run(p, "`") + 1)
    cell = p.replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    info = (p.splitlines() or [""])[0].replace("`", "")  # a fence's info string has no backtick
    # Code comes first: a payload such as "```" can open a block that swallows what follows.
    text_blocks = [
        f"## Probe {tag}",
        f"{fence}xssfence\n{p}\n{fence}",
        f"{fence}{info}\ncode under info string {tag}\n{fence}",
        f"Code span {tag}: {ticks} {p} {ticks}",
        p,
        f"Inline {p} inline.",
        f"[{p}](https://example.org/xss/{tag})",
        f"![{cell}](https://example.org/xss/{tag}.png)",
        f"## Heading {p}",
        f"| Probe | Value |\n| --- | --- |\n| {tag} | {cell} |",
        f"> {p}",
        f"- {p}",
    ]
    target_blocks = [
        f"[link {tag}]({p})",
        f"[pointy {tag}](<{p}>)",
        f"![image {tag}]({p})",
        f"[reference {tag}][ref-{tag}] and ![image reference {tag}][img-{tag}]",
        f"[ref-{tag}]: {p}",
        f"[img-{tag}]: {p}",
        f"<{p}>",
    ]
    body = "\n\n".join(text_blocks + (target_blocks if targets else [])) + "\n"
    return front_matter(front) + body, front


def new_project(make_project: Callable[..., Project], name: str) -> Project:
    """Return the `unseen` fixture project without its record: the probes are the only guides."""
    project = make_project("unseen", name)
    (project.root / "records" / "unseen.json").unlink()
    return project


# ---------------------------------------------------------------------------------------------
# Assertions on the built output
# ---------------------------------------------------------------------------------------------


def normalized_url(value: str) -> str:
    """Return an attribute value as a browser reads its scheme: unescaped, no blanks, lower case."""
    previous = None
    while previous != value:
        previous, value = value, html.unescape(value)
    kept = (
        character
        for character in value
        if not character.isspace() and unicodedata.category(character) not in ("Cc", "Cf")
    )
    return "".join(kept).lower()


def attribute_values(value: str | list[str]) -> list[str]:
    """Return an attribute's values (BeautifulSoup splits a few attributes into lists)."""
    return list(value) if isinstance(value, list) else [value]


def shown(where: str, tag: Tag) -> tuple[str, str]:
    """Return where an offending element is, for an assertion message."""
    return where, str(tag)[:300]


def template_widget(tag: Tag, where: str) -> bool:
    """Return whether an element belongs to markup the templates own outright: the header's
    search form (GET to /search/), chart drawings inside figure.chart, the search page's
    noscript note. Payload text can reach none of these as markup."""
    if tag.name in SEARCH_FORM_ELEMENTS:
        form = tag if tag.name == "form" else tag.find_parent("form")
        return (
            form is not None and form.get("action") == "/search/" and form.get("role") == "search"
        )
    if tag.name in CHART_ELEMENTS:
        return tag.find_parent("figure", class_="chart") is not None
    return tag.name == "noscript" and where == "search/index.html"


def assert_inert(page: BeautifulSoup, where: str) -> None:
    """Nothing in a built page can run script, load a frame, restyle the page or navigate away.

    One pass over every element; assertion messages are only built when one fails.
    """
    for tag in page.find_all(True):
        if tag.name == "script" and tag.get("type") == "application/ld+json":
            # Data, never run: it must parse as JSON and hold no '<' that could end the element.
            assert "<" not in tag.string and json.loads(tag.string), shown(where, tag)
        elif tag.name == "script":
            src = str(tag.get("src", ""))
            assert src.startswith(("/assets/", "/pagefind/")), shown(where, tag)
        elif template_widget(tag, where):
            pass
        else:
            assert tag.name not in FORBIDDEN_ELEMENTS, shown(where, tag)
            assert tag.name in ALLOWED_ELEMENTS, shown(where, tag)
        if tag.name == "meta":
            assert not tag.has_attr("http-equiv"), shown(where, tag)
        if tag.name == "link":
            rel = attribute_values(tag.get("rel", []))
            assert rel in (["canonical"], ["icon"], ["stylesheet"], ["alternate"]), shown(
                where, tag
            )
            if rel == ["alternate"]:
                assert tag["href"] == "/atom.xml", shown(where, tag)
            elif rel != ["canonical"]:
                assert str(tag["href"]).startswith(("/assets/", "/pagefind/")), shown(where, tag)
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), shown(where, tag)
            if name not in URL_ATTRIBUTES:
                continue
            for item in attribute_values(value):
                assert not normalized_url(item).startswith(DANGEROUS_SCHEMES), shown(where, tag)
                if name in ("href", "src"):
                    assert item.startswith(SAFE_LINK_PREFIXES), shown(where, tag)
                    assert not item.startswith("//"), shown(where, tag)


def built_pages(out: Path) -> dict[str, BeautifulSoup]:
    """Parse every HTML file of a built site."""
    pages = {path.relative_to(out).as_posix(): soup(path) for path in sorted(out.rglob("*.html"))}
    assert pages, f"no HTML files in {out}"
    return pages


def as_read(text: str) -> str:
    """Return text as an HTML reader gets it: control characters published as U+FFFD, and CR
    LF and lone CR as LF (the input stream's newline normalisation, which reading the file as
    text also does)."""
    return CONTROLS.sub("\ufffd", text).replace("\r\n", "\n").replace("\r", "\n")


def markdown_text(payload: str) -> str:
    """Return a payload as Markdown keeps it in code: as published (`as_read`)."""
    return as_read(payload)


def texts(scope: Tag | None, name: str, class_: str | None = None) -> list[str]:
    """Return the text of every `name` element (of a class) inside `scope`."""
    assert scope is not None
    return [tag.get_text() for tag in scope.find_all(name, class_=class_)]


def assert_shown_as_text(page: BeautifulSoup, payload: str, front: dict[str, str]) -> None:
    """The payload reads back, character for character, as text where it was put."""
    p = as_read(payload)
    title, description, job = (
        as_read(front[key]) for key in ("title", "description", "reader_job")
    )
    head = page.head
    assert head is not None
    assert texts(head, "title") == [f"{title} · {SITE_TITLE}"]
    meta = {str(tag.get("name") or tag.get("property")): tag.get("content") for tag in head("meta")}
    assert meta["description"] == description
    assert meta["og:title"] == f"{title} · {SITE_TITLE}"
    header = page.find("header", class_="guide-header")
    assert texts(header, "h1") == [title]
    assert texts(header, "p", "reader-job") == [f"Use this page to: {job}"]
    assert p in texts(header, "code")  # the audit status
    assert texts(page.find("section", class_="decision"), "code", "classification") == [p]
    heading = page.find(id="hostile-text")
    assert heading is not None
    assert texts(heading.parent, "p", "fact") == [p]
    assert texts(page.find("table", class_="sources-table"), "span", "source-name") == [p] * 2
    nearby = texts(page.find("ul", class_="nearby-list"), "p")
    assert f"How this guide differs: {p}" in nearby
    prose = page.find("div", class_="prose")
    assert texts(prose, "code", "language-xssfence") == [markdown_text(p) + "\n"]
    if "\n" not in p:
        assert markdown_text(p) in texts(prose, "code")  # the code span
    if "7*7" in p:
        assert p in page.get_text()  # the literal template text, never its value


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


def test_corpus_is_large_distinct_and_covers_every_vector_family() -> None:
    assert len(PAYLOADS) >= 200
    assert len(set(PAYLOADS)) == len(PAYLOADS)
    assert all(1 <= len(payload) <= 100 for payload in PAYLOADS)
    text = "\n".join(PAYLOADS)
    for marker in (
        "<script>",
        "<SCRIPT>",
        "onerror=",
        "onload=",
        "onmouseover=",
        "ontoggle=",
        "javascript:",
        "JAVASCRIPT:",
        "vbscript:",
        "data:text/html",
        "java\tscript:",
        "&#106;avascript:",
        "&#x6A;",
        "&colon;",
        "%3A",
        "<svg",
        "<math",
        "srcdoc",
        "<base href",
        "http-equiv",
        "<object",
        "<embed",
        "<form action",
        "@import",
        "expression(",
        "{{ 7*7 }}",
        "{% raw %}",
        "${7*7}",
        "<%= 7*7 %>",
        "[x](javascript:alert(1))",
        "[x]( javascript:alert(1))",
        "[x](<javascript:alert(1)>)",
        "[r]: javascript:",
        "<javascript:alert(1)>",
        "![x](javascript:",
        "![x](data:image/svg+xml;base64,",
        "```",
        "\u202e",
        "\u2066",
        "\u2069",
        "\u200b",
        "\ufeff",
    ):
        assert marker in text, marker


def build_report(project: Project) -> tuple[int, dict[str, Any]]:
    """Build with the JSON report on stdout; return the exit code and the report."""
    result = project.run("--format", "json")
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def errors_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the error findings of a report."""
    return [finding for finding in report["findings"] if finding["severity"] == "error"]


@pytest.mark.parametrize("group", range(GROUPS))
def test_payloads_in_every_position_are_inert_text(
    group: int, make_project: Callable[..., Project]
) -> None:
    project = new_project(make_project, f"xss-{group}")
    cases = {}
    for index, payload in enumerate(PAYLOADS[group::GROUPS]):
        tag = f"xss-g{group}-p{index:02d}"
        project.save_record(f"{tag}.json", hostile_record(payload, tag))
        text, front = hostile_guide(payload, tag)
        project.write(f"content/{tag}.md", text)
        cases[tag] = (payload, front)

    code, report = build_report(project)

    # A payload in a link target is published only as a web address, a site path or an
    # #anchor; anything else (another scheme, a dead site path, a target Markdown cannot
    # parse) is refused with a finding at its line. Such a guide is built again without its
    # link targets, so every other position of that payload is still checked.
    refused = {}
    for finding in errors_of(report):
        tag = Path(finding["source"]).stem
        assert finding["source"] == f"content/{tag}.md" and tag in cases, finding
        assert finding["check"] == "link", finding
        assert PROSE_LINK_ERROR.fullmatch(finding["message"]), finding["message"]
        refused[tag] = cases[tag][0]
    assert code == (1 if refused else 0)
    if refused:
        for tag, payload in refused.items():
            project.write(f"content/{tag}.md", hostile_guide(payload, tag, targets=False)[0])
        code, report = build_report(project)
        # A payload that is itself a Markdown link or autolink ("[x](java\u200bscript:...)",
        # "<vbscript:...>") is a link in
        # every text position too: refused at its line like any other, and left out of the
        # rest of this test (its record positions are checked by the URL test below).
        for finding in errors_of(report):
            tag = Path(finding["source"]).stem
            assert PROSE_LINK_ERROR.fullmatch(finding["message"]), finding["message"]
            if tag in cases:
                assert re.search(r"\[|<[a-z]", cases[tag][0], re.I), cases[tag][0]
                del cases[tag]
                (project.root / f"content/{tag}.md").unlink()
                (project.root / f"records/{tag}.json").unlink()
        code, report = build_report(project)
        assert code == 0, [f["message"] for f in errors_of(report)]
    pages = built_pages(project.out)
    assert len(pages) == len(cases) + 5  # home, guides index, tags index, search, 404
    for where, page in pages.items():
        assert_inert(page, where)
    for tag, (payload, front) in cases.items():
        assert_shown_as_text(pages[f"guides/{tag}/index.html"], payload, front)
    index_titles = [a.get_text() for a in pages["guides/index.html"].select("article h3 a")]
    assert sorted(index_titles) == sorted(as_read(front["title"]) for _, front in cases.values())


def url_record(payloads: list[str], tag: str) -> dict[str, Any]:
    """Return a record whose receipt and nearest-page URLs are built from the payloads.

    Receipt 2i is `https://example.org/?q=` + payload i, receipt 2i+1 the raw payload i.
    """
    receipts = []
    for index, payload in enumerate(payloads):
        for kind, url in (("query", "https://example.org/?q=" + payload), ("raw", payload)):
            receipts.append(
                {
                    "name": f"{kind} {index}",
                    "url": url,
                    "bytes": index + 1,
                    "sha256": sha(f"{tag}-{kind}-{index}"),
                }
            )
    return {
        "schemaVersion": 1,
        "operationId": tag,
        "checkedAt": CHECKED_AT,
        "status": tag,
        "revisions": {},
        "sourceReceipts": receipts,
        "model": {"name": "probe"},
        "invariants": {},
        "decision": {"classification": "probe-only"},
        "overlapAudit": {
            "nearestPages": [{"url": payload, "difference": "probe"} for payload in payloads],
            "closestPages": list(payloads),
        },
    }


@pytest.mark.parametrize("group", range(URL_GROUPS))
def test_payload_urls_fail_verification_or_are_plain_links(
    group: int, make_project: Callable[..., Project]
) -> None:
    project = new_project(make_project, f"xss-urls-{group}")
    payloads = PAYLOADS[group::URL_GROUPS]
    tag = f"xss-urls-g{group}"
    record = url_record(payloads, tag)
    project.save_record(f"{tag}.json", record)

    code, report = build_report(project)

    refused: set[int] = set()
    nearest: dict[str, int] = {}
    for finding in errors_of(report):
        assert finding["source"] == f"records/{tag}.json", finding
        if finding["check"] == "verify":
            path, _, message = finding["message"].partition(": ")
            match = re.fullmatch(r"sourceReceipts\.(\d+)\.url", path)
            assert match is not None, finding
            assert message.startswith("expected an http(s) URL, found "), finding
            refused.add(int(match.group(1)))
        elif finding["check"] == "link":
            # A nearest page that is a site path is linked by its canonical, which is dead.
            (url,) = finding["related"]
            assert url.startswith("https://glm52.ai/"), finding
        else:
            assert finding["check"] == "nearest-page", finding
            (url,) = finding["related"]
            nearest[url] = nearest.get(url, 0) + 1
    assert code == 1
    # No payload names a page of this site: each nearest page (listed twice) is refused twice.
    assert nearest == dict.fromkeys(payloads, 2)
    for index, payload in enumerate(payloads):
        # A raw payload that is not even shaped like an http(s) URL must fail verification.
        if not payload.lower().startswith(("https://", "http://")):
            assert 2 * index + 1 in refused, payload
    assert len(refused) >= len(payloads) // 2

    # Without the refused receipts and the nearest pages, the rest builds and is linked as is.
    record["sourceReceipts"] = [
        receipt for index, receipt in enumerate(record["sourceReceipts"]) if index not in refused
    ]
    del record["overlapAudit"]
    project.save_record(f"{tag}.json", record)
    code, report = build_report(project)
    assert code == 0, errors_of(report)
    pages = built_pages(project.out)
    for where, page in pages.items():
        assert_inert(page, where)
    page = pages[f"guides/{tag}/index.html"]
    links = [(a["href"], a.get_text()) for a in page.select("table.sources-table a.url")]
    published = [CONTROLS.sub("\ufffd", receipt["url"]) for receipt in record["sourceReceipts"]]
    assert links == [(url, url) for url in published]


REPORT_LINES = (
    re.compile(r"/\S*"),  # a page heading of the check report
    re.compile(r"\(site\)"),  # the heading of site-wide findings
    re.compile(r"  (error|warning|info) +\S+ +records/unseen\.json: .*"),
    re.compile(r"  warning deploy +content/registry\.json: https://glm52\.ai/\S+ is live but .*"),
    re.compile(r"records/unseen\.json: .*"),  # an input error
    re.compile(r"\d+ error\(s\), \d+ warning\(s\), \d+ note\(s\) across \d+ page\(s\)\."),
    re.compile(r"Aborted: .*"),
)
FORGED = "evil\n  error   verify          records/forged.json: a forged finding\n"
TERMINAL_ESCAPES = "\x1b[2J\x1b[31m"
"""Clear the screen, then print in red: what a record's text must not do to the terminal."""


@pytest.mark.parametrize("where", ["nearest-page URL", "internal link", "invariant name"])
def test_record_text_cannot_forge_report_lines_or_reach_the_terminal(
    where: str, make_project: Callable[..., Project]
) -> None:
    project = make_project("unseen")
    record = project.record("unseen.json")
    payload = FORGED + TERMINAL_ESCAPES
    if where == "nearest-page URL":
        record["overlapAudit"]["nearestPages"].append({"url": payload, "difference": "probe"})
    elif where == "internal link":
        record["hostileLink"] = "https://glm52.ai/" + TERMINAL_ESCAPES + "x"
    else:
        record["invariants"][payload] = "not a boolean"
    project.save_record("unseen.json", record)

    result = project.run()

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.rstrip("\n").split("\n")
    assert all(any(shape.fullmatch(line) for shape in REPORT_LINES) for line in lines), lines
    controls = [c for c in result.stderr if c != "\n" and unicodedata.category(c) == "Cc"]
    assert controls == [], result.stderr
