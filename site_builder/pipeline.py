"""The one function that knows the order: load, validate, assemble, verify, render, index, check, write."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from site_builder.cache.fragments import FRAGMENTS
from site_builder.cache.reuse import VERIFY, code_digest, evidence_digest
from site_builder.cache.store import BuildCache
from site_builder.checks.acknowledge import acknowledge
from site_builder.checks.site import check_published, ordered, run_checks
from site_builder.config import BuildConfig
from site_builder.inputs.assemble import assemble
from site_builder.inputs.kept_fronts import FRONTS
from site_builder.inputs.kept_records import HEADS, KeptHeads, holds_records, release_bodies
from site_builder.inputs.listing import KnownFiles
from site_builder.inputs.load import VOCABULARY_NAME, load_inputs
from site_builder.inputs.normalize import normalize
from site_builder.model.claims import Verification
from site_builder.model.models import BuildReport, Finding, Normalized, Page, Site
from site_builder.model.vocabulary import using
from site_builder.output.search import SearchIndex, promised_pages
from site_builder.output.shard_cache import FILE_ENTRY, SHARD_ENTRY
from site_builder.output.shards import marked
from site_builder.output.unchanged import (
    input_digests,
    input_times,
    inputs_key,
    inputs_unchanged,
    remember,
    remembered,
)
from site_builder.output.write import SPARE, StagedSite, write_site
from site_builder.present.navigation import RELATED
from site_builder.render.deploy import static_pages
from site_builder.render.site_pages import render_site
from site_builder.render.stored_pages import (
    HTML,
    SCAN,
    SEARCH_PAGE,
    finished,
    links_folder,
    settled,
)
from site_builder.runtime.stopwatch import Stopwatch
from site_builder.verify.kept_verifications import Deferred
from site_builder.verify.records import kept_or_deferred_site, settle_deferred, verify_site


def build(
    config: BuildConfig,
    *,
    write: bool = True,
    cache: BuildCache | None = None,
    search: bool = True,
    on_stage: Callable[[str], None] | None = None,
    serve: Callable[[list[Page], BuildReport], None] | None = None,
    html: bool = True,
    known: KnownFiles | None = None,
) -> BuildReport:
    """Build the site; write it unless `write` is false or a check found an error. A build
    that does not write returns its guide and tag pages without their bytes if `html` is
    false (`--audit`: the checks read what rendering collected, not the HTML).

    Drafts are checked like every guide; unless `config.include_drafts`, the site written is
    rendered again without them, and that deploy is checked too. A build to write whose
    inputs are those of the build that wrote the output folder (unchanged since) does nothing;
    so does an audit (`write` and `html` false) whose inputs are those of an earlier build or
    audit: their report is read back.

    The preview passes its own `cache` (kept in memory between rebuilds) and `serve`: the
    site's files are handed to it instead of written (the preview serves them from memory).
    With `search=False` too (the preview indexes in the background after its first build),
    they are handed over before the checks run, so the editor sees a change while the checks
    run; their findings are in the report. With `known` (the preview's), the input files
    nobody saw change since the last build are not looked at again.
    """
    clock = Stopwatch(on_stage)
    if cache is None and config.cache_dir is not None:
        cache = BuildCache(config.cache_dir)
    if cache is not None:
        cache.begin()
    key, since = "", time.time_ns()
    times: dict[str, tuple[int, int]] = {}
    audit = not write and not html  # `--audit`: the report alone
    heads, holding = None, False
    if cache is not None and serve is None and (audit or (write and search)):
        with clock.stage("unchanged"):
            times = input_times(config)
            digests = input_digests(config, cache)
            key = inputs_key(config, digests=digests)
            earlier = remembered(cache, key, None if audit else config.out_dir)
        if earlier is not None:
            return replace(earlier, timings=tuple(clock.seconds.items()), unchanged=True)
        vocabulary = os.path.relpath(config.content_dir / VOCABULARY_NAME, config.root)
        heads = KeptHeads(cache, code_digest(), digests, vocabulary)
        records = os.path.join(config.records_dir, "")
        holding = holds_records(
            size for path, (size, _) in times.items() if path.startswith(records)
        )
    with clock.stage("load"):
        inputs = load_inputs(config, cache, known, kept=heads.kept if heads else ())
    with clock.stage("validate"):
        kept, hold, spread = None, None, None
        if heads is not None:  # with workers, a big site's records are let go as they are read
            kept = partial(heads.evidence, config.root)
            digest_of = partial(evidence_digest, cache=None)
            release = config.jobs > 1 and not holding
            hold = partial(heads.hold, config.root, digest_of, release)
            if release:  # and validated over the workers too, whose bodies stay there
                spread = partial(heads.sent, digest_of)
        normalized = normalize(inputs, cache, kept, hold, spread, config.jobs)
    del inputs
    # Keys read by shape anywhere in a record (caveats, verdicts) and word spellings come
    # from the project's vocabulary for the whole build.
    with using(normalized.vocabulary):
        output = Output(write, search, serve, html or write)
        report = _build(normalized, config, output, clock, cache, holding)
        if heads is not None:
            with clock.stage("write" if report.written else "remember"):
                # Inputs saved while this build ran: the next one must not skip them.
                if inputs_unchanged(config, times, key, since, cache):
                    heads.keep((e, evidence_digest(e, cache)) for e in normalized.evidence)
                    if report.written or audit:
                        where = config.out_dir if report.written else None
                        remember(cache, key, report, where)
                if audit:  # it stored the pages and checks it made: the cache must not grow
                    _prune(cache, indexed=False, added_only=True)
    return replace(report, timings=tuple(clock.seconds.items()))


@dataclass(frozen=True)
class Output:
    """What a build writes: whether it writes at all, with a search index, linking from where."""

    write: bool
    search: bool = True
    serve: Callable[[list[Page], BuildReport], None] | None = None
    """Hand the files to this instead of writing them (see `build`)."""
    html: bool = True
    """Whether the pages returned carry their bytes (see `build`)."""


def _build(
    normalized: Normalized,
    config: BuildConfig,
    output: Output,
    clock: Stopwatch,
    cache: BuildCache | None,
    holding: bool = False,
) -> BuildReport:
    """Assemble, verify, render, check and write one validated project; `holding` its
    records and their checks in memory (`kept_records.holds_records`), or letting go of them
    for the workers to read their own.

    Pagefind indexes the site to be written in a child process while the checks run and the
    site's own files are written to a staging folder; its bundle joins them before the swap.
    """
    with clock.stage("validate"):
        site = assemble(normalized, config.build_date, production=config.production, cache=cache)
    # With a cache on disk, the records it has no verification of are verified by the
    # workers rendering their pages (`Deferred`), which read each record once.
    deferred: dict[str, Deferred] = {}
    with clock.stage("verify"):
        if cache is not None and cache.memory is None and output.serve is None:
            verifications, deferred = kept_or_deferred_site(site, cache)
        else:
            verifications = verify_site(site, config.jobs, cache, hold=holding)
    if config.jobs > 1 and not holding:  # the workers rendering pages read their records
        release_bodies(normalized.evidence)
    write, indexed = output.write, output.write and output.search
    leave_out_drafts = bool(site.drafts) and not config.include_drafts
    with ExitStack() as stack:
        wanted = indexed and not leave_out_drafts
        shown_first = output.serve is not None and write and not wanted and not leave_out_drafts
        on_disk = None
        if output.write and output.serve is None and cache is not None:
            on_disk = stack.enter_context(links_folder(config.out_dir, cache))
        # Pagefind indexes the pages marking what it indexes, the guide pages: it starts as
        # soon as they are rendered, before the pages listing them.
        searching: list[SearchIndex | None] = [None]
        searched: set[str] = set()

        guide_pages = (0, 0)  # taken from the cache, made

        def guides_rendered(guides: list[Page]) -> None:
            nonlocal guide_pages
            guide_pages = (sum(page.cached for page in guides), len(guides))
            if wanted and any(map(marked, guides)):  # else it indexes every page (`sharded`)
                searched.update(page.path for page in guides)
                searching[0] = _start_search(stack, guides, site, config, wanted, clock, cache)

        with clock.stage("render"):
            pages = render_site(
                site,
                config,
                verifications,
                cache,
                html=output.html and not leave_out_drafts,
                later=shown_first,
                on_disk=on_disk,
                deferred=deferred,
                guides_rendered=guides_rendered,
            )
        if deferred and cache is not None:
            with clock.stage("verify"):
                pages, verifications = settle_deferred(
                    site, pages, verifications, deferred, cache, config.jobs
                )
        search = searching[0]
        if search is not None and any(marked(p) for p in pages if p.path not in searched):
            search.close()  # a template marks another page too: index them all, as below
            search = None
        if search is None:
            search = _start_search(stack, pages, site, config, wanted, clock, cache)
        if shown_first:
            with clock.stage("write"):
                _write(pages, site, config, output, _report(site, pages, (), verifications, True))
                _prune(cache, indexed=False)
            with clock.stage("check"):
                pages = finished(pages)
                findings = acknowledge(
                    site, run_checks(site, [*pages, *promised_pages()], verifications, cache=cache)
                )
            return _report(site, pages, findings, verifications, written=True)
        with clock.stage("check"):
            checked = [*pages, *promised_pages()]
            drafts = not leave_out_drafts
            findings = run_checks(site, checked, verifications, deploy=drafts, cache=cache)
        if leave_out_drafts:
            published = site.without_drafts()
            with clock.stage("render"):
                pages = render_site(
                    published, config, verifications, cache, html=output.html, on_disk=on_disk
                )
            search = _start_search(stack, pages, site, config, indexed, clock, cache)
            with clock.stage("check"):
                seen = set(findings)
                published_findings = check_published(published, [*pages, *promised_pages()])
                findings = ordered([*findings, *(f for f in published_findings if f not in seen)])
        findings = acknowledge(site, findings)
        written = write and not any(finding.severity == "error" for finding in findings)
        staged = None
        if written and search is not None and output.serve is None:
            # The site's own files are written while Pagefind finishes; its bundle joins them.
            staged = stack.enter_context(
                StagedSite(config.out_dir, config.input_dirs, _spare(cache))
            )
            with clock.stage("write"):
                staged.add([*pages, *static_pages(site)])
                if on_disk is not None:  # the site links its pages now: let go of the folder
                    shutil.rmtree(on_disk, ignore_errors=True)
        bundle: list[Page] = []
        if written and search is not None:
            with clock.stage("search index"):  # each shard's bundle staged as it is made
                bundle = search.pages(staged.add if staged is not None else None)
        pages += bundle
        report = _report(site, pages, findings, verifications, written, leave_out_drafts)
        report = replace(report, guide_pages=guide_pages)
        if written:
            with clock.stage("write"):
                if staged is None:
                    _write(pages, site, config, output, report, _spare(cache))
                else:
                    staged.publish()
                _prune(cache, indexed=search is not None)
        if on_disk is not None:  # its links are removed as the build ends
            report = replace(report, pages=settled(report.pages, config.out_dir, written))
    return report


def _spare(cache: BuildCache | None) -> Path | None:
    """Return where the build cache keeps the site the next build stages into (`write.SPARE`):
    none without a cache."""
    return cache.folder / SPARE if cache is not None else None


def _write(
    pages: list[Page],
    site: Site,
    config: BuildConfig,
    output: Output,
    report: BuildReport,
    spare: Path | None = None,
) -> None:
    """Write the pages and static files, or hand them to `output.serve`."""
    files = [*pages, *static_pages(site)]
    if output.serve is not None:
        output.serve(files, report)
    else:
        write_site(files, config.out_dir, config.input_dirs, spare)


def _prune(cache: BuildCache | None, indexed: bool, added_only: bool = False) -> None:
    """Drop the entries this build did not use; the search index's only if it indexed; with
    `added_only`, only of the kinds it stored entries of (an audit: no others can grow). A
    kind it used no entry of is left alone (the preview keeps cards and front matter in
    memory: the next command-line build still reads its own)."""
    if cache is not None:
        search = (SHARD_ENTRY, FILE_ENTRY, SEARCH_PAGE) if indexed else ()
        for kind in (VERIFY, SCAN, HTML, HEADS, RELATED, FRAGMENTS, FRONTS, *search):
            if kind in cache.added or (cache.used.get(kind) and not added_only):
                cache.prune(kind)
        cache.forget_unused()
        cache.drop_other_versions()


def _report(
    site: Site,
    pages: list[Page],
    findings: Sequence[Finding],
    verifications: Mapping[str, Verification],
    written: bool,
    drafts_left_out: bool = False,
) -> BuildReport:
    """The report of one build."""
    return BuildReport(
        tuple(pages),
        tuple(findings),
        len(site.guides) - len(site.drafts) * drafts_left_out,
        tuple(verifications.values()),
        drafts=tuple(guide.url for guide in site.drafts),
        written=written,
        language=site.settings.language,
        search_shard_pages=site.settings.search_shard_pages,
    )


def _start_search(
    stack: ExitStack,
    pages: list[Page],
    site: Site,
    config: BuildConfig,
    wanted: bool,
    clock: Stopwatch,
    cache: BuildCache | None,
) -> SearchIndex | None:
    """Start indexing the pages to be written, if any will be (a shard whose pages did not
    change comes from `cache`); `stack` stops it on exit."""
    if not wanted:
        return None
    with clock.stage("search index"):
        settings = site.settings
        index = SearchIndex(
            pages,
            settings.language,
            config.out_dir.resolve(),
            shard_pages=settings.search_shard_pages,
            cache=cache,
        )
        return stack.enter_context(index)
