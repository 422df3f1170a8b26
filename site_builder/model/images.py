"""Images the prose shows: each file's type checked from its bytes, its size, its hashed name.

An image is a file inside content/, named in a guide's Markdown by its path relative to the
guide's own file (`![alt](images/diagram.png)` next to `content/guide.md`). It is published
as `/assets/images/<name>.<hash>.<ext>`, bytes unchanged, and drawn with its width and height.
The only module that imports Pillow; SVG is parsed with defusedxml and is never inlined.
"""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
import unicodedata
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from io import BytesIO
from urllib.parse import unquote

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring
from PIL import Image, UnidentifiedImageError

from site_builder.model.raw import RawImage

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""5 MiB: larger files are refused (a diagram or screenshot is far smaller)."""
FORMATS = {"png": "PNG", "jpg": "JPEG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP", "svg": "SVG"}
"""The file types shown, by suffix, and the format their bytes must have."""
IMAGE_FOLDER = "/assets/images/"
"""Where images are published: under /assets/, so cached forever like the stylesheet."""
MAX_SIDE = 100_000
"""An SVG wider or taller than this (in px) is refused: its size is surely mistyped."""
_ROTATED = (5, 6, 7, 8)
"""EXIF orientations a browser turns by a quarter: width and height swap."""
_SVG = "{http://www.w3.org/2000/svg}"
_LENGTH = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*(px)?\s*")
_UNSAFE_SVG = frozenset({"script", "foreignObject", "iframe", "embed", "object"})


@dataclass(frozen=True)
class ContentImage:
    """An image file of content/: its bytes, where it is published and its size, or why not."""

    source: str
    """Its path from the project root: `content/images/diagram.png`."""
    content: bytes = b""
    url: str = ""
    """The site path it is published at, named by a hash of its bytes."""
    width: int = 0
    height: int = 0
    problem: str = ""
    """Why it cannot be shown ("" when it can)."""


def inspect_image(raw: RawImage) -> ContentImage:
    """Check one image file's bytes against its suffix and read its size in CSS pixels."""
    if raw.refused:
        return ContentImage(raw.source, problem=f"{raw.source} {raw.refused}")
    suffix = raw.source.rpartition(".")[2].lower()
    kind = FORMATS[suffix]
    try:
        width, height = _svg_size(raw.content) if kind == "SVG" else _bitmap_size(raw.content, kind)
    except ValueError as error:
        return ContentImage(raw.source, problem=f"{raw.source} is not a readable {kind}: {error}")
    stem = posixpath.basename(raw.source).rpartition(".")[0]
    stem = re.sub(r"[^a-z0-9_-]+", "-", stem.lower()).strip("-") or "image"
    name = f"{stem}.{hashlib.sha256(raw.content).hexdigest()[:10]}.{suffix}"
    return ContentImage(raw.source, raw.content, IMAGE_FOLDER + name, width, height)


def find_image(
    images: Mapping[str, ContentImage], doc_source: str, typed: str
) -> ContentImage | str:
    """Return the image a prose file names by `typed`, or why it cannot be shown."""
    try:
        path = unquote(typed.strip(), errors="strict")
    except UnicodeDecodeError:
        return "cannot be shown: its %-escapes are not UTF-8"
    if any(unicodedata.category(char) in ("Cc", "Cf") or char in "\\\ufffd" for char in path):
        return "cannot be shown: a file path holds no control characters or backslashes"
    if path.startswith("/"):
        return (
            "cannot be shown: an image is a file in content/, named by its path from this "
            "guide's file (images/diagram.png), not by a site or filesystem path"
        )
    folder = posixpath.dirname(doc_source)
    source = posixpath.normpath(posixpath.join(folder, path))
    if not source.startswith(f"{doc_source.split('/')[0]}/"):
        return f"cannot be shown: {source} is outside content/; an image must be a file in it"
    if source.rpartition(".")[2].lower() not in FORMATS:
        kinds = ", ".join(f".{suffix}" for suffix in FORMATS)
        return f"cannot be shown: {source} is not an image file ({kinds})"
    parts = source.split("/")
    folders = ("/".join(parts[:depth]) for depth in range(2, len(parts)))
    found = images.get(source) or next(
        (images[folder] for folder in folders if folder in images), None
    )  # a folder is listed only when it is a symbolic link, with that problem
    if found is None:
        return f"cannot be shown: {source} does not exist"
    return f"cannot be shown: {found.problem}" if found.problem else found


def _bitmap_size(data: bytes, kind: str) -> tuple[int, int]:
    """Return the displayed size of a PNG, JPEG, GIF or WebP whose bytes are of that kind."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(BytesIO(data), formats=[kind]) as image:
                image.verify()  # checks the data; the image cannot be read after it
            with Image.open(BytesIO(data), formats=[kind]) as image:
                width, height = image.size
                turned = image.getexif().get(0x0112) in _ROTATED
    except (UnidentifiedImageError, Image.DecompressionBombError) as error:
        raise ValueError(str(error).split(" <")[0]) from None
    except Image.DecompressionBombWarning:
        raise ValueError(f"more than {Image.MAX_IMAGE_PIXELS:,} pixels") from None
    except (OSError, SyntaxError, EOFError) as error:  # what Pillow raises on damaged data
        raise ValueError(f"damaged ({error})") from None
    return (height, width) if turned else (width, height)


def _svg_size(data: bytes) -> tuple[int, int]:
    """Return an SVG's size from its width and height in px, else from its viewBox."""
    try:
        root = fromstring(data)
    except (DefusedXmlException, SyntaxError, ValueError) as error:
        raise ValueError(f"not well-formed XML ({error})") from None
    if root.tag not in (f"{_SVG}svg", "svg"):
        raise ValueError("its root element is not <svg>")
    for element in root.iter():
        name = str(element.tag).rpartition("}")[2]
        attributes = [(key.rpartition("}")[2], value) for key, value in element.attrib.items()]
        if (
            name in _UNSAFE_SVG
            or any(key.lower().startswith("on") for key, _ in attributes)
            or any(key == "href" and not value.startswith("#") for key, value in attributes)
        ):
            raise ValueError("it holds a script, an event handler or a reference to another file")
    width, height = _length(root.get("width")), _length(root.get("height"))
    try:
        box = [float(part) for part in re.split(r"[\s,]+", root.get("viewBox", "").strip())]
    except ValueError:
        box = []
    if len(box) == 4 and all(map(math.isfinite, box)) and min(box[2:]) > 0:
        ratio = box[2] / box[3]
        if not width:
            width = height * ratio if height else box[2]
        if not height:
            height = width / ratio
    if not width or not height:
        raise ValueError("give it a width and height in px, or a viewBox")
    if max(width, height) > MAX_SIDE:
        raise ValueError(f"it is wider or taller than {MAX_SIDE:,} px")
    return max(1, round(width)), max(1, round(height))


def _length(value: str | None) -> float:
    """Return an SVG length in px (unitless or `px`), or 0 for none or another unit."""
    match = _LENGTH.fullmatch(value or "")
    return float(match.group(1)) if match else 0.0
