"""Charts drawn on the server as plain numbers for SVG: no script, nothing fetched.

The templates turn these into ``<rect>`` elements; sizes are SVG attributes, not inline styles, so
the page's Content-Security-Policy can forbid inline styles too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall.overview import DayActivity

CHART_WIDTH, CHART_HEIGHT, GAP = 600, 120, 2
BAR_WIDTH = 160


@dataclass(frozen=True, slots=True)
class Column:
    x: float
    y: float
    width: float
    height: float
    label: str  # the tooltip: day and counts


@dataclass(frozen=True, slots=True)
class ActivityChart:
    width: int
    height: int
    columns: tuple[Column, ...]
    peak: int  # messages on the busiest day
    first_day: str
    last_day: str
    messages: int
    sessions: int
    active_days: int


def activity_chart(days: Sequence[DayActivity]) -> ActivityChart | None:
    """One column per day, as tall as its messages against the busiest day; None with no days."""
    if not days:
        return None
    peak = max(day.messages for day in days)
    step = CHART_WIDTH / len(days)
    columns = []
    for n, day in enumerate(days):
        height = 0.0 if peak == 0 else max(1.0, CHART_HEIGHT * day.messages / peak) if day.messages else 0.0
        noun = "session" if day.sessions == 1 else "sessions"
        label = f"{day.day}: {day.sessions} {noun} started, {day.messages:,} messages"
        columns.append(Column(round(n * step, 2), round(CHART_HEIGHT - height, 2), round(step - GAP, 2),
                              round(height, 2), label))  # fmt: skip
    return ActivityChart(
        width=CHART_WIDTH,
        height=CHART_HEIGHT,
        columns=tuple(columns),
        peak=peak,
        first_day=days[0].day,
        last_day=days[-1].day,
        messages=sum(day.messages for day in days),
        sessions=sum(day.sessions for day in days),
        active_days=sum(1 for day in days if day.messages),
    )


def bar_width(value: float | None, top: float | None) -> float:
    """A score part's bar, in SVG units out of ``BAR_WIDTH``: ``value`` against ``top`` (clamped)."""
    if value is None or not top or top <= 0:
        return 0.0
    return round(BAR_WIDTH * min(1.0, max(0.0, value / top)), 1)
