"""Command line: parse options, run the pipeline, print the report, set the exit code.

Exit codes: 0 success, 1 input, check or output errors, 2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import FrameType

from site_builder.checks.report import (
    counts,
    format_json,
    format_text,
    format_timings,
    outcome,
    problems_as_findings,
)
from site_builder.config import BuildConfig, today_from
from site_builder.errors import BuilderError, InputError, OutputError, ServeError, one_line
from site_builder.model.claims import Verification
from site_builder.model.models import Finding
from site_builder.pipeline import build
from site_builder.runtime.progress import stage_display
from site_builder.runtime.workdirs import tidy
from site_builder.runtime.workers import collect_less, cores


def make_parser() -> argparse.ArgumentParser:
    """Return the argument parser; README documents every option here."""
    parser = argparse.ArgumentParser(
        prog="python build.py",
        description="Build the guide site from audit records and Markdown prose.",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: _site/)")
    parser.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="project folder with records/, content/, templates/",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--serve", action="store_true", help="preview with live reload")
    mode.add_argument("--audit", action="store_true", help="run every check, write nothing")
    mode.add_argument(
        "--import-sitemap", type=Path, metavar="FILE", help="merge a sitemap.xml into the registry"
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default: text)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="preview address (default: 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=8000, help="preview port, 0 for any free one (default: 8000)"
    )
    mode.add_argument(
        "--new", type=Path, metavar="RECORD", help="write content/<slug>.md for a record, a draft"
    )
    parser.add_argument(
        "--drafts", action="store_true", help="also write drafts and scheduled guides"
    )
    parser.add_argument(
        "--production",
        action="store_true",
        help="a production deploy: fail on any live page that would answer 404 "
        "(also when CONTEXT=production)",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=cores(),
        metavar="N",
        help=f"worker processes for verifying and rendering guides (default: {cores()}, "
        "the cores this machine gives the build; 1 for none)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither reuse nor keep verified records and rendered guides (.cache/)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only warnings and errors")
    parser.add_argument(
        "--timings", action="store_true", help="print how long each build stage took (stderr)"
    )
    return parser


def _port(text: str) -> int:
    """Parse a TCP port number."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"'{text}' is not a port number (0-65535)")
    return int(text)


def _jobs(text: str) -> int:
    """Parse a worker count."""
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of jobs (1-64)")
    return int(text)


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while a build runs, so a stopped build removes its work."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Raise KeyboardInterrupt, as Ctrl-C does."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, default_root: Path | None = None) -> int:
    """Run the command line; return the exit code."""
    collect_less()
    args = make_parser().parse_args(argv)
    root = args.root or default_root or Path.cwd()
    if not (root / "records").is_dir():
        print(f"error: {root}: not a project folder (no records/ inside)", file=sys.stderr)
        return 2
    try:
        today = today_from(os.environ)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    production = args.production or os.environ.get("CONTEXT") == "production"
    if production and args.drafts:
        print("error: a production deploy never includes drafts; drop --drafts", file=sys.stderr)
        return 2
    config = BuildConfig.for_root(
        root,
        args.out.resolve() if args.out else None,
        today=today,
        include_drafts=args.drafts,
        production=production,
        jobs=args.jobs,
        cache=not args.no_cache,
    )
    for line in tidy(config.out_dir):
        print(line, file=sys.stderr)
    if args.new:
        return _new(config, args.new)
    if args.import_sitemap:
        return _import(config, args.import_sitemap)
    if args.serve:
        return _serve(config, args.host, args.port)
    started = time.perf_counter()
    try:
        with _stopped_by_sigterm(), stage_display(not args.quiet and args.format == "text") as show:
            report = build(config, write=not args.audit, on_stage=show, html=not args.audit)
            if args.format == "json" or args.audit:  # read here: a damaged cache is one line
                report = replace(report, verifications=tuple(report.verifications))
    except KeyboardInterrupt:
        tidy(config.out_dir, ours=True)
        print(
            "Stopped: the site was not written; the previous output is untouched.", file=sys.stderr
        )
        return 130
    except InputError as error:
        return _failed(problems_as_findings(error.problems), args, "input error")
    except (OutputError, BuilderError, OSError) as error:  # OSError: a file it may not read
        if isinstance(error, OutputError | BuilderError):
            print(error, file=sys.stderr)
        else:
            print(
                f"{_named(error, root.resolve())}: file: {error.strerror or error}", file=sys.stderr
            )
        print(
            "Aborted: the site was not written; the previous output is untouched.", file=sys.stderr
        )
        return 1
    if args.timings:
        print(format_timings(report.timings), file=sys.stderr)
    findings = list(report.findings)
    pages = sum(1 for page in report.pages if page.path.endswith(".html"))
    checked = report.verifications
    if counts(findings)["errors"]:
        return _failed(findings, args, "check error", pages=pages, verifications=checked)
    if args.format == "json":
        print(format_json(findings, pages, checked))
    elif args.audit or any(f.severity == "warning" and not f.acknowledged for f in findings):
        text = format_text(findings, pages, include_info=args.audit, verifications=checked)
        print(text, file=sys.stderr)
    if not args.quiet and args.format == "text":
        seconds = time.perf_counter() - started
        print(outcome(report, config.out_dir, args.audit, config.include_drafts, seconds))
    return 0


