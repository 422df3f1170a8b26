"""Template mistakes are input errors that name the template and line, and write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import nodes

from site_builder.cache.reuse import folder_files
from site_builder.config import BuildConfig
from site_builder.errors import InputError
from site_builder.pipeline import build
from site_builder.render.pages import make_env
from tests.conftest import Project

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def break_template(project: Project, name: str, old: str, new: str) -> None:
    """Replace the first `old` in a template."""
    path = project.root / "templates" / name
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


def test_undefined_name_in_a_template_names_the_file_and_line(project: Project) -> None:
    break_template(project, "guide.html", "{{ guide.description }}", "{{ guide.no_such_field }}")
    with pytest.raises(InputError) as raised:
        build(BuildConfig.for_root(project.root))
    (problem,) = raised.value.problems
    assert problem.source == "templates/guide.html"
    assert problem.location.startswith("line ")
    assert "no_such_field" in problem.message
    assert not project.out.exists()


def test_template_syntax_error_names_the_file_and_line(project: Project) -> None:
    break_template(project, "home.html", "{% endfor %}", "{% endfo %}")
    result = project.run()
    assert result.returncode == 1
    assert result.stderr.startswith("templates/home.html: line ")
    assert "Traceback" not in result.stderr


def test_a_prose_heading_named_like_a_section_builds(project: Project) -> None:
    guide = project.root / "content" / "glm-5-2-vllm-sequence-parallel-moe.md"
    guide.write_text(guide.read_text("utf-8") + "\n## Sources\n\n## Shape rows\n", "utf-8")
    result = project.run()
    assert result.returncode == 0, result.stderr


def test_every_inline_if_in_the_templates_has_an_else() -> None:
    # `{{ 'x' if y }}` makes an Undefined (with its message) whenever y is false, and
    # escaping it costs more than the rest of the cell: 30% of a guide page's render time.
    env = make_env(TEMPLATES, folder_files(TEMPLATES))
    bare = [
        f"{name}: line {node.lineno}"
        for name in sorted(env.list_templates(extensions=["html", "xml"]))
        for node in env.parse(env.loader.get_source(env, name)[0]).find_all(nodes.CondExpr)
        if node.expr2 is None
    ]
    assert bare == []
