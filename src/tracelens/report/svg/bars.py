"""Horizontal bar charts: one bar per row (:func:`hbars`), or A above B on one scale
(:func:`paired_hbars`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from ...units import fmt_ns
from .style import INK, MONO, MUTED, clip_text, coord, element


@dataclass
class Bar:
    label: str
    value: float
    color: str
    right: str = ""  # text after the bar (value, share)
    tip: str = ""  # tooltip (full name, numbers)
    mono: bool = False  # label in monospace (kernel names)


def label_chars(label_width: int, mono: bool) -> int:
    """How many characters of a bar label fit in ``label_width`` px."""
    return int((label_width - 10) / (6.6 if mono else 6.0))


def hbars(
    rows: Sequence[Bar],
    *,
    width: int = 560,
    label_width: int = 230,
    bar_height: int = 14,
    gap: int = 5,
    right_width: int = 120,
) -> Markup:
    """Horizontal bars, largest scale = the largest value."""
    if not rows:
        return Markup("")
    plot = width - label_width - right_width
    vmax = max((r.value for r in rows), default=0) or 1
    chars = label_chars(label_width, any(r.mono for r in rows))
    out = []
    for i, r in enumerate(rows):
        y = i * (bar_height + gap)
        w = max(plot * r.value / vmax, 1 if r.value > 0 else 0)
        family = f' font-family="{MONO}"' if r.mono else ""
        tip = f' data-tip="{escape(r.tip)}"' if r.tip else ""
        out.append(
            f'<g class="bar"{tip}>'
            f'<rect x="0" y="{y}" width="{width}" height="{bar_height + gap}" fill="transparent"/>'
            f'<text x="{label_width - 8}" y="{y + bar_height - 3}" text-anchor="end" '
            f'fill="{INK}"{family}>{escape(clip_text(r.label, chars))}</text>'
            f'<rect x="{label_width}" y="{y}" width="{coord(w)}" height="{bar_height}" rx="2" '
            f'fill="{r.color}"/>'
            f'<text x="{coord(label_width + w + 6)}" y="{y + bar_height - 3}" fill="{MUTED}">'
            f"{escape(r.right)}</text></g>"
        )
    height = len(rows) * (bar_height + gap)
    return element(width, height, out, cls="hbars")


@dataclass
class PairBar:
    label: str
    a: float
    b: float
    color: str
    right: str = ""  # e.g. the ratio
    tip: str = ""
    mono: bool = False
    emphasis: bool = False  # draw the right text bold (a big change)


def paired_hbars(
    rows: Sequence[PairBar],
    *,
    width: int = 560,
    label_width: int = 230,
    right_width: int = 120,
    bar_height: int = 7,
    gap: int = 7,
    fmt=fmt_ns,
) -> Markup:
    """Two bars per row: A (grey, above) and B (colored, below), on one scale."""
    if not rows:
        return Markup("")
    plot = width - label_width - right_width
    vmax = max((max(r.a, r.b) for r in rows), default=0) or 1
    chars = label_chars(label_width, any(r.mono for r in rows))
    row_h = 2 * bar_height + 1 + gap
    out = []
    for i, r in enumerate(rows):
        y = i * row_h
        wa = max(plot * r.a / vmax, 1 if r.a > 0 else 0)
        wb = max(plot * r.b / vmax, 1 if r.b > 0 else 0)
        family = f' font-family="{MONO}"' if r.mono else ""
        tip = f' data-tip="{escape(r.tip)}"' if r.tip else ""
        weight = ' font-weight="600"' if r.emphasis else ""
        color = INK if r.emphasis else MUTED
        out.append(
            f'<g class="bar"{tip}>'
            f'<rect x="0" y="{y}" width="{width}" height="{row_h}" fill="transparent"/>'
            f'<text x="{label_width - 8}" y="{y + bar_height + 4}" text-anchor="end" '
            f'fill="{INK}"{family}>{escape(clip_text(r.label, chars))}</text>'
            f'<rect x="{label_width}" y="{y}" width="{coord(wa)}" height="{bar_height}" rx="1.5" '
            f'fill="{r.color}" fill-opacity="0.35"/>'
            f'<rect x="{label_width}" y="{y + bar_height + 1}" width="{coord(wb)}" '
            f'height="{bar_height}" rx="1.5" fill="{r.color}"/>'
            f'<text x="{coord(label_width + max(wa, wb) + 6)}" y="{y + bar_height + 4}" '
            f'fill="{color}"{weight}>{escape(r.right)}</text></g>'
        )
    return element(width, len(rows) * row_h, out, cls="hbars paired")
