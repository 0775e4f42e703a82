"""SVG charts for the HTML report: bars, duration histograms, heat maps, timelines.

Every function returns :class:`markupsafe.Markup` holding one ``<svg>`` element. Text that
reaches the SVG (kernel names, NVTX labels, tooltips) comes from the profiled program and is
untrusted: it is always passed through :func:`markupsafe.escape`, never formatted in raw.
Nothing here reads a trace; the report collects the numbers and calls these.

    style.py       colours, fonts, the <svg> element
    bars.py        hbars, paired_hbars
    histograms.py  histogram (durations), sparkline (per step)
    heatmaps.py    heatmap
    timelines.py   timeline: lanes, spans, axis
"""

from __future__ import annotations

from .bars import Bar, PairBar, hbars, label_chars, paired_hbars
from .heatmaps import heatmap
from .histograms import histogram, sparkline
from .style import (
    CATEGORY_COLORS,
    COLOR_A,
    COLOR_B,
    EXTRA,
    FONT,
    GRID,
    INK,
    MONO,
    MUTED,
    Palette,
    clip_text,
)
from .timelines import Lane, Span, Timeline, nice_step, timeline

__all__ = [
    "CATEGORY_COLORS",
    "COLOR_A",
    "COLOR_B",
    "EXTRA",
    "FONT",
    "GRID",
    "INK",
    "MONO",
    "MUTED",
    "Bar",
    "Lane",
    "PairBar",
    "Palette",
    "Span",
    "Timeline",
    "clip_text",
    "hbars",
    "heatmap",
    "histogram",
    "label_chars",
    "nice_step",
    "paired_hbars",
    "sparkline",
    "timeline",
]
