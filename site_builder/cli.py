"""Command line: parse options, run the pipeline, print one line per problem, set the exit code.

Exit codes: 0 success, 1 input, check or output errors, 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from site_builder.config import BuildConfig
from site_builder.errors import InputError, OutputError
from site_builder.models import BuildReport
from site_builder.pipeline import build


def make_parser() -> argparse.ArgumentParser:
    """Return the argument parser; README documents every option here."""
    parser = argparse.ArgumentParser(
        prog="python build.py",
        description="Build the GLM-5.2 guide site from audit records and Markdown prose.",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default: _site/ in the project)"
    )
    parser.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="project folder holding records/, content/, templates/",
    )
    parser.add_argument(
        "--audit", action="store_true", help="run every check without writing the site"
    )
    parser.add_argument("--quiet", action="store_true", help="print only warnings and errors")
    return parser


def main(argv: Sequence[str] | None = None, default_root: Path | None = None) -> int:
    """Run the command line; return the exit code."""
    args = make_parser().parse_args(argv)
    root = args.root or default_root or Path.cwd()
    if not (root / "records").is_dir():
        print(f"error: {root}: not a project folder (no records/ inside)", file=sys.stderr)
        return 2
    config = BuildConfig.for_root(root, args.out.resolve() if args.out else None)
    started = time.perf_counter()
    try:
        report = build(config, write=not args.audit)
    except InputError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        count = len(error.problems)
        print(
            f"Aborted: {count} input error{'s' if count != 1 else ''}; nothing was written.",
            file=sys.stderr,
        )
        return 1
    except OutputError as error:
        print(error, file=sys.stderr)
        print(
            "Aborted: the site was not written; the previous output is untouched.", file=sys.stderr
        )
        return 1
    return _report(report, config, args, time.perf_counter() - started)


def _report(
    report: BuildReport, config: BuildConfig, args: argparse.Namespace, seconds: float
) -> int:
    """Print findings and a summary line; return 1 if any finding is an error."""
    errors = [finding for finding in report.findings if finding.severity == "error"]
    for finding in report.findings:
        print(f"{finding.severity}: {finding}", file=sys.stderr)
    if errors:
        print(f"Aborted: {len(errors)} check error(s); nothing was written.", file=sys.stderr)
        return 1
    if not args.quiet:
        warnings = len(report.findings)
        action = (
            "Audited" if args.audit else f"Built {len(report.pages)} files into {config.out_dir}"
        )
        print(f"{action}: {report.guides} guides, {warnings} warning(s), {seconds:.2f}s.")
    return 0
