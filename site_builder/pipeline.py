"""The one function that knows the order: load, validate, assemble, verify, render, index, check, write."""

from __future__ import annotations

from collections.abc import Mapping

from site_builder.acknowledge import acknowledge
from site_builder.assemble import assemble
from site_builder.checks import check_published, ordered, run_checks
from site_builder.claims import Verification
from site_builder.config import BuildConfig
from site_builder.deploy import static_pages
from site_builder.load import load_inputs
from site_builder.models import BuildReport, Normalized, Page, Site
from site_builder.normalize import normalize
from site_builder.render import render_site
from site_builder.search import search_pages
from site_builder.verify import verify_site
from site_builder.vocabulary import using
from site_builder.write import write_site


def build(config: BuildConfig, *, write: bool = True) -> BuildReport:
    """Build the site; write it unless `write` is false or a check found an error.

    Drafts are checked like every guide; unless `config.include_drafts`, the site written is
    rendered again without them, and that deploy is checked too.
    """
    normalized = normalize(load_inputs(config))
    # Keys read by shape anywhere in a record (caveats, verdicts) and word spellings come
    # from the project's vocabulary for the whole build.
    with using(normalized.vocabulary):
        return _build(normalized, config, write)


def _build(normalized: Normalized, config: BuildConfig, write: bool) -> BuildReport:
    """Assemble, verify, render, check and write one validated project."""
    site = assemble(normalized, config.build_date, production=config.production)
    verifications = verify_site(site)
    leave_out_drafts = bool(site.drafts) and not config.include_drafts
    pages = _render(site, config, verifications)
    findings = run_checks(site, pages, verifications, deploy=not leave_out_drafts)
    if leave_out_drafts:
        published = site.without_drafts()
        pages = _render(published, config, verifications)
        seen = set(findings)
        findings = ordered(
            [*findings, *(f for f in check_published(published, pages) if f not in seen)]
        )
    findings = acknowledge(site, findings)
    if write and not any(finding.severity == "error" for finding in findings):
        write_site([*pages, *static_pages(site)], config.out_dir, inputs=config.input_dirs)
    return BuildReport(
        tuple(pages),
        tuple(findings),
        len(site.guides) - len(site.drafts) * leave_out_drafts,
        tuple(verifications.values()),
        drafts=tuple(guide.url for guide in site.drafts),
    )


def _render(
    site: Site, config: BuildConfig, verifications: Mapping[str, Verification]
) -> list[Page]:
    """Render every page of `site` and its search index."""
    pages = render_site(site, config, verifications)
    return pages + search_pages(pages, site.settings.language)
