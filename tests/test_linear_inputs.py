"""Each input's cost grows linearly with its size: doubling it at most about doubles the time.

Times are the least CPU time of five runs, so a busy machine slows a run without failing the
test; a quadratic step shows as a ratio near 4, far above the bound of 3.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable

import pytest

from site_builder.config import BuildConfig
from site_builder.markdown import render_markdown
from site_builder.pipeline import build
from tests.conftest import Project, soup
from tests.new_guide import SLUG, probe_record, write_probe_guide

RATIO = 3.0


def best_time(run: Callable[[], object], repeat: int = 5) -> float:
    """Return the least CPU time of `repeat` runs of this process (other processes on a busy
    machine slow the wall clock, not this), with the garbage collector held off."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            run()
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return min(times)


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


@pytest.mark.parametrize("shape", sorted(PROSE))
def test_prose_costs_grow_linearly(shape: str) -> None:
    make = PROSE[shape]
    small, large = make(8000), make(16000)
    ratio = best_time(lambda: render_markdown(large)) / best_time(lambda: render_markdown(small))
    assert ratio < RATIO, f"{shape}: doubling the input took {ratio:.1f}x the time"


def test_forty_thousand_identical_headings_build_in_seconds(project: Project) -> None:
    prose = write_probe_guide(project.root)
    prose.write_text(prose.read_text("utf-8") + "## h\n\n" * 40_000, "utf-8")
    start = time.perf_counter()
    result = project.run("--no-cache")
    assert result.returncode == 0, result.stderr
    assert time.perf_counter() - start < 30  # was over 60 s with quadratic heading ids
    page = soup(project.out / "guides" / SLUG / "index.html")
    anchors = [h2["id"] for h2 in page.find_all("h2") if h2.get("id", "").startswith("h")]
    assert len(anchors) == len(set(anchors)) >= 40_000


def test_a_record_table_costs_grow_linearly(project: Project) -> None:
    write_probe_guide(project.root)
    record = project.root / "records" / "900_latency_probe.json"
    config = BuildConfig.for_root(project.root, cache=False)

    def with_rows(count: int) -> Callable[[], object]:
        rows = [{"name": f"row-{i}", "ms": i, "holds": i % 2 == 0} for i in range(count)]
        record.write_text(json.dumps(probe_record(rowsProbe={"rows": rows})), "utf-8")
        return lambda: build(config, write=False)

    small = best_time(with_rows(3000), repeat=2)
    large = best_time(with_rows(6000), repeat=2)
    assert large / small < RATIO, f"doubling a record table took {large / small:.1f}x the time"
