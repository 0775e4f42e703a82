"""The timeline of one trace, laid out for the page: lanes (device, stream) and NVTX lanes,
the overview of the whole GPU span in time bins, and a detail window (operations one by
one when there are few enough, finer bins otherwise). The numbers come from
:mod:`tracelens.activity`; this module only turns them into SVG spans and notes."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from .. import activity
from ..compare import COPY_KIND_LABELS
from ..units import fmt_bytes, fmt_ns
from ..views import plural
from . import svg
from .selection import nvtx_of_process
from .text import pct, short
from .worktable import kernel_ids, more_than, operation_count, read_bins, work_span

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace

OVERVIEW_BINS = 500  # time bins of the whole-trace overview, per lane
DETAIL_BINS = 1000  # time bins of the detail window when it has too many events to draw
DETAIL_MAX_EVENTS = 4000  # events drawn one by one in the detail window, per trace
DETAIL_TARGET_EVENTS = 600  # the default window is the busiest one with about this many
MAX_LANES = 24  # GPU lanes (device, stream) drawn per trace
NVTX_MAX = 1500  # NVTX ranges drawn per trace
NVTX_MAX_DEPTH = 4  # nesting levels drawn in the detail window
NVTX_THREADS = 4  # threads with an NVTX lane in the detail window (2 in the overview)
WIDTH = 1180  # px, charts span the page
# Busy fraction of a bin -> opacity of its rectangle (upper bounds, then the shade).
SHADES = ((0.1, 0.3), (0.4, 0.55), (0.8, 0.8))
NVTX_COLORS = (("#f1d27a", "#ead08a"), ("#f5b27a", "#f0c39a"))  # (depth parity, sibling parity)


@dataclass
class TimelineView:
    overview: Markup
    detail: Markup
    caption: str
    window: tuple[int, int] | None
    window_reason: str
    legend: list[tuple[str, str]]
    notes: list[str]
    # what the overview spans, as its title says: a filtered page's is its selection's work
    overview_title: str = "whole trace"


def _shade(util: float) -> float:
    return next((shade for bound, shade in SHADES if util < bound), 1.0)


def binned_spans(
    df: pl.DataFrame,
    lane_index: dict[tuple[int, int], int],
    t0: int,
    t1: int,
    bins: int,
    palette: svg.Palette,
) -> list[svg.Span]:
    """One rectangle per run of bins with the same dominant category and shade."""
    bw = (t1 - t0) / bins
    cells: dict[tuple[int, int], dict[str, list[float]]] = defaultdict(dict)
    for device, stream, b, cat, busy, n in df.iter_rows():
        lane = lane_index.get((device, stream))
        if lane is not None:
            cells[(lane, b)][cat] = [busy, n]
    runs: list[dict[str, Any]] = []
    last: dict[int, dict[str, Any]] = {}
    for lane, b in sorted(cells):
        cats = cells[(lane, b)]
        busy = sum(v[0] for v in cats.values())
        dom = max(cats.items(), key=lambda kv: (kv[1][0], kv[0]))[0]
        shade = _shade(min(busy / bw, 1.0) if bw else 1.0)
        run = last.get(lane)
        if not (run and run["dom"] == dom and run["b1"] == b - 1 and run["shade"] == shade):
            run = {"lane": lane, "b0": b, "dom": dom, "shade": shade, "mix": defaultdict(float)}
            run["n"] = 0
            runs.append(run)
            last[lane] = run
        run["b1"] = b
        run["n"] += int(sum(v[1] for v in cats.values()))
        for c, v in cats.items():
            run["mix"][c] += v[0]
    spans = []
    for run in runs:
        start, end = t0 + run["b0"] * bw, t0 + (run["b1"] + 1) * bw
        busy = sum(run["mix"].values())
        mix = sorted(run["mix"].items(), key=lambda kv: -kv[1])[:3]
        tip = (
            f"{pct(min(busy / (end - start), 1.0), 0)} busy · {run['n']:,} operations started\n"
            + " · ".join(f"{c} {pct(v / busy if busy else 0, 0)}" for c, v in mix)
            + f"\n{fmt_ns(start)} → {fmt_ns(end)}"
        )
        spans.append(
            svg.Span(run["lane"], start, end, palette(run["dom"]), opacity=run["shade"], tip=tip)
        )
    return spans


def nvtx_layout(
    ranges: pl.DataFrame,
    *,
    max_depth: int,
    max_threads: int,
    notes: list[str],
    compact: bool = False,
) -> tuple[list[svg.Lane], list[svg.Span]]:
    """NVTX lanes (one per thread, nested ranges stacked) and their spans."""
    by_tid: dict[int | None, list[tuple[int, int, str]]] = defaultdict(list)
    for s, e, label, tid in ranges.select("start", "end", "label", "tid").iter_rows():
        by_tid[tid].append((s, e, label))
    lanes: list[svg.Lane] = []
    spans: list[svg.Span] = []
    deep = 0
    threads = sorted(by_tid.items(), key=lambda kv: (-len(kv[1]), kv[0] or 0))[:max_threads]
    for tid, items in sorted(threads, key=lambda kv: kv[0] or 0):
        items.sort(key=lambda r: (r[0], -r[1]))
        stack: list[int] = []
        placed = []
        for s, e, label in items:
            while stack and stack[-1] <= s:
                stack.pop()
            depth = len(stack)
            stack.append(e)
            if depth >= max_depth:
                deep += 1
                continue
            placed.append((s, e, label, depth))
        rows = max((p[3] for p in placed), default=0) + 1
        lane_no = len(lanes)
        lanes.append(
            svg.Lane("NVTX", f"tid {(tid or 0) & 0xFFFFFF}", kind="nvtx", height=rows * 14 - 1)
        )
        sibling: dict[int, int] = defaultdict(int)
        for s, e, label, depth in placed:
            sibling[depth] += 1
            spans.append(
                svg.Span(
                    lane_no,
                    s,
                    e,
                    NVTX_COLORS[depth % 2][sibling[depth] % 2],
                    tip=f"NVTX: {label}\n{fmt_ns(e - s)} · {fmt_ns(s)} → {fmt_ns(e)}",
                    label=label,
                    row=depth,
                )
            )
    if len(by_tid) > max_threads:
        notes.append(f"NVTX ranges of {len(by_tid) - max_threads} more threads are not drawn")
    if deep and not compact:
        notes.append(f"{deep:,} NVTX ranges nested deeper than {max_depth} are not drawn")
    return lanes, spans


def busiest_window(per_bin_busy: list[float], per_bin_events: list[int]) -> tuple[int, int]:
    """(first bin, bins) of the busiest window holding about DETAIL_TARGET_EVENTS events."""
    nb = len(per_bin_busy)
    k = max(1, nb // 25)
    while True:
        best, best_i, max_events = -1.0, 0, 0
        busy = sum(per_bin_busy[:k])
        events = sum(per_bin_events[:k])
        for i in range(0, nb - k + 1):
            if i:
                busy += per_bin_busy[i + k - 1] - per_bin_busy[i - 1]
                events += per_bin_events[i + k - 1] - per_bin_events[i - 1]
            if busy > best + 1e-9:
                best, best_i, max_events = busy, i, events
        if k == 1 or max_events <= DETAIL_TARGET_EVENTS:
            return best_i, k
        k = max(1, k // 2)


def step_window(steps: Steps | None, selected: bool = False) -> tuple[tuple[int, int], str] | None:
    """The first steady step (after warm-up) of ``steps`` (:meth:`tracelens.Trace.steps`),
    CPU range and GPU work, on every device; None when the trace has no steps.
    ``selected``: the steps of a selection (the trace's, restricted to it), whose last
    number is not the trace's last step: not said."""
    import polars as pl

    if steps is None or not steps.count:
        return None
    steady = steps.steady
    frame = steady if steady.height else steps.frame
    n = frame["step"].min()
    rows = frame.filter(pl.col("step") == n)
    starts = rows["start_ns"].to_list() + rows["cpu_start_ns"].drop_nulls().to_list()
    ends = rows["end_ns"].to_list() + rows["cpu_end_ns"].drop_nulls().to_list()
    s, e = min(starts), max(ends)
    pad = max((e - s) // 80, 1)
    warm = ", the first after warm-up" if frame.height < steps.frame.height else ""
    # steps are numbered 1 to the last; a number whose step held no GPU work is not in the
    # frame, so "of" counts to the last number, not the steps with work (as stepwork.note)
    last = "" if selected else f" of {int(steps.frame['step'].max()):,}"
    why = (
        f"step {n:,}{last}{warm} ({steps.method} steps: {steps.detail}), with the "
        f"{plural(int(rows['kernels'].sum()), 'kernel')} it ran"
    )
    return (s - pad, e + pad), why


def choose_window(
    g0: int, g1: int, ov: pl.DataFrame, steps: Steps | None, selected: bool = False
) -> tuple[tuple[int, int], str]:
    """The detail window: the first steady step (``selected``: as :func:`step_window`'s),
    else the busiest stretch of the GPU span."""
    step = step_window(steps, selected)
    if step is not None:
        return step
    per_busy = [0.0] * OVERVIEW_BINS
    per_events = [0] * OVERVIEW_BINS
    for b, busy, n in ov.select("bin", "busy_ns", "events").iter_rows():
        per_busy[b] += busy
        per_events[b] += n
    if sum(per_events) <= DETAIL_TARGET_EVENTS:
        # few enough to draw them all: the whole span, not its busiest 4% (a small
        # selection's detail window was 1.6 µs around a 40 µs copy)
        whole = "the selected work's whole GPU span" if selected else "the whole GPU span"
        return (g0, g1 + 1), f"{whole} (few enough operations to draw them all)"
    first, k = busiest_window(per_busy, per_events)
    bw = (g1 + 1 - g0) / OVERVIEW_BINS
    w0, w1 = g0 + first * bw, g0 + (first + k) * bw
    share = k / OVERVIEW_BINS
    why = f"the busiest {pct(share, 0 if share >= 0.01 else 1)} of the GPU span"
    events = sum(per_events[first : first + k])
    if events > DETAIL_TARGET_EVENTS:
        # Even one bin is crowded (a very long trace): take the start of it, short enough
        # to hold about DETAIL_TARGET_EVENTS operations, so they can be drawn one by one.
        w1 = w0 + (w1 - w0) * DETAIL_TARGET_EVENTS / events
        why = f"the start of the busiest {pct(share, 1)} of the GPU span"
    return (int(w0), int(math.ceil(w1))), why


def operation_spans(
    ops: pl.DataFrame,
    lane_index: dict[tuple[int, int], int],
    palette: svg.Palette,
    category_of_id: dict[int, str],
) -> list[svg.Span]:
    """One rectangle per GPU operation (:func:`tracelens.activity.gpu_operations`)."""
    spans = []
    for r in ops.iter_rows(named=True):
        lane = lane_index.get((r["device"], r["stream"]))
        if lane is None:
            continue
        dur = r["end"] - r["start"]
        if r["kind"] == "kernel":
            cat = category_of_id.get(r["name_id"], "other")
            tip = (
                f"{short(r['name'], 160)}\n{cat} · {fmt_ns(dur)} · grid {r['grid']} · "
                f"block {r['block']}\nstart {fmt_ns(r['start'])}"
            )
            color = palette(cat)
        else:
            if r["kind"] == "memcpy":
                what = COPY_KIND_LABELS.get(r["detail"], "copies").removesuffix(" copies")
            else:
                what = ""
            tip = (
                f"{r['kind']} {what} · {fmt_bytes(r['bytes'])} · {fmt_ns(dur)}\n"
                f"start {fmt_ns(r['start'])}"
            ).replace("  ", " ")
            color = palette(r["kind"])
        spans.append(svg.Span(lane, r["start"], r["end"], color, tip=tip))
    return spans


def _lanes(ov: pl.DataFrame, notes: list[str]) -> tuple[list[tuple[int, int]], dict]:
    """The busiest MAX_LANES (device, stream) lanes in device/stream order, and the busy
    time of every lane."""
    busy_by_lane: dict[tuple[int, int], float] = defaultdict(float)
    for device, stream, busy in ov.select("device", "stream", "busy_ns").iter_rows():
        busy_by_lane[(device, stream)] += busy
    keys = sorted(busy_by_lane, key=lambda k: -busy_by_lane[k])[:MAX_LANES]
    dropped = len(busy_by_lane) - len(keys)
    keys.sort(key=lambda k: (k[0] is None, k[0] or 0, k[1] is None, k[1] or 0))
    if dropped:
        notes.append(
            f"{dropped} quieter lanes (device, stream) are not drawn; the {len(keys)} busiest are"
        )
    return keys, busy_by_lane


def build_timeline(
    trace: Trace,
    *,
    key: str,
    palette: svg.Palette,
    name_kind: str = "demangled",
    window: tuple[int, int] | None = None,
    steps: Steps | None = None,
    work: pa.Table | None = None,
    where: EventFilter | None = None,
    name_ids: pl.DataFrame | None = None,
) -> TimelineView | None:
    """The overview (whole GPU span, binned) and a detail window (events one by one when
    there are few enough, else finer bins), with NVTX ranges. The default window is the
    first steady step of ``steps``, else the busiest stretch. ``work``: the trace's GPU
    operations, already read (:func:`.sharedread.for_duckdb`): the kernel categories and
    the bins come from it instead of the trace. ``where``: the operations drawn (None: all),
    those of ``work``, which is then required: the overview spans them. ``name_ids``: the
    distinct name ids (of ``name_kind``) of ``work``'s kernels in its ``name_id`` column, when
    known (:func:`.worktable.kernel_ids`)."""
    selected = where is not None and not where.is_whole()
    span = work_span(work) if selected else activity.gpu_span(trace)
    if span is None:
        return None
    g0, g1 = span
    notes: list[str] = []
    cats = activity.kernel_categories(trace, name=name_kind, work=kernel_ids(work, name_ids))
    ov = read_bins(trace, g0, g1 + 1, OVERVIEW_BINS, name_kind, cats, work)
    keys, busy_by_lane = _lanes(ov, notes)
    span_ns = (g1 + 1 - g0) or 1

    def gpu_lanes(compact: bool) -> list[svg.Lane]:
        return [
            svg.Lane(
                f"GPU {d} · stream {s}",
                pct(busy_by_lane[(d, s)] / span_ns, 0) + " busy" if not compact else "",
                height=12 if compact else 22,
            )
            for d, s in keys
        ]

    ov_nvtx_lanes, ov_spans = _overview_spans(trace, (g0, g1), ov, keys, palette, where)
    if window is None:
        window, reason = choose_window(g0, g1, ov, steps, selected)
    else:
        reason = "the requested window"
    w0, w1 = window
    w1 = max(w1, w0 + 1)
    detail = _detail(trace, (w0, w1), keys, cats, palette, name_kind, notes, work, where)
    _undrawn_note(trace, detail.drawn, notes, operation_count(work) if selected else None)
    overview_svg = svg.timeline(
        svg.Timeline(g0, g1 + 1, ov_nvtx_lanes + gpu_lanes(True), ov_spans, highlight=(w0, w1)),
        width=WIDTH,
        uid=f"{key}-ov",
    )
    detail_svg = svg.timeline(
        svg.Timeline(w0, w1, detail.nvtx_lanes + gpu_lanes(False), detail.spans, relative=True),
        width=WIDTH,
        zoomable=True,
        uid=f"{key}-dt",
    )
    spanned = "the selected GPU work's span" if selected else "the whole GPU span"
    caption = (
        f"Detail window {fmt_ns(w0)} → {fmt_ns(w1)} ({fmt_ns(w1 - w0)}): {reason}; "
        f"{detail.how}. Overview: {spanned}, {fmt_ns(g0)} → {fmt_ns(g1)}, in "
        f"{OVERVIEW_BINS} bins per lane."
    )
    legend = [(c, palette(c)) for c in ov["category"].unique().sort().to_list()]
    title = "the selected GPU work" if selected else "whole trace"  # the overview's
    return TimelineView(overview_svg, detail_svg, caption, (w0, w1), reason, legend, notes, title)


def _overview_spans(
    trace: Trace,
    span: tuple[int, int],
    ov: pl.DataFrame,
    keys: list,
    palette: svg.Palette,
    where: EventFilter | None = None,
) -> tuple[list[svg.Lane], list[svg.Span]]:
    """The overview's top-level NVTX ranges long enough to see (of ``where``'s process:
    :func:`.selection.nvtx_of_process`), then the binned GPU lanes."""
    g0, g1 = span
    span_ns = (g1 + 1 - g0) or 1
    # the overview's bins cover [g0, g1 + 1): a range that starts at the GPU's last end is in
    ov_nvtx = activity.nvtx_ranges(
        trace, g0, g1 + 1, min_ns=span_ns // OVERVIEW_BINS, limit=NVTX_MAX
    )
    shown = nvtx_of_process(ov_nvtx.frame, where)
    lanes, spans = nvtx_layout(shown, max_depth=1, max_threads=2, notes=[], compact=True)
    off = len(lanes)
    spans += binned_spans(
        ov, {k: i + off for i, k in enumerate(keys)}, g0, g1 + 1, OVERVIEW_BINS, palette
    )
    return lanes, spans


@dataclass
class _Detail:
    nvtx_lanes: list[svg.Lane]
    spans: list[svg.Span]
    how: str  # how the operations are drawn, for the caption
    drawn: int  # operations drawn one by one


def _detail(
    trace: Trace,
    window: tuple[int, int],
    keys: list,
    cats: activity.KernelCategories,
    palette: svg.Palette,
    name_kind: str,
    notes: list[str],
    work: pa.Table | None = None,
    where: EventFilter | None = None,
) -> _Detail:
    """The detail window's NVTX lanes and GPU operations: one by one when there are at most
    DETAIL_MAX_EVENTS, else DETAIL_BINS bins per lane."""
    w0, w1 = window
    nvtx = activity.nvtx_ranges(trace, w0, w1, limit=NVTX_MAX)
    nvtx_lanes, nvtx_spans = nvtx_layout(
        nvtx_of_process(nvtx.frame, where), max_depth=NVTX_MAX_DEPTH,
        max_threads=NVTX_THREADS, notes=notes,
    )  # fmt: skip
    if nvtx.more:
        notes.append(f"only the first {NVTX_MAX:,} NVTX ranges of the detail window are drawn")
    lane_index = {k: i + len(nvtx_lanes) for i, k in enumerate(keys)}
    ops = None
    if not more_than(work, w0, w1, DETAIL_MAX_EVENTS):
        ops = activity.gpu_operations(
            trace, w0, w1, limit=DETAIL_MAX_EVENTS + 1, name=name_kind, where=where
        )
    if ops is not None and ops.height <= DETAIL_MAX_EVENTS:
        category_of_id = dict(zip(cats.name_ids, cats.categories, strict=True))
        spans = nvtx_spans + operation_spans(ops, lane_index, palette, category_of_id)
        return _Detail(
            nvtx_lanes, spans, f"{plural(ops.height, 'GPU operation')} drawn one by one", ops.height
        )
    db = read_bins(trace, w0, w1, DETAIL_BINS, name_kind, cats, work)
    spans = nvtx_spans + binned_spans(db, lane_index, w0, w1, DETAIL_BINS, palette)
    notes.append(
        f"the detail window holds more than {DETAIL_MAX_EVENTS:,} GPU operations: drawn as "
        f"{DETAIL_BINS:,} time bins per lane (color: the category with most time; shade: "
        "how busy), not one by one"
    )
    how = (
        f"more than {DETAIL_MAX_EVENTS:,} GPU operations, so aggregated into "
        f"{DETAIL_BINS:,} bins per lane"
    )
    return _Detail(nvtx_lanes, spans, how, 0)


def _undrawn_note(
    trace: Trace, drawn: int, notes: list[str], selected_ops: int | None = None
) -> None:
    """Say how many GPU operations are not drawn one by one: of a selection's
    ``selected_ops``, else of the trace's kernels, memcpys and memsets."""
    total_ops, what = selected_ops, "the selected work"
    if total_ops is None:
        info = trace.info
        total_ops = info.count("kernel") + info.count("memcpy") + info.count("memset")
        what = "the whole trace"
    if total_ops > drawn:
        notes.append(
            f"{total_ops - drawn:,} of the {total_ops:,} GPU operations are not drawn one by one: "
            f"the overview aggregates {what} into {OVERVIEW_BINS} time bins per lane"
        )
