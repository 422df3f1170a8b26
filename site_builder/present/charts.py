"""Lay out a table's measurements as bar charts whose geometry is computed here, not in Jinja.

`measures` decides what is charted; this module decides how it is drawn: horizontal bars
from a zero line (so negative values extend left), one group per row with its label above
it and each value printed past its bar's end. The layout is computed for a column WIDTH px
wide, the narrowest a chart must fit (a phone); the page then draws it across the whole
column: bars and the zero line at their share of the width (`Bar.start` and friends, in %),
texts at their fixed size in px, so text never scales with the column and a wide page gets
long bars rather than huge letters. Labels that would not fit WIDTH are cut with an
ellipsis (the template keeps the whole label in the group's <title>). Coordinates are
rounded to 0.1 unit. A chart that would say nothing or not fit is left out; the table stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from site_builder.present.measures import Entry, Plan, Rows, describe, entries_of, plan_charts

MAX_BARS = 40
MAX_CHARTS = 6
"""At most this many charts per table: the measures of a wide table stay readable."""
WIDTH, PAD, FONT, VALUE_FONT = 320, 8, 12, 11
"""Narrowest column width, margin, and the font sizes of labels and values, all in CSS px
(style.css draws the same sizes)."""
BAR, BAR_GAP, GROUP_GAP, GAP, SWATCH, MIN_SPAN = 16, 3, 10, 4, 12, 60
SERIES_CLASSES = ("series-a", "series-b")
_EM = dict.fromkeys("MW%@", 1.15) | dict.fromkeys("mw", 1.0) | dict.fromkeys(" .,:;'|!il", 0.36)
"""Bold glyph widths in em where the default (0.8 for capitals, else 0.66) is far off."""


@dataclass(frozen=True)
class Bar:
    """One bar (or a 'no value' mark on the zero line) and its value printed beside it."""

    series: str
    x: float
    y: float
    width: float
    height: float
    text: str
    text_x: float
    text_y: float
    anchor: str
    title: str
    missing: bool = False
    inset: float = PAD
    """Its chart's `inset`: the shares below are measured from there."""

    @property
    def start(self) -> str:
        """Where the bar starts, as a share of the chart's width."""
        return _pct(self.x - self.inset)

    @property
    def span(self) -> str:
        """How long the bar is, as a share of the chart's width."""
        return _pct(self.width)

    @property
    def text_dx(self) -> float:
        """The gap in px between the bar's end and its value (before it, for negatives)."""
        return GAP if self.anchor == "start" else -GAP

    @property
    def end(self) -> str:
        """Where the bar ends (the zero line for a missing value), as a share of the width."""
        return _pct(self.text_x - self.text_dx - self.inset)


@dataclass(frozen=True)
class BarGroup:
    """The bars of one table row under its label (cut to fit; `full` is the whole label)."""

    label: str
    full: str
    x: float
    y: float
    bars: tuple[Bar, ...]
    axis_top: float
    axis_bottom: float
    """The zero line runs beside each group's bars only, never through a label."""


@dataclass(frozen=True)
class LegendItem:
    """A series name beside a swatch drawn like that series' bars (solid or outlined)."""

    name: str
    series: str
    x: float
    y: float
    text_x: float
    text_y: float
    size: int = SWATCH


@dataclass(frozen=True)
class Chart:
    """A bar chart of some of a table's columns; `notes` number the caveats of its rows."""

    id: str
    title: str
    desc: str
    width: float
    height: float
    axis_x: float
    groups: tuple[BarGroup, ...]
    legend: tuple[LegendItem, ...]
    notes: tuple[int, ...]
    inset: float = PAD
    """Where the bars' room begins, in px from the left: in line with the labels, or past
    the room kept for the values of negative bars. It stays in px at any width."""

    @property
    def axis(self) -> str:
        """Where the zero line runs, as a share of the chart's width."""
        return _pct(self.axis_x - self.inset)


def build_charts(
    title: str, anchor: str, rows: Rows, notes: Sequence[tuple[int, ...]] = ()
) -> tuple[Chart, ...]:
    """Return a table's charts, ids derived from its anchor; `notes` are each row's caveats."""
    charts: list[Chart] = []
    for plan in plan_charts(title, rows):
        entries = entries_of(plan, rows)
        if len(charts) < MAX_CHARTS and _worth_drawing(plan, entries):
            chart = _layout(f"{anchor}-chart-{len(charts) + 1}", plan, entries, notes)
            if chart is not None:
                charts.append(chart)
    return tuple(charts)


def _worth_drawing(plan: Plan, entries: Sequence[Entry]) -> bool:
    """Return whether a chart compares something and stays within MAX_BARS."""
    found = [value for entry in entries for value in entry.values if value is not None]
    complete = any(None not in entry.values for entry in entries)
    slots = len(entries) * len(plan.series)
    return len(found) >= 2 and any(found) and complete and slots <= MAX_BARS


