"""The preview's HTTP/1.1 server: strict, bounded and quiet, for clients on this machine.

Safe by construction: answers only requests addressed to the bound host (DNS-rebinding
guard), serves only regular files inside a site folder, and refuses `..`, encoded dots,
backslashes, NUL bytes and symlinks that leave the folder with a 4xx.

Local clients cannot stall it: one thread per connection and at most MAX_CONNECTIONS of them;
a connection must send a whole request (head and body) within READ_TIMEOUT seconds of opening
or of its last answer; a connection beyond the bound takes the place of the one that has waited
longest for its request, and is refused with 503 only when every connection is being answered.
The request line and headers are parsed strictly: malformed gets 400, a long request line 414,
a large header block 431, and the connection is closed. No request ever prints a traceback.
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.client import HTTPMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from site_builder.preview.state import PreviewState

LISTEN_BACKLOG = 1024
"""Connections the kernel queues before the server accepts them."""
MAX_CONNECTIONS = 256
"""Connections served at once (one thread each); more make room or get 503."""
READ_TIMEOUT = 10.0
"""Seconds a connection may take to send a whole request, counted from its opening or its
last answer (so also how long an idle keep-alive connection stays open); and the most any one
read or write may block."""
MAX_REQUEST_LINE = 4096
"""Bytes of the request line (method, path and version); a longer one gets 414."""
MAX_HEADER_BYTES = 16384
"""Bytes of all request header lines together; more gets 431."""
MAX_BODY_BYTES = 65536
"""Bytes of a request body read and thrown away (the preview takes none); more gets 413."""
LINGER_SECONDS = 1.0
"""Seconds spent reading what a client still sends after an error answer, so that closing
the connection does not reset it before the client reads the answer."""
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\n"
    b"Connection: close\r\n\r\n"
)
TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
REQUEST_LINE = re.compile(rb"(" + TOKEN + rb") (/[\x21-\x7e]*) (HTTP/1\.[01])\r?\n")
HEADER_LINE = re.compile(rb"(" + TOKEN + rb"):([\t\x20-\x7e\x80-\xff]*)\r?\n")
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


class PreviewServer(ThreadingHTTPServer):
    """A threaded HTTP server bound to one host, holding the preview state; bounded."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    allow_reuse_address = True

    def __init__(
        self, host: str, port: int, state: PreviewState, handler: type[StrictHandler]
    ) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._open: dict[socket.socket, float | None] = {}
        """Each open connection: since when it waits for a request, or None while answered."""
        super().__init__((host, port), handler)
        self.host = host
        self.allowed_hosts = _allowed_hosts(host, self.server_address[1])

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.server_address[1]}/"

    def process_request(self, request: socket.socket, client_address: object) -> None:
        """Serve the connection in a thread; beyond the bound, make room or refuse it (503)."""
        with self._lock:
            if len(self._open) >= MAX_CONNECTIONS:
                waiting = {key: since for key, since in self._open.items() if since is not None}
                if waiting:
                    oldest = min(waiting, key=waiting.__getitem__)
                    del self._open[oldest]
                    _hang_up(oldest)
            refused = len(self._open) >= MAX_CONNECTIONS
            if not refused:
                self._open[request] = time.monotonic()
        if refused:
            with contextlib.suppress(OSError):
                request.sendall(REFUSAL)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def mark(self, connection: socket.socket, waiting: bool) -> None:
        """Record that a connection waits for a request (from now) or is being answered."""
        with self._lock:
            if connection in self._open:
                self._open[connection] = time.monotonic() if waiting else None

    def service_actions(self) -> None:
        """Hang up on connections that did not send a whole request within READ_TIMEOUT."""
        late = time.monotonic() - READ_TIMEOUT
        with self._lock:
            for key in [
                key for key, since in self._open.items() if since is not None and since < late
            ]:
                del self._open[key]
                _hang_up(key)

    def shutdown_request(self, request: socket.socket) -> None:
        """Forget the connection and close it."""
        with self._lock:
            self._open.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: object, client_address: object) -> None:
        """Report a failed request in one line; a client hanging up is not worth one."""
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            sys.stderr.write(f"Preview request failed: {type(error).__name__}: {error}\n")


