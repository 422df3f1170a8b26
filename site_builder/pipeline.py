"""The one function that knows the order: load, validate, assemble, verify, render, index, check, write."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace

from site_builder.acknowledge import acknowledge
from site_builder.assemble import assemble
from site_builder.cache import BuildCache
from site_builder.checks import check_published, ordered, run_checks
from site_builder.config import BuildConfig
from site_builder.deploy import static_pages
from site_builder.load import load_inputs
from site_builder.models import BuildReport, Normalized, Page, Site
from site_builder.normalize import normalize
from site_builder.render import render_site
from site_builder.search import SearchIndex, promised_pages
from site_builder.unchanged import inputs_key, remember, remembered
from site_builder.verify import verify_site
from site_builder.vocabulary import using
from site_builder.write import write_site


class Stopwatch:
    """Wall seconds each stage of one build took (a stage run twice adds up), in run order."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time one stage."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


def build(config: BuildConfig, *, write: bool = True) -> BuildReport:
    """Build the site; write it unless `write` is false or a check found an error.

    Drafts are checked like every guide; unless `config.include_drafts`, the site written is
    rendered again without them, and that deploy is checked too. A build to write whose
    inputs are those of the build that wrote the output folder (unchanged since) does nothing.
    """
    clock = Stopwatch()
    cache = BuildCache(config.cache_dir) if config.cache_dir else None
    key = ""
    if cache is not None and write:
        with clock.stage("unchanged"):
            key = inputs_key(config)
            earlier = remembered(cache, key, config.out_dir)
        if earlier is not None:
            return replace(earlier, timings=tuple(clock.seconds.items()), unchanged=True)
    with clock.stage("load"):
        inputs = load_inputs(config)
    with clock.stage("validate"):
        normalized = normalize(inputs)
    # Keys read by shape anywhere in a record (caveats, verdicts) and word spellings come
    # from the project's vocabulary for the whole build.
    with using(normalized.vocabulary):
        report = _build(normalized, config, write, clock, cache)
        if key and report.written:
            with clock.stage("write"):
                # Inputs saved while this build ran: the next build must not skip.
                if inputs_key(config) == key:
                    remember(cache, key, report, config.out_dir)
    return replace(report, timings=tuple(clock.seconds.items()))


def _build(
    normalized: Normalized,
    config: BuildConfig,
    write: bool,
    clock: Stopwatch,
    cache: BuildCache | None,
) -> BuildReport:
    """Assemble, verify, render, check and write one validated project.

    Pagefind indexes the site to be written in a child process while the checks run.
    """
    with clock.stage("validate"):
        site = assemble(normalized, config.build_date, production=config.production)
    with clock.stage("verify"):
        verifications = verify_site(site, config.jobs, cache)
    leave_out_drafts = bool(site.drafts) and not config.include_drafts
    with ExitStack() as stack:
        with clock.stage("render"):
            pages = render_site(site, config, verifications, cache)
        search = _start_search(stack, pages, site, write and not leave_out_drafts, clock)
        with clock.stage("check"):
            checked = [*pages, *promised_pages()]
            findings = run_checks(site, checked, verifications, deploy=not leave_out_drafts)
        if leave_out_drafts:
            published = site.without_drafts()
            with clock.stage("render"):
                pages = render_site(published, config, verifications, cache)
            search = _start_search(stack, pages, site, write, clock)
            with clock.stage("check"):
                seen = set(findings)
                published_findings = check_published(published, [*pages, *promised_pages()])
                findings = ordered([*findings, *(f for f in published_findings if f not in seen)])
        findings = acknowledge(site, findings)
        written = write and not any(finding.severity == "error" for finding in findings)
        if written:
            if search is not None:
                with clock.stage("search index"):
                    pages += search.pages()
            with clock.stage("write"):
                write_site([*pages, *static_pages(site)], config.out_dir, inputs=config.input_dirs)
                if cache is not None:
                    cache.prune("verify")
                    cache.prune("page")
    return BuildReport(
        tuple(pages),
        tuple(findings),
        len(site.guides) - len(site.drafts) * leave_out_drafts,
        tuple(verifications.values()),
        drafts=tuple(guide.url for guide in site.drafts),
        written=written,
    )


def _start_search(
    stack: ExitStack, pages: list[Page], site: Site, wanted: bool, clock: Stopwatch
) -> SearchIndex | None:
    """Start indexing the pages to be written, if any will be; `stack` stops it on exit."""
    if not wanted:
        return None
    with clock.stage("search index"):
        return stack.enter_context(SearchIndex(pages, site.settings.language))
