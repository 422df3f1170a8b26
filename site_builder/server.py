"""The preview's HTTP server: static files of the current site, live reload, error banner.

Safe by construction: answers only requests addressed to the bound host (DNS-rebinding
guard), serves only regular files inside the current site folder, and refuses `..`, encoded
dots, backslashes, NUL bytes and symlinks that leave the folder with a 4xx. Threaded, with a
deep listen backlog, so hundreds of concurrent clients are served without errors.
"""

from __future__ import annotations

import html
import json
import mimetypes
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from site_builder.preview import PreviewState

LISTEN_BACKLOG = 1024
KEEPALIVE_SECONDS = 15.0
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".webmanifest": "application/manifest+json",
}
LIVERELOAD_JS = b"""(() => {
  const version = document.currentScript.dataset.version;
  const events = new EventSource("/__livereload?version=" + encodeURIComponent(version));
  events.addEventListener("reload", () => { events.close(); location.reload(); });
})();
"""


class PreviewServer(ThreadingHTTPServer):
    """A threaded HTTP server bound to one host, holding the preview state."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    allow_reuse_address = True

    def __init__(self, host: str, port: int, state: PreviewState) -> None:
        self.state = state
        super().__init__((host, port), PreviewHandler)
        self.host = host
        self.allowed_hosts = _allowed_hosts(host, self.server_address[1])

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.server_address[1]}/"


def _allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Return the Host header values this server answers: the bound name or address."""
    names = {host, f"[{host}]"} if ":" in host else {host}
    if host in {"127.0.0.1", "::1", "localhost"}:
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return frozenset({f"{name}:{port}" for name in names} | names)