def _named(error: OSError, root: Path) -> str:
    """Return the file an error names, relative to the project where it is inside it."""
    if error.filename is None:
        return "(project)"
    path = Path(os.fsdecode(error.filename))
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
    return shown.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _failed(
    findings: list[Finding],
    args: argparse.Namespace,
    kind: str,
    pages: int = 0,
    verifications: Sequence[Verification] = (),
) -> int:
    """Report a failed run: JSON on stdout, or one line per error and a summary on stderr."""
    if args.format == "json":
        print(format_json(findings, pages, verifications))
        return 1
    errors = [f for f in findings if f.severity == "error"]
    if kind == "input error":
        for finding in errors:
            print(one_line(f"{finding.source}: {finding.message}"), file=sys.stderr)
    else:
        text = format_text(findings, pages, include_info=args.audit, verifications=verifications)
        print(text, file=sys.stderr)
    count = len(errors)
    plural = "s" if count != 1 else ""
    print(f"Aborted: {count} {kind}{plural}; nothing was written.", file=sys.stderr)
    return 1


def _import(config: BuildConfig, sitemap: Path) -> int:
    """Merge a sitemap into the registry and say what changed."""
    from site_builder.commands.registry import import_sitemap  # a build does not need it

    try:
        result = import_sitemap(config, sitemap)
    except InputError as error:
        return _abort(error.problems, "the registry is unchanged.")
    except OutputError as error:
        return _abort([error], "the registry is unchanged.")
    print(
        f"Imported {sitemap}: {result.read} URLs read, {result.added} added, "
        f"{result.updated} lastmod updated, {result.foreign} on other hosts ignored, "
        f"{len(result.merged)} spelled differently merged; the registry now has "
        f"{result.total} pages."
    )
    if result.unreadable:
        print("Imported without their lastmod (not a sitemap date or time, so crawlers ignore it):")
        for url, lastmod in result.unreadable:
            print(one_line(f"  {url}: {lastmod!r}"))
    if result.merged:
        print("Merged into the registry's spelling (same page; the registry keeps its URL):")
        for spelled, registered in result.merged:
            print(one_line(f"  {spelled} -> {registered}"))
    return 0


def _new(config: BuildConfig, record: Path) -> int:
    """Scaffold the prose file of a record; never overwrite."""
    from site_builder.commands.scaffold import scaffold_guide  # a build does not need it

    try:
        written = scaffold_guide(config, record, config.build_date)
    except InputError as error:
        return _abort(error.problems, "nothing was written.")
    print(
        f"Wrote {written.relative_to(config.root).as_posix()} (a draft): rewrite its proposed "
        f"title, description and reader job, write the prose, then preview with --serve."
    )
    return 0


def _abort(problems: Sequence[object], outcome: str) -> int:
    """Print one line per problem, then what was left undone; return exit code 1."""
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"Aborted: {outcome}", file=sys.stderr)
    return 1


def _serve(config: BuildConfig, host: str, port: int) -> int:
    """Run the live preview until Ctrl-C."""
    from site_builder.preview.serve import serve  # a build does not need the server

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def ready(url: str) -> None:
        print(f"Serving the preview at {url} (Ctrl-C to stop)", flush=True)

    try:
        serve(config, host, port, log, ready)
    except ServeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("Stopped.", flush=True)
    return 0
