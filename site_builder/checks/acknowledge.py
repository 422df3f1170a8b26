"""Warnings an editor has read and accepts, each with a reason, so builds stop repeating them.

An acknowledgement lives in a guide's front matter (`acknowledge:`, about that guide's page)
or in the site's baseline file (content/acknowledged.yaml). It matches warnings by check, and
optionally by page, file and a piece of the message. Errors are never acknowledged (a
production build's `deploy` error stays an error), but one that matches an error is not stale.
One that matches nothing is stale and is itself a warning, so the list cannot silently rot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from site_builder.model.models import Finding, Site
from site_builder.model.schema import Acknowledgement
from site_builder.urls import page_key

BASELINE = "content/acknowledged.yaml"


@dataclass(frozen=True)
class _Entry:
    """One acknowledgement and where it was written."""

    ack: Acknowledgement
    source: str
    location: str
    page: str | None


def acknowledge(site: Site, findings: Sequence[Finding]) -> list[Finding]:
    """Mark acknowledged warnings with their reason; add a warning per stale acknowledgement."""
    entries = _entries(site)
    used: set[int] = set()
    marked = []
    for finding in findings:
        index = _first_match(entries, finding) if finding.severity != "info" else None
        if index is not None:
            used.add(index)  # an error it matches keeps it current, but is never acknowledged
        if index is None or finding.severity == "error":
            marked.append(finding)
            continue
        marked.append(replace(finding, acknowledged=entries[index].ack.reason))
    for index, entry in enumerate(entries):
        if index in used:
            continue
        what = f"'{entry.ack.check}'" + (
            f" matching {entry.ack.match!r}" if entry.ack.match else ""
        )
        message = (
            f"{entry.location}: acknowledges a {what} warning, but no such warning remains; "
            f"remove the acknowledgement"
        )
        marked.append(Finding("acknowledge", "warning", entry.source, message, entry.page or ""))
    return marked


def _entries(site: Site) -> list[_Entry]:
    """Return every acknowledgement: each guide's, then the baseline file's."""
    entries = [
        _Entry(ack, guide.source, f"front matter.acknowledge.{index}", guide.url)
        for guide in site.guides
        if guide.doc_source is not None
        for index, ack in enumerate(guide.acknowledge)
    ]
    base = site.settings.base_url
    for index, ack in enumerate(site.acknowledged):
        page = None if ack.page is None else (page_key(ack.page, base) or ack.page)
        entries.append(_Entry(ack, BASELINE, f"acknowledged.{index}", page))
    return entries


def _first_match(entries: list[_Entry], finding: Finding) -> int | None:
    """Return the index of the first acknowledgement that covers a warning."""
    for index, entry in enumerate(entries):
        ack = entry.ack
        if ack.check != finding.check or ack.match not in finding.message:
            continue
        if entry.page is not None and entry.page != (finding.page or ""):
            continue
        if ack.source is not None and ack.source != finding.source:
            continue
        return index
    return None
