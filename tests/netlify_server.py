"""Serve a built site the way Netlify does, for browser tests: headers, redirects, 404.

`serve_netlify(site_dir)` starts a real threaded HTTP server on a free loopback port in a
background thread and yields its base URL (`http://127.0.0.1:PORT`, no trailing slash). It
reads the repository's `netlify.toml` (or the one given) and, like Netlify:

- adds the headers of every `[[headers]]` block whose `for` pattern matches the request path
  (exact paths, `*` splats and `:placeholder` segments; a header set by two blocks gets both
  values, comma-joined);
- applies `_redirects` in the site root first, then `[[redirects]]` from netlify.toml, first
  match wins; a rule applies only when no file exists at the path unless it is forced
  (`301!` / `force = true`; a folder's `index.html` shadows its path without the slash too);
  a rule's path matches with or without its trailing slash (`/a/` matches `/a`), as on Netlify;
  3xx answer with `Location`, 200 rewrites, 404 serves the target with status 404; `:splat`
  and `:placeholder` are substituted in the target;
- proxies a rewrite (`200`) whose target is an absolute `http(s)://` URL: fetches it (same
  method, the request's query string appended, redirects not followed) and answers with the
  upstream's status, headers and body, without netlify.toml's headers (Netlify applies custom
  headers only to files it serves itself). Only loopback hosts (`127.0.0.0/8`, `::1`,
  `localhost`) are ever fetched: any other host, or an upstream that does not answer, gets 502,
  so a test can never reach the internet;
- serves `index.html` for folder paths, redirects a folder path without its slash to the path
  with it (Netlify's pretty URLs), and answers missing paths with `/404.html` and status 404;
- never serves `_redirects` / `_headers` (Netlify consumes them) or anything outside the site.

`site_under_test()` is the built site the browser and validity tests check: the session build
of the seed project (`tests/fixtures/seed-site/`, see conftest) as Netlify would publish it,
or any folder named by `TEST_SITE_DIR` (`python build.py --out /tmp/s && TEST_SITE_DIR=/tmp/s
pytest tests/test_a11y.py`).
`pages_under_test()` lists its HTML pages as URL paths, at collection time.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import os
import re
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
NETLIFY_TOML = ROOT / "netlify.toml"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
    ".woff2": "font/woff2",
    ".wasm": "application/wasm",
    ".pagefind": "application/octet-stream",
    ".pf_meta": "application/octet-stream",
    ".pf_fragment": "application/octet-stream",
    ".pf_index": "application/octet-stream",
}
NOT_PUBLISHED = frozenset({"_redirects", "_headers"})
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
PROXY_TIMEOUT = 10
# Connection-level headers a proxy does not pass on (RFC 9110 section 7.6.1), plus the ones
# this server sets itself.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "date",
        "server",
    }
)


@dataclass(frozen=True)
class HeaderRule:
    """One `[[headers]]` block: a path pattern and the headers it adds."""

    pattern: re.Pattern[str]
    values: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Redirect:
    """One redirect rule, from `_redirects` or `[[redirects]]`."""

    pattern: re.Pattern[str]
    to: str
    status: int
    force: bool


def path_pattern(netlify_path: str, any_trailing_slash: bool = False) -> re.Pattern[str]:
    """Compile a Netlify path (`/a/*`, `/b/:id`, `/exact/`) into a full-match regex.

    With `any_trailing_slash` (redirect rules), a path that does not end in a splat matches
    with or without its trailing slash, as Netlify's redirect engine does.
    """
    trailing = any_trailing_slash and netlify_path != "/" and not netlify_path.endswith("*")
    if trailing:
        netlify_path = netlify_path.rstrip("/")
    parts = []
    for token in re.split(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)", netlify_path):
        if token == "*":
            parts.append("(?P<splat>.*)")
        elif token.startswith(":"):
            parts.append(f"(?P<{token[1:]}>[^/]+)")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts) + ("/?" if trailing else ""))


def load_rules(config: Path) -> tuple[list[HeaderRule], list[Redirect]]:
    """Read the `[[headers]]` and `[[redirects]]` blocks of a netlify.toml."""
    data = tomllib.loads(config.read_text("utf-8")) if config.exists() else {}
    headers = [
        HeaderRule(
            path_pattern(block["for"]),
            tuple((str(k), str(v)) for k, v in block.get("values", {}).items()),
        )
        for block in data.get("headers", [])
    ]
    redirects = []
    for block in data.get("redirects", []):
        unsupported = set(block) - {"from", "to", "status", "force"}
        if unsupported:
            raise NotImplementedError(f"netlify.toml [[redirects]]: {sorted(unsupported)}")
        redirects.append(
            Redirect(
                path_pattern(block["from"], any_trailing_slash=True),
                block["to"],
                int(block.get("status", 301)),
                bool(block.get("force", False)),
            )
        )
    return headers, redirects


def parse_redirects_file(text: str) -> list[Redirect]:
    """Parse a Netlify `_redirects` file: `/from /to [status[!]]` per line, `#` comments."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) not in (2, 3) or (
            len(fields) == 3 and not re.fullmatch(r"\d{3}!?", fields[2])
        ):
            raise NotImplementedError(f"_redirects line {number}: unsupported rule {raw!r}")
        status = fields[2] if len(fields) == 3 else "301"
        rules.append(
            Redirect(
                path_pattern(fields[0], any_trailing_slash=True),
                fields[1],
                int(status.rstrip("!")),
                status.endswith("!"),
            )
        )
    return rules


