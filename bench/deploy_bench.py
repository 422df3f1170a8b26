"""Deploy times at scale: Netlify Build from a fresh clone, with and without the build cache.

For each size N in --guides the script grows a copy of the project to N guides (as
build_bench.py does, with the referee's generator) and gives it the real netlify.toml and
Build plugin (netlify/build-cache/), with the build command swapped for this interpreter's
`python build.py` (the real command's `pip install .` would fetch). It then runs the pinned
netlify-cli's Netlify Build offline, as a deploy preview, R times each way, every run starting
as a fresh clone does (no `.cache/`, no `_site/`), and prints medians:

- scratch: Netlify's build cache empty too (the first deploy, or "Clear cache and deploy");
- unchanged: nothing changed since the last deploy;
- one prose: one guide's prose changed since the last deploy.

Each row gives the deploy's wall time, the build's own time (its last line's "in X s") and
how many guide pages the build took from the cache. `--local` runs `netlify build` (a
laptop: the plugin copies `.cache/`) instead of `netlify-build --mode buildbot` (Netlify's
servers: it moves it). Needs netlify-cli in `.netlify-cli/` (`.ci/run` installs it). Run from
the project root:

    .venv/bin/python bench/deploy_bench.py --guides 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from build_bench import CORPUS, ROOT, change_one_guide, make_corpus, user_environment

CLI = ROOT / ".netlify-cli" / "node_modules" / ".bin"
REAL_COMMAND = 'command = "pip install . && python build.py"'
BUILT = re.compile(r"^Built .* in (\d+\.\d+)s\.$", re.MULTILINE)
FROM_CACHE = re.compile(r"\((\d+) of \d+ guide pages from the build cache\)")


def deployable(project: Path) -> None:
    """Give `project` the real netlify.toml and plugin, with this interpreter's build command."""
    shutil.copytree(ROOT / "netlify", project / "netlify", dirs_exist_ok=True)
    settings = (ROOT / "netlify.toml").read_text("utf-8")
    if REAL_COMMAND not in settings:
        raise SystemExit(f"netlify.toml no longer says {REAL_COMMAND}: update this script")
    command = f'command = "{sys.executable} build.py"'
    (project / "netlify.toml").write_text(settings.replace(REAL_COMMAND, command), "utf-8")


def deploy(project: Path, cache_dir: Path, local: bool) -> dict[str, float]:
    """Run one deploy from a fresh clone; return its wall seconds, the build's own seconds
    and the guide pages it took from the build cache."""
    shutil.rmtree(project / ".cache", ignore_errors=True)
    shutil.rmtree(project / "_site", ignore_errors=True)
    if local:
        command = [str(CLI / "netlify"), "build"]
    else:
        command = [str(CLI / "netlify-build"), "--mode", "buildbot", f"--cacheDir={cache_dir}"]
    start = time.perf_counter()
    result = subprocess.run(
        [*command, "--offline", "--context", "deploy-preview"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env={**user_environment(), "CI": "1", "NO_COLOR": "1"},
    )
    wall = time.perf_counter() - start
    log = result.stdout + result.stderr
    built = BUILT.search(log)
    if result.returncode != 0 or built is None:
        raise SystemExit(f"deploy failed ({result.returncode}):\n{log[-3000:]}")
    taken = FROM_CACHE.search(log)
    return {"wall": wall, "build": float(built[1]), "from cache": float(taken[1] if taken else 0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guides", default="1000", help="sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="deploys of each kind per size")
    parser.add_argument("--local", action="store_true", help="`netlify build`, as on a laptop")
    args = parser.parse_args()
    if not CORPUS.is_file():
        raise SystemExit(f"{CORPUS} is missing: the referee's corpus generator is needed")
    if not (CLI / "netlify").is_file():
        raise SystemExit(f"netlify-cli is missing from {CLI.parent.parent}: run .ci/run's step")
    for guides in (int(size) for size in args.guides.split(",")):
        with tempfile.TemporaryDirectory(prefix="deploy-bench-") as temporary:
            project = make_corpus(guides, Path(temporary) / "project")
            deployable(project)
            # Netlify's build cache: with --local, netlify build keeps it in .netlify/cache/.
            cache_dir = Path(temporary) / "netlify-cache"
            local_cache = project / ".netlify" / "cache"
            runs: dict[str, list[dict[str, float]]] = defaultdict(list)
            for round_number in range(args.repeat):
                shutil.rmtree(cache_dir, ignore_errors=True)
                shutil.rmtree(local_cache, ignore_errors=True)
                runs["scratch"].append(deploy(project, cache_dir, args.local))
                runs["unchanged"].append(deploy(project, cache_dir, args.local))
                change_one_guide(project, round_number)
                runs["one prose"].append(deploy(project, cache_dir, args.local))
            how = "netlify build" if args.local else "netlify-build --mode buildbot"
            print(f"N={guides} ({how}, {args.repeat} deploys each, medians):")
            for kind, results in runs.items():
                wall, build, taken = (
                    statistics.median(result[key] for result in results)
                    for key in ("wall", "build", "from cache")
                )
                print(
                    f"  {kind:10} deploy {wall:7.2f} s; the build {build:6.2f} s; "
                    f"{taken:.0f} of {guides} guide pages from the build cache"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
