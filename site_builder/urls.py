"""One normal form for every URL of the site, so `/guides/x` and `https://glm52.ai/guides/x/` match.

>>> page_key("https://GLM52.ai/guides/X/index.html?utm=1#top", "https://glm52.ai")
'/guides/x/'
>>> page_key("/guides/x", "https://glm52.ai")
'/guides/x/'
>>> page_key("https://example.org/guides/x/", "https://glm52.ai") is None
True
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from urllib.parse import unquote, urlsplit

_FILE_SUFFIX = re.compile(r"\.[a-z0-9]{1,5}$")


def same_host(host: str, base_url: str) -> bool:
    """Return whether `host` is the site's host (case-insensitive, `www.` and default ports ignored)."""
    return host.lower().removeprefix("www.") == _host(base_url)


@lru_cache(maxsize=16)
def _host(base_url: str) -> str:
    """Return the site's host name, lowercased, without `www.`."""
    return (urlsplit(base_url).hostname or "").lower().removeprefix("www.")


@lru_cache(maxsize=1 << 16)
def page_key(url: str, base_url: str) -> str | None:
    """Return the normal form of a URL on this site, or None for another site or a bad URL;
    remembered (the preview asks for every guide's nearest pages on every rebuild).

    Scheme, host, case, query, fragment, `index.html`, dot segments, repeated slashes and a
    missing trailing slash are all normalised away; file paths (`/sitemap.xml`) keep their name.
    """
    try:
        parts = urlsplit(url.strip())
        hostname = parts.hostname
    except ValueError:
        return None
    if parts.scheme or parts.netloc:
        if parts.scheme.lower() not in {"http", "https"} or not hostname:
            return None
        if not same_host(hostname, base_url):
            return None
    elif not url.startswith("/"):
        return None
    path = unquote(parts.path or "/").lower()
    path = re.sub(r"/{2,}", "/", path)
    path = posixpath.normpath(path) if path != "/" else "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    elif path == "/index.html":
        path = "/"
    if not path.endswith("/") and not _FILE_SUFFIX.search(path):
        path += "/"
    return path if path.startswith("/") else "/" + path


def canonical_url(key: str, base_url: str) -> str:
    """Return the absolute canonical URL of a normalised page key."""
    return base_url.rstrip("/") + key


def alias_file(alias: str) -> str:
    """Return the file a guide's alias is written to: `/old/` -> `old/index.html`."""
    path = alias.lstrip("/")
    return path if path.endswith(".html") else f"{path.rstrip('/')}/index.html".lstrip("/")
