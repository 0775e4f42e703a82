"""SVG charts for the HTML report: bars, duration histograms, timelines.

Every function returns :class:`markupsafe.Markup` holding one ``<svg>`` element. Text that
reaches the SVG (kernel names, NVTX labels, tooltips) comes from the profiled program and is
untrusted: it is always passed through :func:`markupsafe.escape`, never formatted in raw.
Nothing here reads a trace; the report collects the numbers and calls these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from ..units import fmt_ns

# Categories the classifier is known to produce get fixed colors, so a category looks the same
# in every report; any other category gets the next color of EXTRA.
CATEGORY_COLORS: dict[str, str] = {
    "gemm": "#3b6fb6",
    "attention": "#d6453d",
    "convolution": "#2f8fbf",
    "communication": "#9b59b6",
    "elementwise": "#4f9d52",
    "reduction": "#7fb5a8",
    "normalization": "#e2b02e",
    "memory": "#8d6e63",
    "sort_sampling": "#d17fb1",
    "moe": "#b8860b",
    "quantization": "#5f9ea0",
    "embedding": "#8c6bb1",
    "compiler_generated": "#f08a3c",
    "other": "#a3a3a3",
    "memcpy": "#26a5b8",
    "memset": "#b0bec5",
}
EXTRA = (
    "#6a8fd0",
    "#e07a5f",
    "#81b29a",
    "#c08497",
    "#3d405b",
    "#f2cc8f",
    "#7b9e89",
    "#b56576",
    "#457b9d",
    "#9a8c98",
)

FONT = "ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
INK = "#1f2937"
MUTED = "#6b7280"
GRID = "#e5e7eb"
COLOR_A = "#9ca3af"  # baseline (A) bars
COLOR_B = "#2563eb"  # compared (B) bars


class Palette:
    """Category -> color, stable within one report."""

    def __init__(self) -> None:
        self._extra: dict[str, str] = {}

    def __call__(self, category: str | None) -> str:
        key = (category or "other").lower()
        if key in CATEGORY_COLORS:
            return CATEGORY_COLORS[key]
        if key not in self._extra:
            self._extra[key] = EXTRA[len(self._extra) % len(EXTRA)]
        return self._extra[key]


def _n(x: float) -> str:
    """A coordinate: short, no exponent."""
    if abs(x - round(x)) < 0.005:
        return str(int(round(x)))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _svg(
    width: float, height: float, body: Iterable[str], *, cls: str = "", **attrs: str
) -> Markup:
    extra = "".join(f' {k.replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {escape(cls)}" '
        f'width="{_n(width)}" height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'font-family="{FONT}" font-size="11"{extra}>'
    )
    return Markup(head + "".join(body) + "</svg>")


def clip_text(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 1)] + "…"


# -- bars ------------------------------------------------------------------------------------
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
            f'<rect x="{label_width}" y="{y}" width="{_n(w)}" height="{bar_height}" rx="2" '
            f'fill="{r.color}"/>'
            f'<text x="{_n(label_width + w + 6)}" y="{y + bar_height - 3}" fill="{MUTED}">'
            f"{escape(r.right)}</text></g>"
        )
    height = len(rows) * (bar_height + gap)
    return _svg(width, height, out, cls="hbars")


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
            f'<rect x="{label_width}" y="{y}" width="{_n(wa)}" height="{bar_height}" rx="1.5" '
            f'fill="{r.color}" fill-opacity="0.35"/>'
            f'<rect x="{label_width}" y="{y + bar_height + 1}" width="{_n(wb)}" '
            f'height="{bar_height}" rx="1.5" fill="{r.color}"/>'
            f'<text x="{_n(label_width + max(wa, wb) + 6)}" y="{y + bar_height + 4}" '
            f'fill="{color}"{weight}>{escape(r.right)}</text></g>'
        )
    return _svg(width, len(rows) * row_h, out, cls="hbars paired")


# -- duration histograms -------------------------------------------------------------------
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
                f'<rect x="{_n((k - lo) * bw)}" y="{_n(plot_h - h)}" width="{_n(max(bw - 0.5, 0.8))}" '
                f'height="{_n(h)}" {style}/>'
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
                    f'<line x1="{_n(x)}" y1="0" x2="{_n(x)}" y2="{plot_h}" stroke="{stroke}" '
                    f'stroke-dasharray="2,2"/>'
                )
    left = 2 ** (lo / per_octave)
    right = 2 ** ((lo + span) / per_octave)
    out.append(
        f'<text x="0" y="{height - 1}" fill="{MUTED}" font-size="9.5">{escape(fmt_ns(left))}</text>'
        f'<text x="{width}" y="{height - 1}" fill="{MUTED}" font-size="9.5" text-anchor="end">'
        f"{escape(fmt_ns(right))}</text>"
    )
    return _svg(width, height, out, cls="hist")


def sparkline(
    steps: list[int], values: list[float], *, width: int = 160, height: int = 22
) -> Markup:
    """A signed value per step as bars about a zero line (red above: B took longer)."""
    top = max((abs(v) for v in values), default=0) or 1
    mid = height / 2
    w = width / max(len(values), 1)
    out = [f'<line x1="0" y1="{_n(mid)}" x2="{width}" y2="{_n(mid)}" stroke="{GRID}"/>']
    for i, (step, v) in enumerate(zip(steps, values, strict=True)):
        h = abs(v) / top * (mid - 1)
        y = mid - h if v > 0 else mid
        color = "#dc2626" if v > 0 else ("#2563eb" if v < 0 else GRID)
        tip = escape(f"step {step}: {'+' if v >= 0 else '-'}{fmt_ns(abs(v))}")
        out.append(
            f'<rect x="{_n(i * w)}" y="{_n(y)}" width="{_n(max(w - 0.5, 0.5))}" '
            f'height="{_n(max(h, 0.5))}" fill="{color}" data-tip="{tip}"/>'
        )
    return _svg(width, height, out, cls="spark")


# -- heat maps -------------------------------------------------------------------------------
def _heat_color(ratio: float | None) -> str:
    """A cell's colour from its value over the column's median: grey at the median, red
    when above (up to 1.5x), blue when below (down to 2/3)."""
    if ratio is None:
        return "#ffffff"
    base = (241, 245, 249)
    if ratio >= 1:
        far, t = (220, 38, 38), min((ratio - 1) / 0.5, 1.0)
    else:
        far, t = (37, 99, 235), min((1 - ratio) / (1 / 3), 1.0)
    r, g, b = (round(x + (y - x) * t) for x, y in zip(base, far, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    rows: list[str],
    columns: list[str],
    cells: list[list[tuple[float, str] | None]],
    *,
    width: int = 1180,
    label_width: int = 80,
) -> Markup:
    """``cells[i][j]``: (value, tooltip) of row i and column j, or None (no value). Each
    cell is coloured by its value over its column's median (:func:`_heat_color`)."""
    import statistics

    n_cols = max(len(columns), 1)
    cw = max(min((width - label_width) / n_cols, 28.0), 2.0)
    ch = max(min(600 / max(len(rows), 1), 18.0), 3.0)
    top = 16
    height = top + ch * len(rows) + 4
    medians = []
    for j in range(len(columns)):
        values = [r[j][0] for r in cells if r[j] is not None]
        medians.append(statistics.median(values) if values else None)
    out = []
    every = max(1, int(40 / cw))  # column labels that fit
    for j, label in enumerate(columns):
        if j % every == 0:
            x = label_width + j * cw
            out.append(
                f'<text x="{_n(x + 1)}" y="{top - 4}" fill="{MUTED}" font-size="9.5">'
                f"{escape(label)}</text>"
            )
    for i, (label, row) in enumerate(zip(rows, cells, strict=True)):
        y = top + i * ch
        if ch >= 8:
            out.append(
                f'<text x="{label_width - 6}" y="{_n(y + ch - 2)}" text-anchor="end" '
                f'fill="{INK}" font-size="{min(11, ch - 1):.0f}">{escape(label)}</text>'
            )
        for j, cell in enumerate(row):
            if cell is None:
                continue
            value, tip = cell
            m = medians[j]
            color = _heat_color(value / m if m else None)
            out.append(
                f'<rect x="{_n(label_width + j * cw)}" y="{_n(y)}" width="{_n(max(cw - 0.5, 1))}" '
                f'height="{_n(max(ch - 0.5, 1))}" fill="{color}" data-tip="{escape(tip)}"/>'
            )
    return _svg(label_width + cw * n_cols, height, out, cls="heat")