@dataclass(frozen=True)
class Proxied:
    """A rewrite to another origin: the absolute URL to fetch."""

    url: str


def is_absolute(target: str) -> bool:
    """True for an `http://` or `https://` URL (a proxy target), False for a site path."""
    return urlsplit(target).scheme in ("http", "https")


def is_loopback(host: str | None) -> bool:
    """True when `host` is this machine: `localhost`, `127.0.0.0/8` or `::1`."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def fetch_upstream(method: str, url: str, query: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """Fetch a proxy target (loopback only, redirects not followed): status, headers, body.

    Anything that is not a loopback http(s) URL, and an upstream that cannot be reached or
    answers garbage, gives a 502 with a one-line plain-text body saying why.
    """
    split = urlsplit(url)
    if not is_loopback(split.hostname):
        return _bad_gateway(f"refusing to proxy to {split.hostname!r}: only loopback hosts")
    connection_class = (
        http.client.HTTPSConnection if split.scheme == "https" else http.client.HTTPConnection
    )
    target = split.path or "/"
    if split.query or query:
        target += "?" + "&".join(part for part in (split.query, query) if part)
    connection = connection_class(split.hostname, split.port, timeout=PROXY_TIMEOUT)
    try:
        connection.request(method, target, headers={"User-Agent": "netlify-emulator-proxy"})
        response = connection.getresponse()
        body = response.read()
        headers = [
            (name, value) for name, value in response.getheaders() if name.lower() not in HOP_BY_HOP
        ]
        if method == "HEAD" and response.getheader("Content-Length"):
            headers.append(("Content-Length", response.getheader("Content-Length", "0")))
        return response.status, headers, body
    except (OSError, http.client.HTTPException) as error:
        return _bad_gateway(f"upstream {url} did not answer: {error}")
    finally:
        connection.close()


def _bad_gateway(reason: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """A 502 answer with `reason` as its plain-text body."""
    return 502, [("Content-Type", "text/plain; charset=utf-8")], f"Bad Gateway: {reason}\n".encode()


def _target(rule: Redirect, match: re.Match[str]) -> str:
    """The rule's destination with `:splat` and `:placeholder` filled in."""
    groups = match.groupdict()
    return re.sub(r":([A-Za-z_][A-Za-z0-9_]*)", lambda m: groups.get(m.group(1)) or "", rule.to)