class PreviewHandler(BaseHTTPRequestHandler):
    """Serve one request of the preview."""

    server: PreviewServer
    protocol_version = "HTTP/1.1"
    server_version = "glm52-preview"
    sys_version = ""

    def do_GET(self) -> None:
        self._respond(head=False)

    def do_HEAD(self) -> None:
        self._respond(head=True)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: the CLI prints rebuilds, not every request."""

    def _respond(self, head: bool) -> None:
        if self.headers.get("Host", "").lower() not in self.server.allowed_hosts:
            self._send_text(HTTPStatus.FORBIDDEN, "Forbidden: unexpected Host header\n", head)
            return
        parts = urlsplit(self.path)
        if parts.path == "/__livereload":
            self._stream_events(parse_qs(parts.query).get("version", [""])[0])
            return
        if parts.path == "/__livereload.js":
            self._send(HTTPStatus.OK, TYPES[".js"], LIVERELOAD_JS, head, cache=False)
            return
        state = self.server.state
        site, version, errors, warnings = state.site, state.version, state.errors, state.warnings
        if site is None:
            body = _page("Build failed", _banner(errors), version).encode()
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, TYPES[".html"], body, head)
            return
        target, status = _resolve(site, parts.path)
        if status == HTTPStatus.MOVED_PERMANENTLY:
            self.send_response(status)
            self.send_header(
                "Location", parts.path + "/" + (f"?{parts.query}" if parts.query else "")
            )
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if target is None:
            if status != HTTPStatus.NOT_FOUND:
                self._send_text(status, f"{status.value} {status.phrase}\n", head)
                return
            target = site / "404.html"
            if not target.is_file():
                self._send_text(status, "404 Not Found\n", head)
                return
        body = target.read_bytes()
        kind = (
            TYPES.get(target.suffix)
            or mimetypes.guess_type(target.name)[0]
            or "application/octet-stream"
        )
        if kind.startswith("text/html"):
            body = _inject(body.decode("utf-8"), version, errors, warnings).encode()
        self._send(status, kind, body, head)

    def _send(
        self, status: HTTPStatus, kind: str, body: bytes, head: bool, cache: bool = False
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store" if not cache else "max-age=3600")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_text(self, status: HTTPStatus, text: str, head: bool) -> None:
        self._send(status, TYPES[".txt"], text.encode(), head)

    def _stream_events(self, client_version: str) -> None:
        """Hold a Server-Sent Events stream; send `reload` whenever the site or error changes."""
        self.close_connection = True
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        state = self.server.state
        version = int(client_version) if client_version.isdigit() else state.version
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while True:
                current = state.wait(version, KEEPALIVE_SECONDS)
                if current != version:
                    self.wfile.write(f"event: reload\ndata: {json.dumps(current)}\n\n".encode())
                    self.wfile.flush()
                    version = current
                else:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
        except (TimeoutError, BrokenPipeError, ConnectionResetError, OSError):
            return


def _resolve(site: Path, raw_path: str) -> tuple[Path | None, HTTPStatus]:
    """Map a request path to a file inside `site`, or say why not (403, 404, 301)."""
    try:
        path = unquote(raw_path, errors="strict")
    except UnicodeDecodeError:
        return None, HTTPStatus.BAD_REQUEST
    if "\x00" in path or "\\" in path or not path.startswith("/"):
        return None, HTTPStatus.BAD_REQUEST
    segments = [segment for segment in path.split("/") if segment]
    if any(segment in {".", ".."} for segment in segments):
        return None, HTTPStatus.FORBIDDEN
    root = site.resolve()
    target = root.joinpath(*segments)
    try:
        resolved = target.resolve(strict=False)
    except (OSError, RuntimeError):
        return None, HTTPStatus.FORBIDDEN
    if not resolved.is_relative_to(root):
        return None, HTTPStatus.FORBIDDEN
    if resolved.is_dir():
        if not path.endswith("/"):
            return None, HTTPStatus.MOVED_PERMANENTLY
        resolved = resolved / "index.html"
    if not resolved.is_file():
        return None, HTTPStatus.NOT_FOUND
    return resolved, HTTPStatus.OK


def _inject(
    page: str, version: int, errors: tuple[str, ...], warnings: tuple[str, ...] = ()
) -> str:
    """Add the reload script, the error banner after a failed rebuild, and the warnings."""
    addition = (
        _banner(errors)
        + _warnings(warnings)
        + f'<script src="/__livereload.js" data-version="{version}"></script>'
    )
    index = page.rfind("</body>")
    return page[:index] + addition + page[index:] if index != -1 else page + addition


def _banner(errors: tuple[str, ...]) -> str:
    """Return the visible error banner shown while the last rebuild failed."""
    if not errors:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in errors)
    return (
        '<div id="glm52-build-error" role="alert" style="position:fixed;z-index:2147483647;'
        "top:0;left:0;right:0;max-height:50vh;overflow:auto;background:#7f1d1d;color:#fff;"
        'font:14px/1.4 ui-monospace,monospace;padding:12px 16px;border-bottom:4px solid #fca5a5">'
        "<strong>Build failed: showing the last good site.</strong>"
        f'<ul style="margin:6px 0 0;padding-left:20px">{items}</ul></div>'
    )


def _warnings(warnings: tuple[str, ...]) -> str:
    """Return the warnings of the served build: a count that opens into the list."""
    if not warnings:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in warnings)
    return (
        '<details id="glm52-build-warnings" role="status" style="position:fixed;'
        "z-index:2147483646;bottom:0;right:0;max-width:min(48rem,100vw);max-height:60vh;"
        "overflow:auto;background:#fef3c7;color:#1f2937;font:14px/1.4 ui-monospace,monospace;"
        'padding:8px 14px;border:2px solid #b45309;border-radius:6px 0 0 0">'
        f'<summary style="cursor:pointer;font-weight:bold">{len(warnings)} warning(s) in this '
        "build</summary>"
        f'<ul style="margin:6px 0 0;padding-left:20px">{items}</ul>'
        '<p style="margin:6px 0 0">Fix the input, or acknowledge a warning with a reason '
        "(front matter <code>acknowledge:</code> or content/acknowledged.yaml).</p></details>"
    )


def _page(title: str, body: str, version: int) -> str:
    """Return a minimal page for when no good build exists yet."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}"
        f"</title></head><body>{body}<p>Fix the error and save: this page reloads.</p>"
        f'<script src="/__livereload.js" data-version="{version}"></script></body></html>'
    )
