"""Hostile text in records and prose is shown as text: nothing executes, nothing is evaluated."""

from __future__ import annotations

import json
from collections.abc import Callable

from site_builder.render.pages import CONTROLS, published_bytes
from tests.conftest import Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

RECORD = "unseen.json"
PAYLOADS = [
    "<script>alert('r1')</script>",
    '"><img src=x onerror=alert(2)>',
    "<svg onload=alert(3)>",
    "javascript:alert(4)",
    "{{ 7*7 }}",
    "{% raw %}x{% endraw %}",
    "\u202eevil\u202c",
]


def test_hostile_record_and_prose_text_is_escaped(make_project: Callable[..., Project]) -> None:
    project = make_project("unseen")
    record = project.record(RECORD)
    record["hostileSection"] = [{"value": payload, "boundary": payload} for payload in PAYLOADS]
    record["hostileKeys"] = {payload: payload for payload in PAYLOADS}
    record["decision"]["rollback"] = PAYLOADS[0]
    record["sourceReceipts"][0]["name"] = PAYLOADS[1]
    project.save_record(RECORD, record)
    front = (
        "---\n"
        'title: "<script>alert(6)</script>"\n'
        'description: "{{ 7*7 }} <b>bold</b>"\n'
        "slug: hostile\n"
        f"record: {record['operationId']}\n"
        'reader_job: "<img src=x onerror=alert(7)>"\n'
        "published: 2026-08-24\n"
        "---\n"
        "<script>alert(8)</script>\n\n"
    )
    links = "[x](javascript:alert(9)) [y](JAVASCRIPT:alert(10)) ![z](data:text/html,alert(11))\n\n"
    raw = "<a href='javascript:alert(12)' onclick='alert(13)'>raw</a> {{ 7*7 }}\n"
    project.write("content/hostile.md", front + links + raw)
    refused = project.run()
    # Each dangerous link target is refused at its line (11) and nothing is written.
    assert refused.returncode == 1 and not project.out.exists()
    for target in ("javascript:alert(9)", "JAVASCRIPT:alert(10)", "data:text/html,alert(11)"):
        assert f"content/hostile.md: line 11: '{target}'" in refused.stderr
    project.write("content/hostile.md", front + raw)
    result = project.run()
    assert result.returncode == 0, result.stderr
    page = soup(project.out / "guides" / "hostile" / "index.html")
    assert page.find_all("script", type=lambda kind: kind != "application/ld+json") == []
    for data in page.find_all("script", type="application/ld+json"):
        assert "<" not in data.string and "\\u003cscript\\u003e" in data.string
    assert page.find_all("img") == []
    assert page.find_all("svg") == []
    for tag in page.find_all(True):
        assert not [name for name in tag.attrs if name.lower().startswith("on")], tag.name
    for link in page.find_all(href=True):
        assert link["href"].startswith(("https://", "http://", "/", "#")), link["href"]
    text = page.get_text()
    assert "{{ 7*7 }}" in text
    assert "<script>alert('r1')</script>" in text
    assert page.title.get_text().startswith("<script>alert(6)</script>")


def test_control_characters_in_records_are_published_as_replacement_characters(
    project: Project,
) -> None:
    write_probe_guide(project.root)
    record = project.root / "records" / "900_latency_probe.json"
    hostile = "a\x00b\x01c\x08d\x0be\x0cf\x1bg\x7fh\x85i\x9fj\tk"
    data = probe_record(controlProbe={"note": hostile, "rows": [{"name": hostile, "ms": 1}]})
    data["status"] = f"held {hostile}"
    record.write_text(json.dumps(data, indent=2), "utf-8")
    result = project.run()
    assert result.returncode == 0, result.stderr
    written = [path for path in project.out.rglob("*") if path.is_file()]
    for path in written:
        if "pagefind" not in path.parts:
            text = path.read_bytes().decode("utf-8")
            assert not CONTROLS.search(text), path
    page = (project.out / "guides" / SLUG / "index.html").read_text("utf-8")
    assert "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\ufffdh\ufffdi\ufffdj\tk" in page


def test_every_control_character_and_no_other_becomes_the_replacement_character() -> None:
    """Each C0 and C1 control but tab, line feed and carriage return, alone in text, becomes
    U+FFFD; other characters, ASCII or not (those UTF-8 writes with the same lead byte as
    the C1 controls, like a no-break space or a plus-minus sign), stay."""
    for code in range(0x2000):
        char = chr(code)
        text = f"a {char} ± \u00a0b"
        expected = text.replace(char, "\ufffd") if CONTROLS.fullmatch(char) else text
        assert published_bytes(text) == expected.encode("utf-8"), hex(code)
    assert sum(bool(CONTROLS.fullmatch(chr(code))) for code in range(0x2000)) == 62
