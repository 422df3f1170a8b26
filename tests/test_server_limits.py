"""Local clients cannot stall or crash the preview server: real server, real sockets."""

from __future__ import annotations

import contextlib
import http.client
import resource
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from site_builder.preview.server import READ_TIMEOUT
from tests.conftest import Project, copy_project
from tests.preview_helpers import Preview, start_preview

GUIDE = "/guides/glm-5-2-vllm-sequence-parallel-moe/"
SLOW_CLIENTS = 2000


@pytest.fixture(scope="module")
def preview(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Preview]:
    """One running preview of the seed project for the tests that do not edit it."""
    running = start_preview(copy_project(tmp_path_factory.mktemp("limits") / "project").root)
    try:
        yield running
    finally:
        running.stop()


def timed_get(preview: Preview, path: str, timeout: float) -> tuple[int, float]:
    """GET `path` on a new connection; return the status and the seconds it took."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", preview.port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        connection.close()


def exchange(preview: Preview, data: bytes, until: bytes = b"", timeout: float = 10) -> bytes:
    """Send raw bytes on a new connection; read until the server closes it (or `until`)."""
    received = b""
    with socket.create_connection(("127.0.0.1", preview.port), timeout=timeout) as sock:
        sock.sendall(data)
        while not (until and until in received) and (chunk := sock.recv(65536)):
            received += chunk
    return received


def responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split what a server sent on one connection into (status, headers, body) answers."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        status, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        found.append((int(status.split()[1]), headers, rest[:length]))
        data = rest[length:]
    return found


def status_of(preview: Preview, data: bytes) -> int:
    """Return the status of the one answer to a raw request."""
    return responses(exchange(preview, data))[0][0]


def no_traceback(preview: Preview, since: int) -> None:
    """Assert that the server printed no traceback after its first `since` lines."""
    time.sleep(0.3)
    assert not any("Traceback" in line for line in preview.stderr[since:]), preview.stderr


def test_slow_clients_holding_connections_do_not_stall_the_server(preview: Preview) -> None:
    printed = len(preview.stderr)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < SLOW_CLIENTS + 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, SLOW_CLIENTS + 512), hard))
    partial = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{preview.port}\r\n".encode()
    held: list[socket.socket] = []
    began = time.monotonic()
    try:
        for _ in range(SLOW_CLIENTS):
            sock = socket.create_connection(("127.0.0.1", preview.port), timeout=10)
            held.append(sock)
            sock.sendall(partial)
        status, _ = timed_get(preview, GUIDE, timeout=READ_TIMEOUT)
        # A server they stalled would answer only once it cut them off, READ_TIMEOUT after.
        assert (status, time.monotonic() - began < READ_TIMEOUT) == (200, True), "while held"
    finally:
        for sock in held:
            sock.close()
    status, seconds = timed_get(preview, GUIDE, timeout=READ_TIMEOUT)
    assert (status, seconds < READ_TIMEOUT / 2) == (200, True), "answered after they hung up"
    no_traceback(preview, printed)


def test_a_request_trickled_byte_by_byte_is_cut_off_after_the_read_timeout(
    preview: Preview,
) -> None:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", preview.port), timeout=5) as sock:
        with contextlib.suppress(OSError):
            for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"y" * 40:
                sock.sendall(bytes([byte]))
                time.sleep(0.5)
                if select.select([sock], [], [], 0)[0] and not sock.recv(1):
                    break
        seconds = time.monotonic() - started
    assert READ_TIMEOUT <= seconds < READ_TIMEOUT + 2


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/" + "a" * 300, 404),
        ("/guides/" + "b" * 300 + "/index.html", 404),
        ("/" + "c/" * 2500, 414),
        ("/assets/" + "d" * 5000 + ".css", 414),
    ],
)
def test_long_paths_get_a_status_not_a_dropped_connection(
    preview: Preview, target: str, expected: int
) -> None:
    printed = len(preview.stderr)
    request = (
        f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{preview.port}\r\nConnection: close\r\n\r\n"
    )
    assert status_of(preview, request.encode()) == expected
    no_traceback(preview, printed)


def test_a_header_block_over_the_limit_gets_431(preview: Preview) -> None:
    printed = len(preview.stderr)
    fields = "".join(f"X-Filler-{index}: {'x' * 1000}\r\n" for index in range(40))
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{preview.port}\r\n{fields}\r\n"
    assert status_of(preview, request.encode()) == 431
    no_traceback(preview, printed)


@pytest.mark.parametrize(
    "request_line",
    [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n",
        b"GET /\r\n",
        b"GET  / HTTP/1.1\r\n",
        b"GET / HTTP/2.0\r\n",
        b"GET http://evil.example/ HTTP/1.1\r\n",
        b"GET /\xff\xfe HTTP/1.1\r\n",
    ],
)
def test_a_malformed_request_line_gets_400(preview: Preview, request_line: bytes) -> None:
    printed = len(preview.stderr)
    host = f"Host: 127.0.0.1:{preview.port}\r\n\r\n".encode()
    assert status_of(preview, request_line + host) == 400
    no_traceback(preview, printed)


@pytest.mark.parametrize(
    "field",
    [b" folded: value", b"Bad Name: value", b"Host : x", b"NoColon", b"Content-Length: ten"],
)
def test_a_malformed_header_gets_400(preview: Preview, field: bytes) -> None:
    printed = len(preview.stderr)
    host = f"Host: 127.0.0.1:{preview.port}\r\n".encode()
    assert status_of(preview, b"GET / HTTP/1.1\r\n" + host + field + b"\r\n\r\n") == 400
    no_traceback(preview, printed)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("version=abc", b"HTTP/1.1 400"),
        ("version=-1", b"HTTP/1.1 400"),
        ("version=%C2%B2", b"HTTP/1.1 400"),
        ("version=1" + "0" * 30, b"event: reload"),
        ("version=", b"retry: 1000"),
        ("version=&index=abc", b"HTTP/1.1 400"),
        ("version=&index=-1", b"HTTP/1.1 400"),
        ("version=&index=1" + "0" * 30, b"event: search"),
    ],
)
def test_odd_live_reload_versions_get_a_clean_answer(
    preview: Preview, query: str, expected: bytes
) -> None:
    printed = len(preview.stderr)
    request = (
        f"GET /__livereload?{query} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{preview.port}\r\nConnection: close\r\n\r\n"
    )
    assert expected in exchange(preview, request.encode(), until=expected, timeout=5)
    no_traceback(preview, printed)


def test_a_get_body_is_never_answered_as_a_request(preview: Preview) -> None:
    host = f"Host: 127.0.0.1:{preview.port}\r\n"
    smuggled = f"GET /robots.txt HTTP/1.1\r\n{host}\r\n".encode()
    first = f"GET /sitemap.xml HTTP/1.1\r\n{host}Content-Length: {len(smuggled)}\r\n\r\n"
    second = f"GET {GUIDE} HTTP/1.1\r\n{host}Connection: close\r\n\r\n"
    answers = responses(exchange(preview, first.encode() + smuggled + second.encode()))
    assert [(status, headers["content-type"]) for status, headers, _ in answers] == [
        (200, "application/xml; charset=utf-8"),
        (200, "text/html; charset=utf-8"),
    ]


def test_a_replaced_stylesheet_stays_servable_for_a_grace_period(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    preview = start_preview(project.root)
    printed = 0
    try:
        old = stylesheet(preview)
        old_body = preview.get(old)[2]
        css = project.root / "templates/assets/style.css"
        css.write_text(css.read_text("utf-8") + "\n/* edited */\n", "utf-8")
        preview.wait_for_rebuilds(2, timeout=60)
        assert stylesheet(preview) != old
        edit_a_guide(project)  # a third site: the first one is no longer the previous one
        preview.wait_for_rebuilds(3, timeout=60)
        time.sleep(1)
        assert preview.get(old) == (200, preview.get(old)[1], old_body)
        assert preview.get(stylesheet(preview))[0] == 200
        assert preview.get(old.replace("style.", "nosuch."))[0] == 404
    finally:
        preview.stop()
    no_traceback(preview, printed)


def stylesheet(preview: Preview) -> str:
    """Return the stylesheet address the served guide page links."""
    page = BeautifulSoup(preview.get(GUIDE)[2], "html.parser")
    return page.find("link", rel="stylesheet")["href"]


def edit_a_guide(project: Project) -> None:
    """Append a sentence to a guide's prose, as an editor saving it would."""
    prose = next((project.root / "content").glob("glm-5-2-vllm-sequence-*.md"))
    prose.write_text(prose.read_text("utf-8") + "\nOne more sentence.\n", "utf-8")
