"""Duration histograms (launch counts per log-duration bin, one trace or A against B) and
per-step sparklines."""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from ...units import fmt_ns
from .style import COLOR_A, COLOR_B, GRID, INK, MUTED, coord, element


def histogram(
    a: dict[int, int],
    b: dict[int, int] | None = None,
    *,
    per_octave: int,
    color: str = COLOR_B,
    width: int = 240,
    height: int = 44,
    medians: tuple[float | None, float | None] = (None, None),
) -> Markup:
    """Launch counts per log-duration bin (see queries/stakeout_log_histogram.sql).

    With ``b``, A is drawn as a grey outline and B filled, on a shared duration axis; each
    side is scaled to its own tallest bin so the shapes compare even when the counts differ.
    """
    bins = set(a) | set(b or {})
    if not bins:
        return Markup("")
    lo, hi = min(bins), max(bins)
    # At least 2 octaves wide so a single-valued kernel is a bar, not the whole chart.
    span = max(hi - lo + 1, 2 * per_octave)
    lo = lo - (span - (hi - lo + 1)) // 2
    axis_h = 12
    plot_h = height - axis_h
    bw = width / span
    out = [f'<line x1="0" y1="{plot_h}" x2="{width}" y2="{plot_h}" stroke="{GRID}"/>']

    def bars(counts: dict[int, int], style: str) -> None:
        top = max(counts.values(), default=0) or 1
        for k, n in sorted(counts.items()):
            h = max(plot_h * n / top, 1.5)
            out.append(
                f'<rect x="{coord((k - lo) * bw)}" y="{coord(plot_h - h)}" width="{coord(max(bw - 0.5, 0.8))}" '
                f'height="{coord(h)}" {style}/>'
            )

    if b is not None:
        bars(a, f'fill="{COLOR_A}" fill-opacity="0.45"')
        bars(b, f'fill="{color}" fill-opacity="0.75"')
    else:
        bars(a, f'fill="{color}" fill-opacity="0.85"')
    for med, stroke in zip(medians, (MUTED, INK), strict=True):
        if med and med > 0:
            x = (math.log2(med) * per_octave - lo) * bw
            if 0 <= x <= width:
                out.append(
                    f'<line x1="{coord(x)}" y1="0" x2="{coord(x)}" y2="{plot_h}" stroke="{stroke}" '
                    f'stroke-dasharray="2,2"/>'
                )
    left = 2 ** (lo / per_octave)
    right = 2 ** ((lo + span) / per_octave)
    out.append(
        f'<text x="0" y="{height - 1}" fill="{MUTED}" font-size="9.5">{escape(fmt_ns(left))}</text>'
        f'<text x="{width}" y="{height - 1}" fill="{MUTED}" font-size="9.5" text-anchor="end">'
        f"{escape(fmt_ns(right))}</text>"
    )
    return element(width, height, out, cls="hist")


def sparkline(
    steps: list[int], values: list[float], *, width: int = 160, height: int = 22
) -> Markup:
    """A signed value per step as bars about a zero line (red above: B took longer)."""
    top = max((abs(v) for v in values), default=0) or 1
    mid = height / 2
    w = width / max(len(values), 1)
    out = [f'<line x1="0" y1="{coord(mid)}" x2="{width}" y2="{coord(mid)}" stroke="{GRID}"/>']
    for i, (step, v) in enumerate(zip(steps, values, strict=True)):
        h = abs(v) / top * (mid - 1)
        y = mid - h if v > 0 else mid
        color = "#dc2626" if v > 0 else ("#2563eb" if v < 0 else GRID)
        tip = escape(f"step {step}: {'+' if v >= 0 else '-'}{fmt_ns(abs(v))}")
        out.append(
            f'<rect x="{coord(i * w)}" y="{coord(y)}" width="{coord(max(w - 0.5, 0.5))}" '
            f'height="{coord(max(h, 0.5))}" fill="{color}" data-tip="{tip}"/>'
        )
    return element(width, height, out, cls="spark")
