"""How many URLs of a deploy answer 200: every sitemap URL and every registry page, served the
way Netlify serves them (tests/netlify_server.py, with proxies answered by a local upstream).

    .venv/bin/python bench/served_urls.py                       # this checkout's content
    .venv/bin/python bench/served_urls.py --import 90           # after importing a 90-URL live sitemap
    .venv/bin/python bench/served_urls.py --import 90 --legacy  # ... with legacy_origin set
    .venv/bin/python bench/served_urls.py --root /old/checkout  # an older builder, same content

The project is copied into a temporary folder first; nothing here is changed. A synthetic live
sitemap holds the registry's pages plus made-up ones up to N URLs, all under /guides/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from tests.netlify_server import serve_netlify  # noqa: E402
from tests.upstream_server import serve_upstream  # noqa: E402

BASE = "https://glm52.ai"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report a redirect as it is, never follow it."""

    def redirect_request(self, *args: object) -> None:
        return None


def live_sitemap(registry: list[str], total: int) -> str:
    """Return a sitemap of the registry's URLs plus made-up live pages, `total` in all."""
    urls = list(registry)
    urls += [f"{BASE}/guides/live-page-{n:03d}/" for n in range(total - len(urls))]
    body = "".join(f"<url><loc>{url}</loc><lastmod>2026-06-01</lastmod></url>" for url in urls)
    return f'<?xml version="1.0"?><urlset xmlns="{NS[1:-1]}">{body}</urlset>'


def status_of(base: str, url: str) -> int:
    """Return the status the served site answers a canonical URL with (no redirect followed)."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(base + url.removeprefix(BASE), timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def measure(root: Path, imported: int, legacy: bool) -> dict[str, object]:
    """Copy, optionally import and proxy, build, serve; count answers by status."""
    with tempfile.TemporaryDirectory() as folder, serve_upstream() as upstream:
        work = Path(folder) / "project"
        for name in ("records", "content", "templates", "site_builder"):
            shutil.copytree(root / name, work / name)
        shutil.copy2(root / "build.py", work / "build.py")
        python = [sys.executable, str(work / "build.py")]
        if imported:
            registry = json.loads((work / "content/registry.json").read_text("utf-8"))
            urls = [page["url"] for page in registry["pages"]]
            (work / "live.xml").write_text(live_sitemap(urls, imported), "utf-8")
            subprocess.run([*python, "--import-sitemap", str(work / "live.xml")], check=True)
        if legacy:
            settings = work / "content/site.yaml"
            settings.write_text(settings.read_text() + f"legacy_origin: {upstream.url}\n")
        build = subprocess.run(python, capture_output=True, text=True, check=False)
        if build.returncode != 0:
            raise SystemExit(f"build failed:\n{build.stderr}")
        site = work / "_site"
        locs = [loc.text or "" for loc in ElementTree.parse(site / "sitemap.xml").iter(f"{NS}loc")]
        registry = json.loads((work / "content/registry.json").read_text("utf-8"))
        pages = [page["url"] for page in registry["pages"]]
        with serve_netlify(site) as base:
            sitemap = Counter(status_of(base, url) for url in locs)
            live = Counter(status_of(base, url) for url in pages)
        return {"sitemap": dict(sitemap), "registry": dict(live), "locs": len(locs)}


def main() -> None:
    """Print how the deploy answers every sitemap URL and registry page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="project (default: this one)")
    parser.add_argument("--import", dest="imported", type=int, default=0, metavar="N")
    parser.add_argument("--legacy", action="store_true", help="set legacy_origin to an upstream")
    args = parser.parse_args()
    result = measure(args.root.resolve(), args.imported, args.legacy)
    sitemap, registry = result["sitemap"], result["registry"]
    print(f"sitemap URLs: {result['locs']}; by status: {sitemap}")
    print(f"registry pages: {sum(registry.values())}; by status: {registry}")


if __name__ == "__main__":
    main()
