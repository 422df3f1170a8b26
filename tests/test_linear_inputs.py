"""Each input's cost grows linearly with its size (see tests/scaling.py for how it is timed)."""

from __future__ import annotations

import json
import resource
from collections.abc import Callable

import pytest

from site_builder.config import BuildConfig
from site_builder.pipeline import build
from site_builder.render.markdown import render_markdown
from tests.conftest import Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide
from tests.scaling import BOUND, GROWTH, growth


def rendering(make: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    """For each size, a run that renders the prose `make` writes at that size."""

    def at(size: int) -> Callable[[], object]:
        prose = make(size)
        return lambda: render_markdown(prose)

    return at


PROSE = {
    "identical headings": lambda n: "## h\n\n" * n,
    "nested lists": lambda n: "".join("  " * (i % 8) + "- item\n" for i in range(n)),
    "table rows": lambda n: "| a | b |\n|---|---|\n" + "| 1 | `2` |\n" * n,
    "table columns": lambda n: "|" + "a|" * n + "\n|" + "-|" * n + "\n|" + "1|" * n + "\n",
    "links": lambda n: "[a](/guides/x/) " * n,
    "nested brackets": lambda n: "[" * n + "a" + "]" * n,
    "unclosed brackets and emphasis": lambda n: "[*a_ " * n,
    "unclosed links": lambda n: "[a](" * n,
}


def _children_cpu_seconds() -> float:
    """Return the CPU time of this process's finished children (the build and its workers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.mark.parametrize("shape", sorted(PROSE))
def test_prose_costs_grow_linearly(shape: str) -> None:
    ratio = growth(rendering(PROSE[shape]), 4000)
    assert ratio < BOUND, f"{shape}: {GROWTH}x the input took {ratio:.1f}x the time"


def test_forty_thousand_identical_headings_build_in_seconds(project: Project) -> None:
    prose = write_probe_guide(project.root)
    prose.write_text(prose.read_text("utf-8") + "## h\n\n" * 40_000, "utf-8")
    start = _children_cpu_seconds()
    result = project.run("--no-cache")
    assert result.returncode == 0, result.stderr
    seconds = _children_cpu_seconds() - start  # CPU, not wall: the suite runs tests side by side
    assert seconds < 30, f"{seconds:.1f} s of CPU"  # over 60 s with quadratic heading ids
    page = soup(project.out / "guides" / SLUG / "index.html")
    anchors = [h2["id"] for h2 in page.find_all("h2") if h2.get("id", "").startswith("h")]
    assert len(anchors) == len(set(anchors)) >= 40_000


def test_a_record_table_costs_grow_linearly(project: Project) -> None:
    write_probe_guide(project.root)
    record = project.root / "records" / "900_latency_probe.json"
    config = BuildConfig.for_root(project.root, cache=False)

    def with_rows(count: int) -> Callable[[], object]:
        rows = [{"name": f"row-{i}", "ms": i, "holds": i % 2 == 0} for i in range(count)]
        text = json.dumps(probe_record(rowsProbe={"rows": rows}))

        def built() -> None:
            record.write_text(text, "utf-8")
            build(config, write=False)

        return built

    ratio = growth(with_rows, 1500, repeat=2)
    assert ratio < BOUND, f"{GROWTH}x a record table's rows took {ratio:.1f}x the time"