class NetlifyHandler(BaseHTTPRequestHandler):
    """Answer GET and HEAD from the site folder with Netlify's rules."""

    server: NetlifyServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet; the tests report what matters."""

    def _respond(self, send_body: bool) -> None:
        path = unquote(urlsplit(self.path).path) or "/"
        resolved = self._resolve(path)
        if isinstance(resolved, Proxied):
            self._proxy(resolved.url, send_body)
            return
        status, location, file = resolved
        headers: dict[str, str] = {}
        for rule in self.server.header_rules:
            if rule.pattern.fullmatch(path):
                for name, value in rule.values:
                    headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if location is not None:
            body = b""
            headers["Location"] = location
        else:
            body = file.read_bytes() if file else b"Not Found"
            content_type = CONTENT_TYPES.get(file.suffix if file else ".txt")
            headers["Content-Type"] = content_type or "application/octet-stream"
        headers["Content-Length"] = str(len(body))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _proxy(self, url: str, send_body: bool) -> None:
        """Answer with what the upstream at `url` answers (status, headers, body)."""
        status, headers, body = fetch_upstream(self.command, url, urlsplit(self.path).query)
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        length = next((v for n, v in headers if n.lower() == "content-length"), None)
        self.send_header("Content-Length", length if not send_body and length else str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def _resolve(self, path: str) -> tuple[int, str | None, Path | None] | Proxied:
        """Return (status, redirect location or None, file to send or None), or the URL of a
        proxy rewrite to fetch."""
        existing = self._file(path)
        folder = None if path.endswith("/") else self._file(path + "/")
        for rule in self.server.redirects:
            match = rule.pattern.fullmatch(path)
            if match is None or ((existing or folder) is not None and not rule.force):
                continue
            target = _target(rule, match)
            if rule.status in REDIRECT_CODES:
                return rule.status, target, None
            if is_absolute(target):
                return Proxied(target)
            rewritten = self._file(urlsplit(target).path)
            if rewritten is not None:
                return rule.status, None, rewritten
        if existing is not None:
            return 200, None, existing
        if folder is not None:
            return 301, path + "/", None
        return 404, None, self._file("/404.html")

    def _file(self, path: str) -> Path | None:
        """The regular file inside the site that `path` names (folders: their index.html)."""
        if "\x00" in path or "\\" in path or not path.startswith("/"):
            return None
        if any(segment in (".", "..") for segment in path.split("/")):
            return None
        relative = path.strip("/")
        if relative in NOT_PUBLISHED:
            return None
        root = self.server.site_dir
        candidate = root / relative / "index.html" if path.endswith("/") else root / relative
        candidate = candidate.resolve()
        if not candidate.is_relative_to(root) or not candidate.is_file():
            return None
        return candidate


class NetlifyServer(ThreadingHTTPServer):
    """A threaded server holding the site folder and the Netlify rules."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, site_dir: Path, config: Path) -> None:
        self.site_dir = site_dir.resolve()
        self.header_rules, toml_redirects = load_rules(config)
        redirects_file = self.site_dir / "_redirects"
        file_redirects = (
            parse_redirects_file(redirects_file.read_text("utf-8"))
            if redirects_file.is_file()
            else []
        )
        self.redirects = file_redirects + toml_redirects
        super().__init__(("127.0.0.1", 0), NetlifyHandler)


@contextmanager
def serve_netlify(site_dir: Path, config: Path = NETLIFY_TOML) -> Iterator[str]:
    """Serve `site_dir` with Netlify's rules from `config`; yield `http://127.0.0.1:PORT`."""
    server = NetlifyServer(Path(site_dir), config)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def html_pages(site_dir: Path) -> list[str]:
    """The URL path of every HTML page of a built site (`/`, `/guides/x/`, `/404.html`)."""
    return sorted(
        url_path(path.relative_to(site_dir).as_posix()) for path in site_dir.rglob("*.html")
    )


def url_path(relative: str) -> str:
    """Turn a site-relative file path into the URL path Netlify serves it at."""
    if relative == "index.html":
        return "/"
    if relative.endswith("/index.html"):
        return "/" + relative.removesuffix("index.html")
    return "/" + relative


SITE_DIR_ENV = "TEST_SITE_DIR"


@functools.cache
def pages_under_test() -> tuple[str, ...]:
    """The URL paths of the HTML pages to test, known at collection time (for parametrizing).

    With `TEST_SITE_DIR=/some/built/site` set, the pages of that folder; else the pages the
    seed project (`tests/fixtures/seed-site/`) renders (rendered without writing). A build
    that fails here gives one placeholder page, so the tests still run and the `site` fixture
    reports the real error.
    """
    if os.environ.get(SITE_DIR_ENV):
        return tuple(html_pages(Path(os.environ[SITE_DIR_ENV])))
    from site_builder.config import BuildConfig
    from site_builder.pipeline import build
    from tests.conftest import seed_root

    try:
        report = build(BuildConfig.for_root(seed_root()), write=False)
    except Exception:
        return ("/build-failed/",)
    return tuple(sorted(url_path(p.path) for p in report.pages if p.path.endswith(".html")))


def site_under_test(request: pytest.FixtureRequest) -> Path:
    """The folder to serve: `TEST_SITE_DIR` if set, else the session `site` build, which is
    what Netlify publishes (`python build.py` writes the Pagefind bundle itself)."""
    if os.environ.get(SITE_DIR_ENV):
        return Path(os.environ[SITE_DIR_ENV]).resolve()
    return Path(request.getfixturevalue("site")).resolve()
