"""The built site answers the way the deploy promises, under the emulator and real netlify-cli.

One fixture project (the seed project from `make_project()`'s source) is changed the three
ways a live site migrates onto this builder, then built once with `python build.py`:

- `legacy_origin:` in content/site.yaml points at a stand-in legacy origin on a loopback port
  (tests/upstream_server.py), so the registry pages this site does not build are proxied there
  with Netlify 200 rules;
- `retired:` retires one registry page to a built guide (a 301);
- `static/guides/<registry page>/index.html` serves one registry page verbatim.

`_site` is then served by the Python emulator (tests/netlify_server.py) and by netlify-cli's
own server (`netlify dev --offline`, tests/netlify_cli.py), started once per module each, and
every test runs under both (ids `emulator` and `netlify_cli`; run only the real CLI with
`pytest tests/test_deploy_serving.py -k netlify_cli`). Requests never follow redirects:

- every `<loc>` of `_site/sitemap.xml` answers 200 itself, and the proxied ones were fetched
  from the legacy origin;
- every registry page answers 200 or a 301 to a page that answers 200, never 404;
- a path that is no page answers 404 with the site's 404 page;
- the retired page answers 301 to its guide and is not in the sitemap;
- the static page answers 200 with its file's bytes and is in the sitemap.

The last tests check the emulator's proxying itself on a toy site (no build, no CLI).
"""

from __future__ import annotations

import http.client
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.conftest import copy_project, run_build
from tests.netlify_cli import netlify_cli, serve_netlify_cli
from tests.netlify_server import NETLIFY_TOML, serve_netlify
from tests.upstream_server import UPSTREAM_HEADER, Upstream, serve_upstream

SITEMAP_NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
# The registry page retired to a built guide, and the one served verbatim from static/.
RETIRED = "/guides/glm-5-2-hicache-kv-offload/"
RETIRED_TO = "/guides/glm-5-2-sglang-weight-cache-daemon/"
STATIC = "/guides/glm-5-2-expert-parallelism/"
STATIC_BYTES = (
    b"<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
    b"<title>Expert parallelism (kept verbatim)</title></head>\n"
    b"<body><p>Served byte for byte from static/.</p></body></html>\n"
)
NOT_A_PAGE = "/guides/no-such-guide-anywhere/"


@dataclass(frozen=True)
class Deploy:
    """The built fixture project and the legacy origin its proxy rules point at."""

    root: Path
    site: Path
    base_url: str
    upstream: Upstream

    def registry_paths(self) -> list[str]:
        """The URL path of every page in content/registry.json."""
        data = json.loads((self.root / "content" / "registry.json").read_text("utf-8"))
        return sorted({self.path_of(entry["url"]) for entry in data["pages"]})

    def sitemap_paths(self) -> list[str]:
        """The URL path of every `<loc>` in _site/sitemap.xml, in order."""
        tree = ET.parse(self.site / "sitemap.xml")
        return [self.path_of(loc.text or "") for loc in tree.iterfind("sm:url/sm:loc", SITEMAP_NS)]

    def path_of(self, url: str) -> str:
        """`https://glm52.ai/guides/x/` -> `/guides/x/` (refusing other hosts)."""
        split = urlsplit(url)
        base = urlsplit(self.base_url)
        assert (split.scheme, split.netloc) == (base.scheme, base.netloc), url
        return split.path or "/"

    def has_file(self, path: str) -> bool:
        """True when the site folder holds the file Netlify serves for `path`."""
        relative = path.strip("/")
        target = self.site / relative / "index.html" if path.endswith("/") else self.site / relative
        return target.is_file()

    def proxied_paths(self) -> list[str]:
        """The registry pages with no file in the site and not retired: the legacy origin's."""
        return [p for p in self.registry_paths() if not self.has_file(p) and p != RETIRED]


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    """The stand-in legacy origin, up for the whole module."""
    with serve_upstream() as running:
        yield running


