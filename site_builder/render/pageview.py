"""Build each guide page's view in one stage before Jinja runs: every id handed out once.

The template's own ids are reserved first (read from the templates, declared there once);
then the decision box, the record sections and their nested blocks, the model facts and
last the prose headings claim theirs, in that order, so a record section named `sources`
or `invariants` gets `sources-2` and its anchors stay stable whatever the prose says.
Ids derived from a block's anchor (numbered caveats, chart titles) are reserved with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from site_builder.model.claims import Verification
from site_builder.model.images import find_image
from site_builder.model.models import Guide, Site
from site_builder.present.blocks import Block, Group, Table
from site_builder.present.charts import Chart
from site_builder.present.ids import PageIds
from site_builder.present.views import GuideView, Section, guide_view
from site_builder.render.markdown import Rendered, render_markdown
from site_builder.urls import page_key

SITE_PAGES = frozenset(
    {"/", "/guides/", "/tags/", "/search/", "/404.html", "/sitemap.xml", "/robots.txt", "/atom.xml"}
)
SITE_FOLDERS = ("/assets/", "/tags/", "/pagefind/")


@dataclass(frozen=True)
class PageView:
    """One guide page, ready to draw: its view with unique anchors, and its rendered prose."""

    view: GuideView
    prose: Rendered


def page_view(
    guide: Guide,
    site: Site,
    verification: Verification | None,
    template_ids: frozenset[str],
    resolve_link: Callable[[str], str],
) -> PageView:
    """Return the view of one guide with every id on the page unique."""
    ids = PageIds(template_ids)
    view = guide_view(guide, site, verification)
    decision = tuple(replace(item, block=_anchored(item.block, ids)) for item in view.decision)
    sections = tuple(_section(section, ids) for section in view.sections)
    model_facts = _anchored(view.model_facts, ids)
    prose = render_markdown(
        guide.body,
        resolve_link,
        ids,
        page_path=guide.url,
        first_line=guide.body_line,
        resolve_image=partial(find_image, site.images, guide.source),
    )
    view = replace(view, decision=decision, sections=sections, model_facts=model_facts)
    return PageView(view, prose)


def _section(section: Section, ids: PageIds) -> Section:
    """Give a record section its heading id; its block shares it."""
    anchor = ids.claim(section.anchor)
    return replace(section, anchor=anchor, block=_anchored(section.block, ids, anchor))


def _anchored(block: Block, ids: PageIds, anchor: str = "") -> Block:
    """Return a block (and its children) with unique anchors, reserving the ids they derive."""
    anchor = anchor or ids.claim(block.anchor)
    if isinstance(block, Table):
        ids.reserve(f"{anchor}-note-{callout.number}" for callout in block.callouts)
        charts = tuple(_chart(chart, ids) for chart in block.charts)
        return replace(block, anchor=anchor, charts=charts)
    if isinstance(block, Group):
        children = tuple(_anchored(child, ids) for child in block.children)
        return replace(block, anchor=anchor, children=children)
    return replace(block, anchor=anchor)


def _chart(chart: Chart, ids: PageIds) -> Chart:
    """Give a chart its id and reserve the ids of its title and description."""
    anchor = ids.claim(chart.id)
    ids.reserve((f"{anchor}-title", f"{anchor}-desc"))
    return replace(chart, id=anchor)


def link_target(href: str, site: Site, looked_up: dict[str, bool] | None = None) -> str:
    """Keep links to pages built here site-relative; send other site paths to their canonical.
    Each guide path it looks up goes into `looked_up`, with whether the site has it."""
    path = href.split("#", 1)[0].split("?", 1)[0]
    if path in SITE_PAGES or path.startswith(SITE_FOLDERS):
        return href
    key = page_key(href, site.settings.base_url)
    if key is None:
        return site.canonical(href)
    built = key in site.by_url
    if looked_up is not None:
        looked_up[key] = built
    return href if built else site.canonical(href)
