"""Timelines: lanes of GPU activity and NVTX ranges over a time window, with a time axis,
an optional highlighted window, and the data attributes the page's zoom reads."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from ...units import fmt_ns
from .style import GRID, INK, MUTED, clip_text, coord, element


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
            f'<rect x="{coord(hx)}" y="{axis_h}" width="{coord(hw)}" height="{f.height - axis_h}" '
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
    return element(width, f.height, out, cls="timeline" + (" tl-zoom" if zoomable else ""), **attrs)


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
            f'<line x1="{coord(x)}" y1="{f.axis_h - 4}" x2="{coord(x)}" y2="{f.height}" '
            f'stroke="{GRID}"/><text x="{coord(x + 3)}" y="{f.axis_h - 7}" fill="{MUTED}" '
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
            f'<rect x="{coord(x)}" y="{sy}" width="{coord(w)}" height="{h}" fill="{s.color}"{op}{tip}/>'
        )
        if s.label and w > 30:
            labels.append(
                f'<text class="tl-label" x="{coord(x + 3)}" y="{sy + 10}" font-size="9.5" '
                f'fill="{INK}" data-x="{coord(x)}" data-w="{coord(w)}">'
                f"{escape(clip_text(s.label, int((w - 6) / 5.6)))}</text>"
            )
    data.append("</g>")
    data += labels
    data.append("</g>")
    return data
