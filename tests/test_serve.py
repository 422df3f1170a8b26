"""The live preview, tested against a real server process on a free loopback port."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from bs4 import BeautifulSoup

from tests.conftest import Project
from tests.preview_helpers import EventStream, Preview, quiet_between, start_preview

RECORD = "records/003_d837ec4df0827390.json"
GUIDE = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
OLD_VERDICT = "fail-closed-low-load-canary-before-tp-dp-ep-promotion"


@pytest.fixture
def preview(project: Project) -> Iterator[Preview]:
    """A running preview of a throwaway project copy; stopped (Ctrl-C) after the test."""
    running = start_preview(project.root)
    try:
        yield running
    finally:
        running.stop()


def edit_record(project: Project, old: str, new: str) -> None:
    """Replace text in the sequence-parallel record, as an editor saving the file would."""
    path = project.root / RECORD
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new), "utf-8")


def test_pages_and_assets_are_served_with_their_content_types(preview: Preview) -> None:
    status, headers, body = preview.get(GUIDE)
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    css = BeautifulSoup(body, "html.parser").find("link", rel="stylesheet")["href"]
    assert headers["Cache-Control"] == "no-store", "a page is fetched again on every reload"
    status, headers, _ = preview.get(css)
    assert (status, headers["Content-Type"]) == (200, "text/css; charset=utf-8")
    # Its name changes with its bytes: a reload need not fetch it again (as deployed).
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert preview.get("/sitemap.xml")[1]["Content-Type"] == "application/xml; charset=utf-8"
    assert preview.get("/sitemap.xml")[1]["Cache-Control"] == "no-store"
    assert preview.get("/robots.txt")[1]["Content-Type"] == "text/plain; charset=utf-8"
    assert preview.get("/guides")[0] == 301


def test_search_tags_and_feed_are_served_in_the_preview(preview: Preview) -> None:
    status, _, body = preview.get("/search/")
    assert status == 200
    scripts = [s["src"] for s in BeautifulSoup(body, "html.parser").find_all("script", src=True)]
    for src in scripts[:2]:
        assert preview.get(src)[0] == 200, src
    entry = json.loads(preview.get("/pagefind/pagefind-entry.json")[2])
    assert entry["languages"]["en"]["page_count"] == 4
    assert preview.get("/tags/vllm/")[0] == 200
    assert preview.get("/atom.xml")[1]["Content-Type"] == "application/xml; charset=utf-8"


def test_missing_path_gets_the_404_page(preview: Preview) -> None:
    status, _, body = preview.get("/guides/no-such-guide/")
    assert status == 404
    assert "Page not found" in body.decode()


@pytest.mark.parametrize(
    "path",
    [
        "/../../../../etc/passwd",
        "/guides/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "/..%2f..%2f..%2fetc/passwd",
        "/guides/..%5c..%5cetc%5cpasswd",
        "/guides\\..\\..\\etc\\passwd",
        "/index.html%00.css",
        "/%00",
        "/%ff%fe",
        "etc/passwd",
    ],
)
def test_traversal_attempts_get_a_4xx_never_a_file(preview: Preview, path: str) -> None:
    status, _, body = preview.get(path)
    assert 400 <= status < 500
    assert b"root:" not in body


def test_requests_for_another_host_are_refused(preview: Preview) -> None:
    assert preview.get("/", host="evil.example")[0] == 403
    assert preview.get("/", host=f"evil.example:{preview.port}")[0] == 403
    assert preview.get("/", host=f"localhost:{preview.port}")[0] == 200


def test_reload_script_is_in_responses_and_no_site_is_written(
    preview: Preview, project: Project
) -> None:
    body = preview.get(GUIDE)[2].decode()
    [script] = re.findall(r'<script src="(/__livereload\.js\?v=\w+)"', body)
    status, headers, _ = preview.get(script)
    assert status == 200
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable", "named by its bytes"
    assert not list(preview.workdir.rglob("*.html")), "the preview serves its site from memory"
    assert not project.out.exists(), "the preview never writes _site/"


def test_editing_a_record_reloads_tabs_and_serves_the_new_value(
    preview: Preview, project: Project
) -> None:
    stream = EventStream(preview, version="1")
    edit_record(project, OLD_VERDICT, "promote-after-the-edited-canary")
    stream.wait_for("reload")
    page = BeautifulSoup(preview.get(GUIDE)[2], "html.parser")
    assert page.select_one("code.classification").text == "promote-after-the-edited-canary"
    stream.close()


def test_broken_record_keeps_the_last_good_page_and_shows_the_error_until_fixed(
    preview: Preview, project: Project
) -> None:
    path = project.root / RECORD
    good = path.read_text("utf-8")
    path.write_text(good[: len(good) // 2], "utf-8")
    preview.wait_for_rebuilds(2)
    status, _, body = preview.get(GUIDE)
    page = BeautifulSoup(body, "html.parser")
    assert status == 200
    assert OLD_VERDICT in page.get_text()
    banner = page.find(id="glm52-build-error")
    assert banner is not None
    assert RECORD in banner.get_text() and "invalid JSON" in banner.get_text()
    assert any(line.startswith(f"Rebuild failed: {RECORD}: line ") for line in preview.stderr)
    assert preview.process.poll() is None, "the server survives bad input"
    path.write_text(good, "utf-8")
    preview.wait_for_rebuilds(3)
    page = BeautifulSoup(preview.get(GUIDE)[2], "html.parser")
    assert page.find(id="glm52-build-error") is None


def test_a_burst_of_saves_gives_one_rebuild(preview: Preview, project: Project) -> None:
    verdict = OLD_VERDICT
    for attempt in range(3):  # again if the machine (running tests side by side) stalled
        before, saves = preview.rebuilds(), []
        for index in range(5):
            edit_record(project, verdict, f"burst-{attempt}-{index}")
            verdict = f"burst-{attempt}-{index}"
            saves.append(time.monotonic())
            time.sleep(0.02)
        preview.wait_for_rebuilds(before + 1)
        time.sleep(2.5)
        if not quiet_between(saves):
            break
    assert preview.rebuilds() == before + 1
    page = BeautifulSoup(preview.get(GUIDE)[2], "html.parser")
    assert page.select_one("code.classification").text == verdict


def test_eight_open_tabs_all_reload(preview: Preview, project: Project) -> None:
    tabs = [EventStream(preview, version="1") for _ in range(8)]
    edit_record(project, OLD_VERDICT, "eight-tabs")
    for tab in tabs:
        tab.wait_for("reload")
        tab.close()


def test_two_hundred_clients_make_four_thousand_requests_without_error(preview: Preview) -> None:
    paths = ["/", GUIDE, "/guides/", "/sitemap.xml", "/robots.txt"]

    def client(number: int) -> int:
        errors = 0
        connection = http.client.HTTPConnection("127.0.0.1", preview.port, timeout=30)
        for request in range(20):
            try:
                connection.request("GET", paths[(number + request) % len(paths)])
                response = connection.getresponse()
                response.read()
                errors += response.status != 200
            except (OSError, http.client.HTTPException):
                errors += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", preview.port, timeout=30)
        connection.close()
        return errors

    with ThreadPoolExecutor(max_workers=200) as pool:
        assert sum(pool.map(client, range(200))) == 0


def test_ctrl_c_stops_cleanly_and_removes_the_temporary_folders(project: Project) -> None:
    running = start_preview(project.root)
    assert running.workdir.is_dir()
    assert running.stop() == 0
    assert not running.workdir.exists()
    assert any("Stopped." in line for line in running.stdout)


def test_a_port_in_use_is_a_clear_error_naming_it(project: Project) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, str(project.root / "build.py"), "--serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1
    assert f"127.0.0.1:{port} is already in use" in result.stderr
    assert "Traceback" not in result.stderr