@pytest.fixture(scope="module")
def deploy(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Deploy:
    """The seed project with legacy_origin, one retired and one static page, built once."""
    project = copy_project(tmp_path_factory.mktemp("deploy") / "project")
    site_yaml = project.root / "content" / "site.yaml"
    settings = site_yaml.read_text("utf-8")
    site_yaml.write_text(
        settings.rstrip("\n")
        + f'\nlegacy_origin: "{upstream.url}"\nretired:\n  "{RETIRED}": "{RETIRED_TO}"\n',
        "utf-8",
    )
    static_file = project.root / "static" / STATIC.strip("/") / "index.html"
    static_file.parent.mkdir(parents=True)
    static_file.write_bytes(STATIC_BYTES)
    result = run_build(project.root)
    assert result.returncode == 0, result.stdout + result.stderr
    base_url = str(yaml.safe_load(settings)["base_url"]).rstrip("/")
    return Deploy(project.root, project.out, base_url, upstream)


@pytest.fixture(scope="module", params=["emulator", "netlify_cli"])
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    """The built site served by the Python emulator, then by `netlify dev --offline`."""
    if request.param == "netlify_cli":
        netlify_cli()  # skip (or fail under CI) before building anything
    serve = serve_netlify if request.param == "emulator" else serve_netlify_cli
    deploy: Deploy = request.getfixturevalue("deploy")
    with serve(deploy.site, NETLIFY_TOML) as base_url:
        yield base_url


def get(base_url: str, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """One raw request (redirects not followed): status, headers (lower-case names), body."""
    split = urlsplit(base_url)
    connection = http.client.HTTPConnection(split.hostname, split.port, timeout=30)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, response.read()
    finally:
        connection.close()


def location_path(headers: dict[str, str]) -> str:
    """The path a redirect points at (Netlify may send it absolute or relative)."""
    return urlsplit(headers.get("location", "")).path


# --- the sitemap: exactly the URLs that answer 200 -------------------------------------------


def test_every_sitemap_url_answers_200_itself(served: str, deploy: Deploy) -> None:
    paths = deploy.sitemap_paths()
    assert paths, "the sitemap lists no URL"
    assert len(paths) == len(set(paths)), "the sitemap lists a URL twice"
    proxied = set(deploy.proxied_paths())
    failures = []
    for path in paths:
        deploy.upstream.clear()
        status, headers, body = get(served, path)
        if status != 200:
            failures.append(f"{path}: {status} {headers.get('location', '')}".rstrip())
        elif path in proxied:
            if deploy.upstream.paths != [path] or path.encode() not in body:
                failures.append(
                    f"{path}: proxied page did not come from the legacy origin "
                    f"(origin saw {deploy.upstream.paths})"
                )
        elif UPSTREAM_HEADER.lower() in headers or deploy.upstream.paths:
            failures.append(f"{path}: a page of this site was fetched from the legacy origin")
    assert not failures, "\n".join(failures)


def test_sitemap_lists_the_proxied_and_static_pages_but_not_the_retired_one(
    deploy: Deploy,
) -> None:
    listed = set(deploy.sitemap_paths())
    proxied = deploy.proxied_paths()
    assert proxied, "the fixture should leave registry pages for the legacy origin"
    assert sorted(set(proxied) - listed) == [], "proxied registry pages missing from the sitemap"
    assert STATIC in listed
    assert RETIRED not in listed
    assert NOT_A_PAGE not in listed


# --- the registry: every live URL keeps answering --------------------------------------------


def test_every_registry_page_answers_200_or_a_301_to_a_page(served: str, deploy: Deploy) -> None:
    failures = []
    for path in deploy.registry_paths():
        status, headers, _ = get(served, path)
        if status == 301:
            target = location_path(headers)
            final, _, _ = get(served, target)
            if final != 200:
                failures.append(f"{path}: 301 to {target}, which answers {final}")
        elif status != 200:
            failures.append(f"{path}: {status}")
    assert not failures, "\n".join(failures)


def test_a_path_that_is_no_page_answers_404_with_the_404_page(served: str, deploy: Deploy) -> None:
    deploy.upstream.clear()
    status, _, body = get(served, NOT_A_PAGE)
    assert status == 404, f"{NOT_A_PAGE} answers {status}"
    assert body == (deploy.site / "404.html").read_bytes(), "the 404 answer is not 404.html"
    assert deploy.upstream.paths == [], "an unknown path was sent to the legacy origin"


def test_retired_page_answers_301_to_its_guide(served: str, deploy: Deploy) -> None:
    status, headers, _ = get(served, RETIRED)
    assert (status, location_path(headers)) == (301, RETIRED_TO), (
        f"{RETIRED} answers {status} {headers.get('location', '')}, not a 301 to {RETIRED_TO}"
    )
    assert get(served, RETIRED_TO)[0] == 200, f"the guide {RETIRED_TO} does not answer 200"


def test_static_page_is_served_byte_for_byte(served: str, deploy: Deploy) -> None:
    deploy.upstream.clear()
    status, _, body = get(served, STATIC)
    assert status == 200, f"{STATIC} answers {status}"
    assert body == STATIC_BYTES, f"{STATIC} is not static/'s file: {body[:120]!r}"
    assert deploy.upstream.paths == [], f"{STATIC} was fetched from the legacy origin"


# --- the emulator's proxy on a toy site ------------------------------------------------------


@pytest.fixture
def proxy_site(tmp_path: Path, upstream: Upstream) -> Path:
    """A tiny site whose _redirects proxies to the upstream and to a host never fetched."""
    site = tmp_path / "site"
    (site / "here").mkdir(parents=True)
    (site / "here" / "index.html").write_text("local", "utf-8")
    (site / "404.html").write_text("not found", "utf-8")
    (site / "_redirects").write_text(
        f"/old/* {upstream.url}/old/:splat 200\n"
        f"/here/ {upstream.url}/here/ 200\n"
        f"/slash/ {upstream.url}/slash/ 200\n"
        "/outside/ http://10.255.255.1/outside/ 200\n"
        "/named/ http://legacy.invalid/named/ 200\n",
        "utf-8",
    )
    return site


def test_emulator_proxies_loopback_targets_only(proxy_site: Path, upstream: Upstream) -> None:
    config = proxy_site.parent / "netlify.toml"
    config.write_text('[[headers]]\n  for = "/*"\n  [headers.values]\n    X-Site = "1"\n')
    with serve_netlify(proxy_site, config) as base_url:
        upstream.clear()
        status, headers, body = get(base_url, "/old/a/b/?q=1")
        assert (status, headers[UPSTREAM_HEADER.lower()]) == (200, "legacy-origin")
        assert b'<p id="upstream-path">/old/a/b/</p>' in body
        assert "x-site" not in headers, "netlify.toml headers are not added to proxied answers"
        assert upstream.paths == ["/old/a/b/"]
        # the origin's own status passes through; HEAD is proxied as HEAD
        assert get(base_url, "/old/missing/")[0] == 404
        status, headers, body = get(base_url, "/old/x/", method="HEAD")
        assert (status, body, upstream.requests[-1]) == (200, b"", ("HEAD", "/old/x/"))
        assert int(headers["content-length"]) > 0
        # an existing file shadows an unforced proxy rule, also without its trailing slash
        assert get(base_url, "/here/")[2] == b"local"
        status, headers, _ = get(base_url, "/here")
        assert (status, location_path(headers)) == (301, "/here/")
        # a rule matches its path with or without the trailing slash, as Netlify's does
        upstream.clear()
        assert get(base_url, "/slash")[0] == 200
        assert upstream.paths == ["/slash/"]
        # never anything but loopback
        upstream.clear()
        for path in ("/outside/", "/named/"):
            status, _, body = get(base_url, path)
            assert status == 502 and b"only loopback" in body, path
        assert upstream.paths == []


def test_emulator_answers_502_when_the_origin_is_down(tmp_path: Path) -> None:
    with serve_upstream() as gone:
        dead = gone.url
    site = tmp_path / "site"
    site.mkdir()
    (site / "_redirects").write_text(f"/p/ {dead}/p/ 200\n", "utf-8")
    config = tmp_path / "netlify.toml"
    shutil.copy2(NETLIFY_TOML, config)
    with serve_netlify(site, config) as base_url:
        status, _, body = get(base_url, "/p/")
    assert status == 502 and b"did not answer" in body
