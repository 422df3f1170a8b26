"""No deploy drops a live page: every registry page is built, copied, retired or proxied.

These read the built files; tests/test_deploy_serving.py serves them (Python emulator and
netlify-cli) and requests every URL.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from tests.conftest import Project

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def registry_urls(project: Project) -> list[str]:
    """Return the URLs of the project's registry."""
    registry = json.loads((project.root / "content/registry.json").read_text("utf-8"))
    return [page["url"] for page in registry["pages"]]


def built_urls(project: Project) -> set[str]:
    """Return the canonical URLs of the guides the project builds."""
    return {
        f"https://glm52.ai/guides/{path.parent.name}/"
        for path in (project.out / "guides").glob("*/index.html")
    }


def unbuilt(project: Project) -> list[str]:
    """Return the registry pages the project does not build (served elsewhere or lost)."""
    assert project.run().returncode == 0
    return [url for url in registry_urls(project) if url not in built_urls(project)]


def sitemap(site: Path) -> list[str]:
    """Return the <loc> values of a built sitemap."""
    root = ElementTree.parse(site / "sitemap.xml").getroot()
    return [loc.text or "" for loc in root.iter(f"{SITEMAP_NS}loc")]


def add_setting(project: Project, text: str) -> None:
    """Append YAML to the project's site.yaml."""
    path = project.root / "content/site.yaml"
    path.write_text(path.read_text("utf-8") + text, "utf-8")


def test_production_build_fails_naming_every_page_that_would_404(project: Project) -> None:
    missing = unbuilt(project)
    assert missing, "the fixture registry has live pages not built here"
    for args, env in ((("--production",), {}), ((), {"CONTEXT": "production"})):
        result = project.run(*args, env=env)
        assert result.returncode == 1, result.stdout
        for url in missing:
            line = next(line for line in result.stderr.splitlines() if url in line)
            assert "would answer 404" in line
            assert "legacy_origin" in line and "static/" in line and "retired" in line
        assert "Traceback" not in result.stderr


def test_other_builds_warn_about_the_same_pages(project: Project) -> None:
    missing = unbuilt(project)
    (project.root / "content/acknowledged.yaml").unlink(missing_ok=True)
    result = project.run()
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if "would answer 404" in line]
    assert len(lines) == len(missing)
    for url in missing:
        line = next(line for line in lines if url in line)
        assert line.split()[:2] == ["warning", "deploy"]
        assert "a production build fails on it" in line and "legacy_origin" in line


def test_sitemap_lists_only_pages_answered_with_200(project: Project) -> None:
    missing = unbuilt(project)
    assert not set(missing) & set(sitemap(project.out))
    assert project.run("--production").returncode == 1


def test_legacy_origin_proxies_every_page_not_built_here(project: Project) -> None:
    missing = unbuilt(project)
    add_setting(
        project, "legacy_origin: https://old.glm52.example\nlegacy_paths: [/css/*, /img/old/*]\n"
    )
    result = project.run("--production")
    assert result.returncode == 0, result.stderr
    rules = (project.out / "_redirects").read_text("utf-8").splitlines()
    for url in missing:
        path = url.removeprefix("https://glm52.ai")
        assert f"{path} https://old.glm52.example{path} 200" in rules
    assert "/css/* https://old.glm52.example/css/:splat 200" in rules
    assert "/img/old/* https://old.glm52.example/img/old/:splat 200" in rules
    assert set(missing) <= set(sitemap(project.out))
    audit = project.run("--audit")
    assert f"{len(missing)} live page(s) proxied to https://old.glm52.example" in audit.stderr


def test_a_retired_page_redirects_and_leaves_the_sitemap(project: Project) -> None:
    old, *_ = unbuilt(project)
    target = sorted(built_urls(project))[0].removeprefix("https://glm52.ai")
    path = old.removeprefix("https://glm52.ai")
    add_setting(
        project, f"legacy_origin: https://old.glm52.example\nretired:\n  {path}: {target}\n"
    )
    assert project.run("--production").returncode == 0
    rules = (project.out / "_redirects").read_text("utf-8").splitlines()
    assert f"{path} {target} 301" in rules
    assert not any(line.startswith(f"{path} ") and line.endswith(" 200") for line in rules)
    assert old not in sitemap(project.out)


def test_retiring_to_a_page_that_does_not_answer_is_an_error(project: Project) -> None:
    old, *_ = unbuilt(project)
    path = old.removeprefix("https://glm52.ai")
    add_setting(project, f"retired:\n  {path}: /guides/nowhere/\n")
    result = project.run()
    assert result.returncode == 1
    assert "content/site.yaml" in result.stderr and "/guides/nowhere/" in result.stderr


def test_static_copies_serve_a_live_page_verbatim(project: Project) -> None:
    old, *_ = unbuilt(project)
    path = old.removeprefix("https://glm52.ai")
    original = b"<!doctype html><title>the old page, byte for byte</title>\xe2\x9c\x93\n"
    project.write(f"static{path}index.html", "")
    (project.root / f"static{path}index.html").write_bytes(original)
    assert project.run().returncode == 0
    assert (project.out / f"{path.strip('/')}/index.html").read_bytes() == original
    assert old in sitemap(project.out)
    assert not any(path in line for line in (project.out / "_redirects").read_text().splitlines())


def test_a_static_file_colliding_with_a_built_page_is_an_error(project: Project) -> None:
    project.write("static/robots.txt", "User-agent: *\n")
    result = project.run()
    assert result.returncode == 1
    assert "static/robots.txt" in result.stderr and "collides" in result.stderr


def test_links_to_pages_served_elsewhere_stay_absolute(project: Project) -> None:
    missing = unbuilt(project)
    add_setting(project, "legacy_origin: https://old.glm52.example\n")
    assert project.run().returncode == 0
    hrefs = "\n".join(
        path.read_text("utf-8") for path in (project.out / "guides").glob("*/index.html")
    )
    linked = [url for url in missing if f'href="{url}"' in hrefs]
    assert linked, "the seed guides link to live pages built elsewhere"
    relative = [url.removeprefix("https://glm52.ai") for url in linked]
    assert not any(f'href="{path}"' in hrefs for path in relative)


def test_a_legacy_origin_on_the_sites_own_host_is_refused(project: Project) -> None:
    add_setting(project, "legacy_origin: https://www.glm52.ai\n")
    result = project.run()
    assert result.returncode == 1
    assert "content/site.yaml: legacy_origin: " in result.stderr
    assert "another host than base_url" in result.stderr


def test_a_proxy_rule_keeps_the_live_pages_spelling(project: Project) -> None:
    registry = project.root / "content/registry.json"
    data = json.loads(registry.read_text("utf-8"))
    data["pages"].append(
        {
            "url": "https://glm52.ai/Docs/Old%20Page.html",
            "title": "",
            "reader_job": "",
            "published": None,
            "lastmod": "",
        }
    )
    registry.write_text(json.dumps(data), "utf-8")
    add_setting(project, "legacy_origin: https://old.glm52.example\n")
    assert project.run().returncode == 0
    rules = (project.out / "_redirects").read_text("utf-8").splitlines()
    assert "/Docs/Old%20Page.html https://old.glm52.example/Docs/Old%20Page.html 200" in rules
