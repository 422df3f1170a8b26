"""Render the site's pages with Jinja (autoescape on, StrictUndefined).

The only module that imports jinja2. Rendering one guide is a pure function of that guide
and a small site-wide summary, so pages can later be rendered in parallel or alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    Environment,
    StrictUndefined,
    TemplateError,
    TemplateNotFound,
    TemplateRuntimeError,
    meta,
)
from jinja2.loaders import split_template_path
from markupsafe import Markup

from site_builder.cache.reuse import files_digest, folder_files, site_digest
from site_builder.cache.store import BuildCache, reused
from site_builder.config import BuildConfig
from site_builder.errors import BuilderError, InputError, Problem
from site_builder.model.claims import ClaimCheck, Verification
from site_builder.model.humanize import humanize_slug
from site_builder.model.models import Guide, Page, Site
from site_builder.present.cells import format_time, machine_time
from site_builder.present.navigation import SiteNavigation, keep_related, navigation_of
from site_builder.present.structured import guide_json_ld, modified_at, published_at
from site_builder.render.drawn_cells import drawn_cell, drawn_rows
from site_builder.render.page_keys import guide_page_keys
from site_builder.render.pageview import PageView, link_target, page_view
from site_builder.render.scan import scanned_guide_page
from site_builder.render.stored_pages import reused_pages
from site_builder.render.template_errors import template_problem
from site_builder.runtime import files
from site_builder.runtime.lending import lent
from site_builder.verify.kept_verifications import Deferred, verified_here

_LITERAL_ID = re.compile(r'\bid="([^"{}]+)"')
TEMPLATE_ERRORS = (TemplateError, OSError, ArithmeticError, LookupError, TypeError, ValueError)
"""What a template can raise as it is read and run: each is located in the template."""
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Characters no HTML or XML page may hold (C0 and C1 controls but tab, line feed and carriage
return): a record string carrying one is published with U+FFFD (the replacement character)."""
_C0_BYTES = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_EVERY_GUIDE = re.compile(r"\bsite\.(guides|by_url|drafts)\b")


class TemplateFiles(BaseLoader):
    """The templates as one build read them (`folder_files`), each file once: the pages are
    rendered from the very bytes their cache keys hold the digest of, whatever is saved to
    `templates/` while the build runs, and Jinja opens no file of its own."""

    def __init__(self, folder: Path, found: Mapping[str, bytes]) -> None:
        self.folder = folder
        self.found = found

    def get_source(self, environment: Environment, template: str) -> tuple[str, str, Any]:
        name = "/".join(split_template_path(template))  # no `..`: inside templates/ only
        data = self.found.get(name)
        if data is None:
            raise TemplateNotFound(template, f"{template!r} not found in {self.folder.name}/")
        # Its path, so an error is located in the file (`template_problem`); never reloaded.
        return data.decode("utf-8"), str(self.folder / name), lambda: True

    def list_templates(self) -> list[str]:
        return sorted(self.found)


