"""A stand-in for the legacy origin that `legacy_origin` proxy rules point at.

`serve_upstream()` starts a threaded HTTP server on a free loopback port in a background thread
and yields an `Upstream`: its base URL (`http://127.0.0.1:PORT`, no trailing slash) and the
paths it was asked for, in order. It answers GET and HEAD of any path with 200 and a small HTML
page naming the path (`<p id="upstream-path">/guides/x/</p>`), except a path containing
`missing`, which gets 404. Every answer carries `X-Upstream: legacy-origin` so a test can tell a
proxied answer from one served out of the site folder.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

UPSTREAM_HEADER = "X-Upstream"
UPSTREAM_MARK = "legacy-origin"


def upstream_body(path: str) -> bytes:
    """The page the upstream answers for `path` (404 pages say so)."""
    kind = "missing" if "missing" in path else "page"
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>legacy origin</title>"
        f'</head><body><p id="upstream-kind">{kind}</p>'
        f'<p id="upstream-path">{html.escape(path)}</p></body></html>'
    ).encode()


@dataclass
class Upstream:
    """A running upstream: its base URL and the paths requested so far."""

    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def paths(self) -> list[str]:
        """The URL paths asked for (GET and HEAD), in order."""
        with self.lock:
            return [path for _, path in self.requests]

    def record(self, method: str, path: str) -> None:
        """Note one request."""
        with self.lock:
            self.requests.append((method, path))

    def clear(self) -> None:
        """Forget the requests so far."""
        with self.lock:
            self.requests.clear()


class UpstreamHandler(BaseHTTPRequestHandler):
    """Answer every path with 200 and a page naming it; `missing` paths with 404."""

    server: UpstreamServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet."""

    def _respond(self, send_body: bool) -> None:
        path = unquote(urlsplit(self.path).path) or "/"
        self.server.upstream.record(self.command, path)
        body = upstream_body(path)
        self.send_response(404 if "missing" in path else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header(UPSTREAM_HEADER, UPSTREAM_MARK)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


class UpstreamServer(ThreadingHTTPServer):
    """A threaded server that records what it was asked for."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), UpstreamHandler)
        self.upstream = Upstream(f"http://127.0.0.1:{self.server_address[1]}")


@contextmanager
def serve_upstream() -> Iterator[Upstream]:
    """Run the stand-in legacy origin; yield it (`.url`, `.paths`)."""
    server = UpstreamServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    try:
        yield server.upstream
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
