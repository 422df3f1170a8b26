"""`python build.py --serve`: bind, build, serve, watch, and clean up on Ctrl-C.

What the preview answers (over the strict, bounded server of `server.py`): the files of the
current site with the reload script, the error banner and the warnings injected into HTML
pages; live reload by Server-Sent Events; and, for a short grace period after a rebuild, the
fingerprinted assets of the sites it replaced, so pages still loading find their stylesheet.
"""

from __future__ import annotations

import errno
import hashlib
import html
import json
import mimetypes
import select
import signal
import socket
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from types import FrameType
from urllib.parse import parse_qs, urlsplit

from site_builder.config import BuildConfig
from site_builder.errors import ServeError
from site_builder.preview.builds import Previewer
from site_builder.preview.served import INDEX, ServedSite
from site_builder.preview.server import TYPES, PreviewServer, StrictHandler
from site_builder.preview.state import KEPT

FOREVER = "public, max-age=31536000, immutable"
"""How long a browser may keep a fingerprinted asset (its name changes with its bytes), as
netlify.toml says for the deployed site: a reload then fetches the page alone."""
OTHER_WARNINGS = 20
"""How many warnings about other pages the warnings box lists on each page."""
KEEPALIVE_SECONDS = 5.0
"""Seconds between comments on an idle live-reload stream."""
LEFT_SECONDS = 0.2
"""How often a live-reload stream looks whether its tab closed it (navigated away or closed):
until it is gone, the preview counts the tab as open and, after a save, waits up to
`builds.TABS_SECONDS` for it to come back before running the checks and the search index."""
KEPT_PATHS = tuple(f"/{folder}/" for folder in KEPT)
"""Where a request for a file the site lacks may be answered by a replaced site's file."""
LIVERELOAD_JS = (Path(__file__).parent / "livereload.js").read_bytes()
LIVERELOAD_URL = f"/__livereload.js?v={hashlib.sha256(LIVERELOAD_JS).hexdigest()[:10]}"
"""The script's address names its bytes, so a browser keeps it (FOREVER) until it changes."""


def serve(
    config: BuildConfig,
    host: str,
    port: int,
    log: Callable[[str], None],
    on_ready: Callable[[str], None],
) -> None:
    """Serve the live preview until interrupted; remove every temporary folder afterwards."""
    previewer = Previewer(config, log)
    try:
        try:
            server = PreviewServer(host, port, previewer.state, PreviewHandler)
        except OSError as error:
            in_use = error.errno == errno.EADDRINUSE
            reason = "is already in use" if in_use else f"cannot be used: {error.strerror or error}"
            raise ServeError(f"{host}:{port} {reason}; choose another --port or --host") from None
        stop = threading.Event()
        try:
            signal.signal(signal.SIGTERM, _interrupt)  # from the first build on
            log(f"Serving from memory; search index built in {previewer.workdir} (removed on exit)")
            previewer.rebuild()
            watcher = threading.Thread(target=previewer.watch_forever, args=(stop,), daemon=True)
            watcher.start()
            on_ready(server.url)
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            server.server_close()
    finally:
        previewer.close()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Treat SIGTERM like Ctrl-C, so a stopped preview still cleans up."""
    raise KeyboardInterrupt


class PreviewHandler(StrictHandler):
    """Answer one request of the preview."""

    def answer(self, head: bool) -> None:
        """Serve the live-reload stream and script, or a file of the site being shown."""
        parts = urlsplit(self.path)
        if parts.path == "/__livereload":
            query = parse_qs(parts.query)
            self._stream_events(query.get("version", [""])[0], query.get("index", [""])[0])
            return
        if parts.path == "/__livereload.js":
            self.send(HTTPStatus.OK, TYPES[".js"], LIVERELOAD_JS, head, FOREVER)
            return
        state = self.server.state
        site, version, errors, warnings = state.site, state.version, state.errors, state.warnings
        if site is None:
            body = _page("Build failed", _banner(errors), version).encode()
            self.send(HTTPStatus.SERVICE_UNAVAILABLE, TYPES[".html"], body, head)
            return
        target, status = site.resolve(parts.path)
        if status == HTTPStatus.NOT_FOUND and parts.path.startswith(KEPT_PATHS):
            for old in state.recent():  # a page of a replaced site still loading its files
                target, status = old.resolve(parts.path)
                if target is not None:
                    site = old
                    break
        if status == HTTPStatus.MOVED_PERMANENTLY:
            self.send_response(status)
            query = f"?{parts.query}" if parts.query else ""
            self.send_header("Location", f"{parts.path}/{query}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if target is None:
            self._send_error_page(status, site, head)
            return
        body = site.file(target) or b""
        name = target.rsplit("/", 1)[-1]
        suffix = name[name.rfind(".") :] if "." in name else ""
        kind = TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
        if kind.startswith("text/html"):
            shown = (version, state.indexed)
            body = _inject(body.decode("utf-8"), shown, errors, warnings, _url(target)).encode()
        self.send(status, kind, body, head, FOREVER if target.startswith("assets/") else "no-store")

    def _send_error_page(self, status: HTTPStatus, site: ServedSite, head: bool) -> None:
        """Send the site's 404 page for a missing file, a short text for any other refusal."""
        page = site.file("404.html") if status == HTTPStatus.NOT_FOUND else None
        if page is None:
            self.send_text(status, f"{status.value} {status.phrase}\n", head)
            return
        state = self.server.state
        shown = (state.version, state.indexed)
        body = _inject(page.decode("utf-8"), shown, state.errors, state.warnings)
        self.send(status, TYPES[".html"], body.encode(), head)

    def _stream_events(self, client_version: str, client_indexed: str) -> None:
        """Hold a Server-Sent Events stream; send `reload` whenever the site or error changes,
        and `search` whenever a new search index is served for the same pages.

        The tab says which version and search index it shows; an empty one means the current
        one, and anything that is not a number gets 400. A stream that names its version is a
        page's: it counts as an open tab (`PreviewState.wait_for_tabs`) until it is told to
        reload."""
        state = self.server.state
        if not all(_is_count(value) for value in (client_version, client_indexed)):
            self.send_text(
                HTTPStatus.BAD_REQUEST, "400 Bad Request: version or index is not a number\n"
            )
            return
        version = int(client_version) if client_version else state.version
        indexed = int(client_indexed) if client_indexed else state.indexed
        self.close_connection = True
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"retry: 1000\n\n")
        tab = bool(client_version)  # a page's script names the version it shows
        if tab:
            state.tab_opened(version)
        written = time.monotonic()
        try:
            while True:
                current, now_indexed = state.wait(version, indexed, LEFT_SECONDS)
                if current != version:
                    if tab:  # told to reload: the tab comes back with a new stream
                        state.tab_told()
                        tab = False
                    event = f"event: reload\ndata: {json.dumps(current)}\n\n"
                elif now_indexed != indexed:
                    event = f"event: search\ndata: {json.dumps(now_indexed)}\n\n"
                elif _closed_by_peer(self.connection):
                    return
                elif time.monotonic() - written >= KEEPALIVE_SECONDS:
                    event = ": keep-alive\n\n"
                else:
                    continue
                self.wfile.write(event.encode())
                version, indexed, written = current, now_indexed, time.monotonic()
        finally:
            if tab:
                state.tab_told()