def make_env(templates_dir: Path, found: Mapping[str, bytes]) -> Environment:
    """Return the Jinja environment of the templates read (`found`, see `TemplateFiles`):
    autoescape everything, fail on undefined names."""
    env = Environment(
        loader=TemplateFiles(templates_dir, found),
        auto_reload=False,
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["timestamp"] = format_time  # 2026-08-24 11:09 UTC, as cells.format_cell
    env.filters["iso"] = machine_time  # W3C, in UTC: 2026-08-24T11:09:48+00:00
    env.filters["words"] = humanize_slug
    env.globals["drawn_cell"] = drawn_cell  # a record value's HTML: hundreds a page
    env.globals["drawn_rows"] = drawn_rows  # a table's body: most of a page's cells
    return env


def environment(config: BuildConfig, cache: BuildCache | None) -> tuple[Environment, str]:
    """Return the Jinja environment of the templates and their digest, both of one reading
    of `templates/`; with the preview's cache, the environment of the last rebuild while no
    template changed. A template that is no longer a regular file (a named pipe put in its
    place since the inputs were checked) or cannot be read is a located InputError."""
    folder = config.templates_dir
    try:
        found = folder_files(folder, skip=config.assets_dir)  # read as assets, in `load`
    except OSError as error:
        problem = error.strerror or str(error)
        if isinstance(error, files.NotRegular):
            problem = "no longer a regular file; build again"
        where = Path(os.path.relpath(error.filename or folder, config.root)).as_posix()
        raise InputError([Problem(where, "file", f"cannot be read: {problem}")]) from None
    key = files_digest(found)
    return reused(cache, ("templates", key), lambda: make_env(folder, found)), key


def template_ids(env: Environment, name: str) -> frozenset[str]:
    """Return the literal ids a template and every template it uses write (`id="sources"`)."""
    return frozenset(i for source in _sources(env, name) for i in _LITERAL_ID.findall(source))


def reads_every_guide(env: Environment, name: str) -> bool:
    """Whether a template (or one it uses) reads the site's list of guides itself."""
    return any(_EVERY_GUIDE.search(source) for source in _sources(env, name))


def _sources(env: Environment, name: str) -> list[str]:
    """Return the source of a template and of every template it uses."""
    found = []
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        source = env.loader.get_source(env, current)[0] if env.loader else ""
        found.append(source)
        pending.extend(used for used in meta.find_referenced_templates(env.parse(source)) if used)
    return found


def template_macro(env: Environment, name: str, user: str) -> Any:
    """Return a macro of macros.html that `user` shows each guide with (`guide_card` as
    `card`, `feed_entry` as `entry`, see `fragments.Fragment`): the preview remembers what
    it drew for each guide between rebuilds."""
    macro = getattr(env.get_template("macros.html").module, name, None)
    if macro is None:
        raise TemplateRuntimeError(f"macros.html has no {name} macro ({user} uses it)")
    return macro


def guide_pages(
    env: Environment,
    templates_key: str,
    site: Site,
    verifications: Mapping[str, Verification],
    config: BuildConfig,
    common: dict[str, Any],
    cache: BuildCache | None,
    html: bool,
    later: bool = False,
    on_disk: Path | None = None,
    deferred: Mapping[str, Deferred] | None = None,
) -> list[Page]:
    """Build each guide's view, render it and scan it, over `config.jobs` processes; reuse
    the pages `cache` has for the same guide and site (without their bytes unless `html`)
    while the guide paths each page's prose links to are still (or still not) guides. With
    `later`, a page rendered now is scanned later; with `on_disk`, pages leave their bytes in
    the cache (see `stored_pages.reused_pages`). A guide whose verification is `deferred` is verified where
    its page is rendered, and the page carries it to the builder (`Page.verified`).

    The templates are compiled before the workers fork. A failure building a view is a
    builder bug; a template error is located here, where its traceback still exists.
    """
    try:
        reserved, every_guide = reused(
            cache,
            ("guide template", templates_key),
            lambda: (template_ids(env, "guide.html"), reads_every_guide(env, "guide.html")),
        )
        env.get_template("guide.html")
    except (TemplateError, OSError) as error:
        raise InputError([template_problem(error, config)]) from None
    navigation = navigation_of(site, cache)
    deferred = deferred or {}

    def guide_page(index: int) -> Page:
        guide = site.guides[index]
        verification = verifications.get(guide.evidence.operation_id)
        sent = None
        pending = deferred.get(guide.evidence.operation_id)
        if verification is None and pending is not None and cache is not None:
            verification, sent = verified_here(cache, pending)  # within the page's `lent`
        page = _guide_page(guide, verification)
        return page if sent is None else replace(page, verified=sent)

    def _guide_page(guide: Guide, verification: Verification | None) -> Page:
        looked_up: dict[str, bool] = {}
        try:
            view = page_view(
                guide,
                site,
                verification,
                reserved,
                partial(link_target, site=site, looked_up=looked_up),
            )
        except InputError:  # a record left on disk was saved since the build began
            raise
        except Exception as error:  # any failure here is ours, not the editor's
            raise BuilderError(guide.source, error) from error
        try:
            page = render_guide(env, view, common, navigation)
        except TEMPLATE_ERRORS as error:
            raise InputError([template_problem(error, config)]) from None
        return replace(page, lookups=tuple(sorted(looked_up.items())))

    def current(page: Page) -> bool:
        """Whether each guide path the page's prose links to is (or is not) a guide still."""
        return all((key in site.by_url) == built for key, built in page.lookups)

    def checks(guide: Guide) -> list[Sequence[ClaimCheck]]:
        verification = verifications.get(guide.evidence.operation_id)
        return [verification.checks] if verification is not None else []

    guides = site.guides
    # Not the guides' paths: a page shows the guides `navigation.shown` names (part of its
    # key) and looks up those its prose links to (`current`), no others.
    site_key = site_digest(site, templates_key, every_guide=every_guide) if cache else ""
    keys = guide_page_keys(guides, site_key, navigation, cache)
    keep_related(navigation, cache)  # every guide's, for its key
    return reused_pages(
        cache,
        len(guides),
        keys.__getitem__,
        guide_page,
        lambda index, page: scanned_guide_page(page, guides[index], site.settings.base_url),
        config.jobs,
        html=html,
        later=later,
        on_disk=on_disk,
        around=lambda index: lent(guides[index].evidence.body, *checks(guides[index])),
        reusable=current,
    )


def render_guide(
    env: Environment, page: PageView, common: dict[str, Any], navigation: SiteNavigation
) -> Page:
    """Render one guide page from its view and the site-wide summary."""
    site: Site = common["site"]
    view, prose = page.view, page.prose
    guide = view.guide
    rendered = render_page(
        env,
        f"guides/{guide.slug}/index.html",
        "guide.html",
        common,
        view=view,
        verified=view.verified,
        prose=Markup(prose.html),
        prose_headings=prose.headings,
        release=guide.evidence.pinned_release,
        json_ld=tuple(Markup(data) for data in guide_json_ld(guide, site)),
        modified=modified_at(guide),
        published=published_at(guide),
        nav=navigation.neighbours(guide),
    )
    return Page(rendered.path, rendered.content, prose.links)


def render_page(
    env: Environment, path: str, template: str, common: dict[str, Any], **context: Any
) -> Page:
    """Render one template into a Page; control characters become U+FFFD (see CONTROLS)."""
    text = env.get_template(template).render(**common, **context)
    return Page(path, published_bytes(text))


def published_bytes(text: str) -> bytes:
    """Return `text` as UTF-8 with each control character (CONTROLS) replaced by U+FFFD. The
    bytes are searched first: about three times faster than the text when there is none."""
    data = text.encode("utf-8")
    if len(data.translate(None, _C0_BYTES)) == len(data) and not _C1_UTF8.search(data):
        return data
    return CONTROLS.sub("\ufffd", text).encode("utf-8")