def _layout(
    chart_id: str, plan: Plan, entries: Sequence[Entry], notes: Sequence[tuple[int, ...]]
) -> Chart | None:
    """Return the chart with every coordinate computed, or None if its values leave no room."""
    marks = [(v, t) for entry in entries for v, t in zip(entry.values, entry.texts, strict=True)]
    found = [value for value, _ in marks if value is not None]
    right_text = max(
        (text_width(t, VALUE_FONT) for v, t in marks if v is None or v >= 0), default=0
    )
    left_text = max(
        (text_width(t, VALUE_FONT) for v, t in marks if v is not None and v < 0), default=0
    )
    low, high = min(*found, 0.0), max(*found, 0.0)
    left = PAD + (left_text + GAP if low < 0 else 0)
    span = WIDTH - PAD - right_text - GAP - left
    if span < MIN_SPAN:
        return None
    scale = span / (high - low)
    zero = left - low * scale
    legend, y = _legend(plan)
    groups = []
    for entry in entries:
        label_y, y = y + FONT, y + FONT + GAP
        top, bars = y, []
        for index, (value, text) in enumerate(zip(entry.values, entry.texts, strict=True)):
            title = f"{plan.series[index][1]}: {text}"
            bars.append(_bar(value, text, title, SERIES_CLASSES[index], (left, zero, scale), y))
            y += BAR + BAR_GAP
        shown = _fit(entry.label, WIDTH - 2 * PAD)
        bottom = y - BAR_GAP
        groups.append(
            BarGroup(shown, entry.label, PAD, _r(label_y), tuple(bars), _r(top), _r(bottom))
        )
        y = bottom + GROUP_GAP
    drawn = sorted(
        {n for entry in entries if entry.number <= len(notes) for n in notes[entry.number - 1]}
    )
    return Chart(
        chart_id,
        plan.title,
        describe(plan, entries),
        WIDTH,
        _r(y - GROUP_GAP + PAD),
        _r(zero),
        tuple(groups),
        legend,
        tuple(drawn),
        _r(left),
    )


def _bar(
    value: float | None,
    text: str,
    title: str,
    css: str,
    axis: tuple[float, float, float],
    y: float,
) -> Bar:
    """Return one bar drawn from the zero line, its value text just past its end.

    `axis` is (the chart's inset, the zero line's x, units per value).
    """
    inset, zero, scale = _r(axis[0]), axis[1], axis[2]
    text_y = _r(y + BAR / 2 + FONT * 0.35)
    if value is None:
        return Bar(
            css, _r(zero), _r(y), 0, BAR, text, _r(zero + GAP), text_y, "start", title, True, inset
        )
    start, length = zero + min(value, 0.0) * scale, abs(value) * scale
    end, anchor = (start - GAP, "end") if value < 0 else (start + length + GAP, "start")
    return Bar(
        css, _r(start), _r(y), _r(length), BAR, text, _r(end), text_y, anchor, title, False, inset
    )


def _legend(plan: Plan) -> tuple[tuple[LegendItem, ...], float]:
    """Return the legend of a chart with two series, wrapped to the width, and the y below it."""
    if len(plan.series) < 2:
        return (), PAD
    items, x, y = [], float(PAD), float(PAD)
    for index, (_, name) in enumerate(plan.series):
        shown = _fit(name, WIDTH - 2 * PAD - SWATCH - GAP)
        width = SWATCH + GAP + text_width(shown) + 3 * GAP
        if x > PAD and x + width > WIDTH - PAD:
            x, y = float(PAD), y + FONT + GAP
        text_x, text_y = _r(x + SWATCH + GAP), _r(y + FONT - 1.5)
        items.append(LegendItem(shown, SERIES_CLASSES[index], _r(x), _r(y), text_x, text_y))
        x += width
    return tuple(items), y + FONT + 2 * GAP


def text_width(text: str, size: float = FONT) -> float:
    """Return an over-estimate of a text's drawn width: no font metrics exist at build time."""
    return size * sum(map(_EMS.__getitem__, text))


def _em(char: str) -> float:
    """Return a generous width of one glyph in em (wide scripts take a full em)."""
    return _EMS[char]


class _Widths(dict[str, float]):
    """Each glyph's width (`_em`), worked out the first time it is drawn, then looked up in C
    (at most MOST_KEPT glyphs are kept)."""

    MOST_KEPT = 20_000

    def __missing__(self, char: str) -> float:
        width = 1.0 if ord(char) >= 0x2E80 else _EM.get(char, 0.8 if char.isupper() else 0.66)
        if len(self) < self.MOST_KEPT:
            self[char] = width
        return width


_EMS = _Widths()


def _fit(text: str, room: float) -> str:
    """Cut a label to fit `room` units, ending it with an ellipsis when cut."""
    if text_width(text) <= room:
        return text
    room -= text_width("…")
    used = 0.0
    for end, char in enumerate(text):
        used += _em(char) * FONT
        if used > room:
            return text[:end].rstrip() + "…"
    return text


def _r(value: float) -> float:
    """Round a coordinate to 0.1 unit; whole numbers print without '.0'."""
    rounded = round(value, 1)
    return int(rounded) if rounded == int(rounded) else rounded


def _pct(value: float) -> str:
    """Return a length as a share of WIDTH: '37.5%' (to 0.01%).

    The template draws bars `inset` px in and stretches them with the column: at WIDTH px
    they land where the layout put them; a wider column lengthens them, keeps the texts'
    size, and only adds room past their ends.
    """
    share = round(100 * value / WIDTH, 2)
    return f"{int(share) if share == int(share) else share}%"