# -- timelines -------------------------------------------------------------------------------
@dataclass
class Lane:
    label: str
    sublabel: str = ""
    kind: str = "gpu"  # gpu | nvtx
    height: int = 16


@dataclass
class Span:
    lane: int
    start: float  # ns
    end: float  # ns
    color: str
    opacity: float = 1.0
    tip: str = ""
    label: str = ""  # drawn inside when wide enough (NVTX ranges)
    row: int = 0  # nesting level within an NVTX lane


@dataclass
class Timeline:
    t0: float
    t1: float
    lanes: list[Lane]
    spans: list[Span]
    highlight: tuple[float, float] | None = None  # a window to outline (the overview)
    relative: bool = False  # ticks as offsets from t0
    notes: list[str] = field(default_factory=list)


def nice_step(span: float, target: int = 8) -> float:
    raw = span / max(target, 1)
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


@dataclass(frozen=True)
class _Frame:
    """Where a timeline draws: the label column, the plot's width and time scale, the
    axis band and each lane's top."""

    tl: Timeline
    label_width: int
    plot_w: float
    scale: float  # px per ns
    axis_h: int
    ys: list[int]
    height: int

    def x(self, t: float) -> float:
        return self.label_width + (t - self.tl.t0) * self.scale


def timeline(
    tl: Timeline,
    *,
    width: int = 1180,
    label_width: int = 170,
    zoomable: bool = False,
    uid: str = "tl",
) -> Markup:
    """Lanes of GPU activity (and NVTX ranges) over [t0, t1]; spans outside are clipped."""
    plot_w = width - label_width - 8
    axis_h = 20
    ys, y = [], axis_h + 4
    for lane in tl.lanes:
        ys.append(y)
        y += lane.height + 3
    f = _Frame(tl, label_width, plot_w, plot_w / ((tl.t1 - tl.t0) or 1), axis_h, ys, y + 4)
    out = [
        f'<defs><clipPath id="{escape(uid)}-clip"><rect x="{label_width}" y="0" '
        f'width="{plot_w}" height="{f.height}"/></clipPath></defs>'
    ]
    out += _lane_rows(f)
    out += _axis(f)
    out += _spans(f, uid)
    if tl.highlight:
        h0, h1 = tl.highlight
        hx = f.x(max(h0, tl.t0))
        hw = max((min(h1, tl.t1) - max(h0, tl.t0)) * f.scale, 2)
        out.append(
            f'<rect x="{_n(hx)}" y="{axis_h}" width="{_n(hw)}" height="{f.height - axis_h}" '
            f'fill="none" stroke="#d97706" stroke-width="1.5"/>'
        )
    attrs = {"id": uid}
    if zoomable:
        attrs |= {
            "data_t0": repr(float(tl.t0)),
            "data_t1": repr(float(tl.t1)),
            "data_x0": str(label_width),
            "data_w": str(plot_w),
            "data_rel": "1" if tl.relative else "0",
        }
    return _svg(width, f.height, out, cls="timeline" + (" tl-zoom" if zoomable else ""), **attrs)