def _closed_by_peer(connection: socket.socket) -> bool:
    """Whether the other end closed the connection (a tab sends nothing on its stream, so it
    is readable only once closed)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _is_count(value: str) -> bool:
    """Whether a query value is empty or a number written in ASCII digits."""
    return not value or (value.isascii() and value.isdigit())


def _inject(
    page: str,
    version: tuple[int, int],
    errors: tuple[str, ...],
    warnings: tuple[tuple[str, str], ...] = (),
    here: str = "",
) -> str:
    """Add the reload script (naming the `version` of the site and of its search index the
    page is served from), the error banner after a failed rebuild, and the warnings (those
    about the page at `here` first)."""
    site, indexed = version
    addition = (
        _banner(errors)
        + _warnings(warnings, here)
        + f'<script src="{LIVERELOAD_URL}" data-version="{site}" data-index="{indexed}"></script>'
    )
    index = page.rfind("</body>")
    return page[:index] + addition + page[index:] if index != -1 else page + addition


def _url(path: str) -> str:
    """Return the site URL of a file: `guides/x/index.html` is `/guides/x/`."""
    folder, _, name = path.rpartition("/")
    return f"/{folder}/".replace("//", "/") if name == INDEX else f"/{path}"


def _banner(errors: tuple[str, ...]) -> str:
    """Return the visible error banner of the last rebuild: a build failure (the last good site
    is shown) or errors its site checks found (its new pages are shown)."""
    if not errors:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in errors)
    return (
        '<div id="glm52-build-error" role="alert" style="position:fixed;z-index:2147483647;'
        "top:0;left:0;right:0;max-height:50vh;overflow:auto;background:#7f1d1d;color:#fff;"
        'font:14px/1.4 ui-monospace,monospace;padding:12px 16px;border-bottom:4px solid #fca5a5">'
        "<strong>Errors: the site shown is the last one that built; fix the files named.</strong>"
        f'<ul style="margin:6px 0 0;padding-left:20px">{items}</ul></div>'
    )


def _warnings(warnings: tuple[tuple[str, str], ...], here: str) -> str:
    """Return the warnings of the served build: a count that opens into the list. Every
    warning about the page at `here` is listed, then OTHER_WARNINGS of the rest (a large
    site has thousands: `--audit` lists them all)."""
    if not warnings:
        return ""
    mine = [line for page, line in warnings if page == here]
    others = [line for page, line in warnings if page != here]
    listed = [*mine, *others[:OTHER_WARNINGS]]
    items = "".join(f"<li>{html.escape(line)}</li>" for line in listed)
    more = len(warnings) - len(listed)
    rest = (
        f'<p style="margin:6px 0 0">{more:,} more on other pages: '
        "<code>python build.py --audit</code> lists every one.</p>"
        if more
        else ""
    )
    return (
        '<details id="glm52-build-warnings" role="status" style="position:fixed;'
        "z-index:2147483646;bottom:0;right:0;max-width:min(48rem,100vw);max-height:60vh;"
        "overflow:auto;background:#fef3c7;color:#1f2937;font:14px/1.4 ui-monospace,monospace;"
        'padding:8px 14px;border:2px solid #b45309;border-radius:6px 0 0 0">'
        f'<summary style="cursor:pointer;font-weight:bold">{len(warnings)} warning(s) in this '
        f"build, {len(mine)} on this page</summary>"
        f'<ul style="margin:6px 0 0;padding-left:20px">{items}</ul>{rest}'
        '<p style="margin:6px 0 0">Fix the input, or acknowledge a warning with a reason '
        "(front matter <code>acknowledge:</code> or content/acknowledged.yaml).</p></details>"
    )


def _page(title: str, body: str, version: int) -> str:
    """Return a minimal page for when no good build exists yet."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}"
        f"</title></head><body>{body}<p>Fix the error and save: this page reloads.</p>"
        f'<script src="{LIVERELOAD_URL}" data-version="{version}"></script></body></html>'
    )
