"""What a reader's search costs on built sites: time to the first result, index bytes fetched.

Each SITE is an output folder (`_site/`), served the way Netlify serves it
(tests/netlify_server.py); Chromium opens `/search/?q=QUERY` for each query in a fresh
context and the script prints, per query and as medians, the time until Pagefind's first
result shows, the bytes and requests fetched under /pagefind/ and Pagefind's count of results.
Give the same corpus built with other `search_shard_pages` to see what shards cost readers;
run the sites twice, interleaved, on a noisy machine. `--network MS,KBPS` has Chromium
emulate a network (each request's round trip MS milliseconds, KBPS kilobits a second down):
locally, bytes and requests cost almost nothing, on a reader's phone they do.

    .venv/bin/python bench/search_bench.py /tmp/one-shard/_site /tmp/four-shards/_site --rounds 2
    .venv/bin/python bench/search_bench.py /tmp/four-shards/_site --network 100,10000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from tests.netlify_server import serve_netlify  # noqa: E402

QUERIES = (
    "weight",
    "decode context",
    "tensor parallel",
    "fp8",
    "sglang",
    "vllm",
    "memory",
    "throughput",
    "kv cache",
    "latency",
)
CHROMIUM = "/usr/bin/chromium"


class Search(NamedTuple):
    query: str
    seconds: float
    fetched: int
    requests: int
    message: str


class Network(NamedTuple):
    """A network Chromium emulates: round trip and download speed."""

    latency_ms: float
    down_kbps: float

    @classmethod
    def parse(cls, text: str) -> Network:
        latency, down = text.split(",")
        return cls(float(latency), float(down))


def search_site(
    site: Path, queries: tuple[str, ...], network: Network | None = None
) -> list[Search]:
    """Run each query on the served site in a fresh browser context (over `network`)."""
    from playwright.sync_api import sync_playwright

    found = []
    with serve_netlify(site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        for query in queries:
            context = browser.new_context()
            page = context.new_page()
            if network is not None:
                emulate(context, page, network)
            sizes: list[int] = []

            def fetched(response: Any, sizes: list[int] = sizes) -> None:
                if "/pagefind/" in response.url and response.ok:
                    sizes.append(len(response.body()))

            page.on("response", fetched)
            started = time.perf_counter()
            page.goto(f"{url}/search/?q={query.replace(' ', '+')}")
            page.wait_for_selector(".pagefind-ui__result-link", timeout=30_000)
            seconds = time.perf_counter() - started
            page.wait_for_timeout(500)  # the rest of the first page of results
            message = page.locator(".pagefind-ui__message").first.inner_text()
            found.append(Search(query, seconds, sum(sizes), len(sizes), message))
            context.close()
        browser.close()
    return found


def emulate(context: Any, page: Any, network: Network) -> None:
    """Have Chromium delay and throttle every request of `page` (Chrome DevTools Protocol)."""
    session = context.new_cdp_session(page)
    session.send("Network.enable")
    session.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": network.latency_ms,
            "downloadThroughput": network.down_kbps * 1000 / 8,
            "uploadThroughput": network.down_kbps * 1000 / 8,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", type=Path, help="built output folders")
    parser.add_argument("--rounds", type=int, default=1, help="times each site is searched")
    parser.add_argument(
        "--network", type=Network.parse, help="emulate a network: MS,KBPS (round trip, speed)"
    )
    args = parser.parse_args()
    for _ in range(args.rounds):
        for site in args.sites:
            found = search_site(site, QUERIES, args.network)
            for row in found:
                print(
                    f"{site}  {row.query:16} {row.seconds:5.2f} s {row.fetched // 1024:5d} KB "
                    f"{row.requests:3d} requests  {row.message}"
                )
            print(
                f"{site}  median: first result {statistics.median(r.seconds for r in found):.2f} s, "
                f"{statistics.median(r.fetched for r in found) // 1024:.0f} KB, "
                f"{statistics.median(r.requests for r in found):.1f} requests",
                flush=True,
            )


if __name__ == "__main__":
    main()