def _lane_rows(f: _Frame) -> list[str]:
    """Each lane's background band and its label."""
    out = []
    for i, (lane, ly) in enumerate(zip(f.tl.lanes, f.ys, strict=True)):
        bg = "#f8fafc" if i % 2 == 0 else "#ffffff"
        if lane.kind == "nvtx":
            bg = "#fbf7ee"
        out.append(
            f'<rect x="{f.label_width}" y="{ly - 1}" width="{f.plot_w}" '
            f'height="{lane.height + 2}" fill="{bg}"/>'
        )
        out.append(
            f'<text x="{f.label_width - 8}" y="{ly + min(lane.height, 16) - 4}" '
            f'text-anchor="end" fill="{INK}">{escape(clip_text(lane.label, 26))}'
            + (
                f'<tspan fill="{MUTED}" font-size="9.5"> {escape(lane.sublabel)}</tspan>'
                if lane.sublabel
                else ""
            )
            + "</text>"
        )
    return out


def _axis(f: _Frame) -> list[str]:
    """Time ticks with grid lines (offsets from t0 when the timeline is relative)."""
    tl = f.tl
    step = nice_step((tl.t1 - tl.t0) or 1)
    t = math.ceil(tl.t0 / step) * step if not tl.relative else tl.t0
    axis = ['<g class="tl-axis">']
    k = 0
    while t <= tl.t1 + 1e-6 and k < 100:
        x = f.x(t)
        text = ("+" + fmt_ns(t - tl.t0)) if tl.relative else fmt_ns(t)
        if tl.relative and t == tl.t0:
            text = "0"
        axis.append(
            f'<line x1="{_n(x)}" y1="{f.axis_h - 4}" x2="{_n(x)}" y2="{f.height}" '
            f'stroke="{GRID}"/><text x="{_n(x + 3)}" y="{f.axis_h - 7}" fill="{MUTED}" '
            f'font-size="9.5">{escape(text)}</text>'
        )
        t += step
        k += 1
    axis.append("</g>")
    return axis


def _spans(f: _Frame, uid: str) -> list[str]:
    """The spans clipped to the plot, NVTX ranges stacked by nesting, labels drawn above
    the rectangles where they fit."""
    tl = f.tl
    data = [f'<g clip-path="url(#{escape(uid)}-clip)"><g class="tl-data">']
    labels = []
    for s in tl.spans:
        lane = tl.lanes[s.lane]
        x0 = max(s.start, tl.t0)
        x1 = min(s.end, tl.t1)
        if x1 < x0:
            continue
        x = f.x(x0)
        w = max((x1 - x0) * f.scale, 0.6)
        if lane.kind == "nvtx":
            h = 13
            sy = f.ys[s.lane] + s.row * 14
        else:
            h = lane.height
            sy = f.ys[s.lane]
        op = f' fill-opacity="{s.opacity:.2f}"' if s.opacity < 0.995 else ""
        tip = f' data-tip="{escape(s.tip)}"' if s.tip else ""
        data.append(
            f'<rect x="{_n(x)}" y="{sy}" width="{_n(w)}" height="{h}" fill="{s.color}"{op}{tip}/>'
        )
        if s.label and w > 30:
            labels.append(
                f'<text class="tl-label" x="{_n(x + 3)}" y="{sy + 10}" font-size="9.5" '
                f'fill="{INK}" data-x="{_n(x)}" data-w="{_n(w)}">'
                f"{escape(clip_text(s.label, int((w - 6) / 5.6)))}</text>"
            )
    data.append("</g>")
    data += labels
    data.append("</g>")
    return data
