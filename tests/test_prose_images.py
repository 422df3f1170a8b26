"""Images next to a guide's prose are published under hashed names and drawn at their size;
every image that cannot be shown is refused at its line, and nothing is written."""

from __future__ import annotations

import io
import re
from pathlib import Path

from PIL import Image

from tests.conftest import Project, soup, tree_digest
from tests.new_guide import SLUG, write_probe_guide

PAGE = f"guides/{SLUG}/index.html"
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40">'
    '<rect width="120" height="40" fill="#36c"/></svg>'
)
HASHED = r"/assets/images/{stem}\.[0-9a-f]{{10}}\.{suffix}"


def picture(kind: str, size: tuple[int, int], color: str = "red") -> bytes:
    """Return the bytes of a small image of one colour, made with Pillow."""
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, kind)
    return buffer.getvalue()


def write_body(project: Project, body: str) -> str:
    """Give the probe guide this prose body; return the prose file's path in the project."""
    path = write_probe_guide(project.root)
    front = path.read_text("utf-8").split("---\n")[1]
    path.write_bytes(f"---\n{front}---\n{body}".encode())
    return path.relative_to(project.root).as_posix()


def put(project: Project, relative: str, data: bytes) -> Path:
    """Write a binary file inside the project."""
    path = project.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def images_of(project: Project) -> dict[str, dict[str, str]]:
    """Return each prose image's attributes by its alt text."""
    prose = soup(project.out / PAGE).select_one(".prose")
    return {img["alt"]: dict(img.attrs) for img in prose.find_all("img")}


def image_errors(result_stderr: str) -> list[str]:
    """Return the build's link errors (where refused images are reported) as lines."""
    found = (re.match(r"\s+error\s+link\s+(.*)$", line) for line in result_stderr.splitlines())
    return [match.group(1) for match in found if match]


def test_images_next_to_the_prose_are_published_under_hashed_names_at_their_size(
    project: Project,
) -> None:
    sources = {
        "content/images/chunks.png": picture("PNG", (64, 32)),
        "content/flow.svg": SVG.encode(),
        "content/images/photo.jpg": picture("JPEG", (30, 20)),
        "content/images/anim.gif": picture("GIF", (12, 9)),
        "content/images/tile.webp": picture("WEBP", (16, 16)),
    }
    for relative, data in sources.items():
        put(project, relative, data)
    write_body(
        project,
        "## Diagrams\n\n![Prefill chunks](images/chunks.png)\n\n![Scheduler flow](flow.svg)\n\n"
        "![A photo](images/photo.jpg) ![An animation](./images/anim.gif) "
        "![A tile](images/../images/tile.webp)\n",
    )
    result = project.run()
    assert result.returncode == 0, result.stderr
    shown = images_of(project)
    expected = {
        "Prefill chunks": ("chunks", "png", "64", "32", "content/images/chunks.png"),
        "Scheduler flow": ("flow", "svg", "120", "40", "content/flow.svg"),
        "A photo": ("photo", "jpg", "30", "20", "content/images/photo.jpg"),
        "An animation": ("anim", "gif", "12", "9", "content/images/anim.gif"),
        "A tile": ("tile", "webp", "16", "16", "content/images/tile.webp"),
    }
    assert set(shown) == set(expected)
    for alt, (stem, suffix, width, height, source) in expected.items():
        attrs = shown[alt]
        assert re.fullmatch(HASHED.format(stem=stem, suffix=suffix), attrs["src"]), attrs
        assert (attrs["width"], attrs["height"]) == (width, height)
        assert (attrs["loading"], attrs["decoding"]) == ("lazy", "async")
        published = project.out / attrs["src"].removeprefix("/")
        assert published.read_bytes() == sources[source]
    # Only the images the pages show are published, and an SVG stays a file, never inlined.
    put(project, "content/images/unused.png", picture("PNG", (5, 5)))
    assert project.run().returncode == 0
    assert sorted(p.name.split(".")[0] for p in (project.out / "assets/images").iterdir()) == [
        "anim",
        "chunks",
        "flow",
        "photo",
        "tile",
    ]
    assert "#36c" not in (project.out / PAGE).read_text("utf-8")