def _hang_up(connection: socket.socket) -> None:
    """Wake the connection's thread from its read with end of input; it closes the socket."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


def _allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Return the Host header values this server answers: the bound name or address."""
    names = {host, f"[{host}]"} if ":" in host else {host}
    if host in {"127.0.0.1", "::1", "localhost"}:
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return frozenset({f"{name}:{port}" for name in names} | names)


class StrictHandler(BaseHTTPRequestHandler):
    """Read each request strictly and within the limits; `answer` serves a GET or HEAD."""

    server: PreviewServer
    protocol_version = "HTTP/1.1"
    server_version = "glm52-preview"
    sys_version = ""
    timeout = READ_TIMEOUT

    def answer(self, head: bool) -> None:
        """Answer the GET (or HEAD) request for `self.path` from an allowed Host."""
        raise NotImplementedError

    def handle_one_request(self) -> None:
        """Read one request and answer it; on anything malformed answer 4xx and close."""
        self.command, self.request_version, self.requestline = "", "HTTP/1.1", ""
        self.close_connection = True
        self.server.mark(self.connection, waiting=True)
        try:
            status = self._read_request()
            self.server.mark(self.connection, waiting=False)
            if status is None:
                return
            if status != HTTPStatus.OK:
                self.send_error(status)
                self._linger()
            elif self.command not in {"GET", "HEAD"}:
                self.send_error(HTTPStatus.NOT_IMPLEMENTED)
            elif self.headers.get("Host", "").lower() not in self.server.allowed_hosts:
                self.send_text(HTTPStatus.FORBIDDEN, "Forbidden: unexpected Host header\n")
            else:
                self.answer(head=self.command == "HEAD")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _read_request(self) -> HTTPStatus | None:
        """Read the request line, headers and body; return OK, an error, or None if gone."""
        line = self.rfile.readline(MAX_REQUEST_LINE + 1)
        if line in {b"\r\n", b"\n"}:
            line = self.rfile.readline(MAX_REQUEST_LINE + 1)
        if len(line) > MAX_REQUEST_LINE:
            return HTTPStatus.REQUEST_URI_TOO_LONG
        if not line.endswith(b"\n"):
            return None
        self.requestline = line.rstrip(b"\r\n").decode("latin-1")
        request = REQUEST_LINE.fullmatch(line)
        if request is None:
            return HTTPStatus.BAD_REQUEST
        self.command, self.path, self.request_version = (
            part.decode("ascii") for part in request.groups()
        )
        self.headers = headers = HTTPMessage()
        size = 0
        while True:
            field = self.rfile.readline(MAX_HEADER_BYTES + 1 - size)
            size += len(field)
            if size > MAX_HEADER_BYTES:
                return HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
            if not field.endswith(b"\n"):
                return None
            if field in {b"\r\n", b"\n"}:
                break
            parsed = HEADER_LINE.fullmatch(field)
            if parsed is None:
                return HTTPStatus.BAD_REQUEST
            headers[parsed[1].decode()] = parsed[2].strip(b" \t").decode("latin-1")
        tokens = {token.strip().lower() for token in headers.get("Connection", "").split(",")}
        self.close_connection = "close" in tokens or self.request_version == "HTTP/1.0"
        return self._read_body(headers)

    def _read_body(self, headers: HTTPMessage) -> HTTPStatus | None:
        """Read and drop a Content-Length body, so that it is never taken for a request."""
        lengths = set(headers.get_all("Content-Length", []))
        if len(headers.get_all("Host", [])) > 1 or "Transfer-Encoding" in headers:
            return HTTPStatus.BAD_REQUEST
        if not lengths:
            return HTTPStatus.OK
        length = lengths.pop()
        if lengths or not (length.isascii() and length.isdigit()):
            return HTTPStatus.BAD_REQUEST
        if int(length) > MAX_BODY_BYTES:
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE
        return HTTPStatus.OK if len(self.rfile.read(int(length))) == int(length) else None

    def _linger(self) -> None:
        """Half-close after an error and read what the client still sends, for a while."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER_SECONDS
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(65536):
                    return
        except OSError:
            return

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: the CLI prints rebuilds, not every request."""

    def send(
        self, status: HTTPStatus, kind: str, body: bytes, head: bool, cache: str = "no-store"
    ) -> None:
        """Send a complete answer, never cached unless `cache` says otherwise."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def send_text(self, status: HTTPStatus, text: str, head: bool = False) -> None:
        """Send a short plain-text answer."""
        self.send(status, TYPES[".txt"], text.encode(), head)
