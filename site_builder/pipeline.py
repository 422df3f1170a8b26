"""The one function that knows the order: load, validate, assemble, verify, render, index, check, write."""

from __future__ import annotations

from site_builder.assemble import assemble
from site_builder.checks import run_checks
from site_builder.config import BuildConfig
from site_builder.load import load_inputs
from site_builder.models import BuildReport
from site_builder.normalize import normalize
from site_builder.render import render_site
from site_builder.search import search_pages
from site_builder.verify import verify_site
from site_builder.write import write_site


def build(config: BuildConfig, *, write: bool = True) -> BuildReport:
    """Build the site; write it unless `write` is false or a check found an error."""
    site = assemble(normalize(load_inputs(config)))
    verifications = verify_site(site)
    pages = render_site(site, config, verifications)
    pages += search_pages(pages, site.settings.language)
    findings = run_checks(site, pages, verifications)
    if write and not any(finding.severity == "error" for finding in findings):
        write_site(pages, config.out_dir, inputs=config.input_dirs)
    return BuildReport(
        tuple(pages), tuple(findings), len(site.guides), tuple(verifications.values())
    )