def test_every_image_that_cannot_be_shown_is_refused_at_its_line(project: Project) -> None:
    put(project, "content/images/chunks.png", picture("PNG", (8, 8)))
    put(project, "secret.png", picture("PNG", (8, 8)))
    put(project, "outside/inner.png", picture("PNG", (8, 8)))
    put(project, "content/images/big.png", b"\x89PNG\r\n\x1a\n" + b"\0" * (5 * 1024 * 1024))
    put(project, "content/images/text.png", b"just some text, not a picture\n")
    put(project, "content/images/jpeg.png", picture("JPEG", (8, 8)))
    put(
        project,
        "content/images/script.svg",
        b'<svg xmlns="http://www.w3.org/2000/svg" '
        b'width="9" height="9"><script>alert(1)</script></svg>',
    )
    put(project, "content/images/nosize.svg", b'<svg xmlns="http://www.w3.org/2000/svg"/>')
    (project.root / "content/images/link.png").symlink_to(project.root / "secret.png")
    (project.root / "content/pics").symlink_to(project.root / "outside")
    cases = {
        "![](images/chunks.png)": "needs alt text",
        "![Missing](images/nope.png)": "content/images/nope.png does not exist",
        "![Up](../secret.png)": "secret.png is outside content/",
        "![Encoded](%2e%2e/secret.png)": "secret.png is outside content/",
        "![Absolute](/etc/passwd.png)": "not by a site or filesystem path",
        "![Link](images/link.png)": "content/images/link.png is a symbolic link",
        "![Folder](pics/inner.png)": "content/pics is a symbolic link",
        "![Big](images/big.png)": "is 5,242,888 bytes; the limit is 5,242,880 (5 MiB)",
        "![Text](images/text.png)": "content/images/text.png is not a readable PNG",
        "![Jpeg](images/jpeg.png)": "content/images/jpeg.png is not a readable PNG",
        "![Script](images/script.svg)": "holds a script",
        "![No size](images/nosize.svg)": "give it a width and height in px, or a viewBox",
        "![Notes](notes.txt)": "content/notes.txt is not an image file",
        "![Nul](images/chunks.png\0)": "no control characters",
    }
    source = write_body(project, "## Figures\n\n" + "\n\n".join(cases) + "\n")
    result = project.run()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = image_errors(result.stderr)
    lines = (project.root / source).read_text("utf-8").splitlines()
    for number, (written, why) in enumerate(cases.items(), start=1):
        line = next(n for n, text in enumerate(lines, 1) if text == written)
        typed = written.split("](", 1)[1][:-1].replace("\0", "\ufffd")
        matching = [e for e in errors if e.startswith(f"{source}: line {line}: '{typed}' ")]
        assert len(matching) == 1 and why in matching[0], (number, written, errors)
        assert "cannot be shown" in matching[0]
    assert len(errors) == len(cases)
    assert not project.out.exists()


def test_a_lone_refused_image_stops_the_build(project: Project) -> None:
    put(project, "content/images/chunks.png", picture("PNG", (8, 8)))
    source = write_body(project, "Intro.\n\nSee ![](images/chunks.png) here.\n")
    result = project.run()
    assert result.returncode == 1
    [error] = image_errors(result.stderr)
    lines = (project.root / source).read_text("utf-8").splitlines()
    line = lines.index("See ![](images/chunks.png) here.") + 1
    assert error.startswith(f"{source}: line {line}: 'images/chunks.png' cannot be shown: ")
    assert not project.out.exists()


def test_hostile_alt_text_and_titles_stay_text(project: Project) -> None:
    put(project, "content/images/chunks.png", picture("PNG", (8, 8)))
    alt = '"><script>alert(1)</script> javascript:alert(2) <img src=x onerror=alert(3)>'
    escaped = alt.replace("<", "\\<").replace(">", "\\>")
    write_body(project, f'![{escaped}](images/chunks.png "t\\" onload=\\"alert(4)")\n')
    result = project.run()
    assert result.returncode == 0, result.stderr
    prose = soup(project.out / PAGE).select_one(".prose")
    [img] = prose.find_all("img")
    assert img["alt"] == alt
    assert img["title"] == 't" onload="alert(4)'
    assert set(img.attrs) == {"src", "alt", "title", "width", "height", "loading", "decoding"}
    assert prose.find("script") is None
    assert re.fullmatch(HASHED.format(stem="chunks", suffix="png"), img["src"])


def test_web_images_stay_links_and_other_links_are_unchanged(project: Project) -> None:
    write_body(
        project,
        "![A web chart](https://example.org/chart.png) and [a page](https://example.org/).\n",
    )
    result = project.run()
    assert result.returncode == 0, result.stderr
    prose = soup(project.out / PAGE).select_one(".prose")
    assert prose.find("img") is None
    links = [(a["href"], a.get_text()) for a in prose.find_all("a")]
    assert links == [
        ("https://example.org/chart.png", "Image: A web chart"),
        ("https://example.org/", "a page"),
    ]


def test_changing_an_image_changes_its_name_and_the_page_even_from_the_cache(
    project: Project, tmp_path: Path
) -> None:
    image = put(project, "content/images/chunks.png", picture("PNG", (64, 32)))
    write_body(project, "![Prefill chunks](images/chunks.png)\n")
    assert project.run().returncode == 0
    before = images_of(project)["Prefill chunks"]
    image.write_bytes(picture("PNG", (80, 40), "blue"))
    result = project.run()
    assert result.returncode == 0, result.stderr
    after = images_of(project)["Prefill chunks"]
    assert after["src"] != before["src"]
    assert (after["width"], after["height"]) == ("80", "40")
    assert (project.out / after["src"].removeprefix("/")).read_bytes() == image.read_bytes()
    assert not (project.out / before["src"].removeprefix("/")).exists()
    fresh = tmp_path / "fresh"
    assert project.run("--no-cache", "--out", str(fresh)).returncode == 0
    assert tree_digest(fresh) == tree_digest(project.out)


def test_two_builds_with_images_are_byte_identical(project: Project, tmp_path: Path) -> None:
    put(project, "content/images/chunks.png", picture("PNG", (64, 32)))
    put(project, "content/flow.svg", SVG.encode())
    write_body(project, "![Prefill chunks](images/chunks.png) ![Scheduler flow](flow.svg)\n")
    first, second = tmp_path / "first", tmp_path / "second"
    assert project.run("--no-cache", "--out", str(first)).returncode == 0
    assert project.run("--no-cache", "--out", str(second)).returncode == 0
    assert tree_digest(first) == tree_digest(second)
    assert any(path.startswith("assets/images/") for path in tree_digest(first))
