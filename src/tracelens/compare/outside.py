"""Steps that hold only part of a capture's work: per-step clues from the steps' own work,
and the work outside them as its own clue.

A capture whose steps (``tracelens steps``: NVTX step ranges, or the launch period) hold
little of its GPU time (under ``step_time_coverage`` in either run) has work outside them: a
prefill before a decode loop, setup, a warm-up. Dividing the whole capture by a number of
steps would spread that work over the steps (the demo's bs16 prefill, 101 ms of one GEMM,
read as +22 ms per decode step), and the steps alone would hide its change. So when both
runs have such steps, the diff compares the work of their steps (the GPU work launched in
them, :func:`tracelens.stepwork.select_steps`, as ``--step``) for the board's per-step
clues and the per-step gate figure, and adds one clue for the work outside the steps, once
per capture (:func:`outside_clue`); the tables stay those of the whole captures
(:func:`merged`). Cost: a second read of each side, the steps' work only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..units import fmt_ns, fmt_signed_ns
from .clues import board_order, make, short_name, threshold

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace
    from .collect import Side
    from .model import Clue, TraceDiff

OUTSIDE_ID = "outside_steps"
# Kernels the clue names as where the outside work changed.
_NAMED_KERNELS = 2


def partial_steps(sa: Side, sb: Side) -> bool:
    """Whether both runs have steps and one run has work outside them
    (:func:`_work_outside`)."""
    for side in (sa, sb):
        if side.steps is None or not side.steps.count or side.time is None:
            return False
        if side.util is None or side.steps.frame["start_ns"].is_null().all():
            return False
    return _work_outside(sa) or _work_outside(sb)


def _work_outside(side: Side) -> bool:
    """Whether ``side``'s steps hold under ``step_time_coverage`` of its GPU busy time and
    their time, from the first step's start to the last step's end on each device, under
    that share of its GPU span (util's, per device): work before or after the steps (a
    prefill, setup), not work between them that the steps' NVTX ranges do not enclose
    (ranges around one launch of each step: the repetitions of the launch sequence are the
    per-step unit then, :mod:`.repetitions`)."""
    import polars as pl

    from .clues.step_units import step_coverage

    limit = threshold("step_time_coverage")
    if step_coverage(side) >= limit:
        return False
    held = (
        side.steps.frame.filter(pl.col("start_ns").is_not_null())
        .group_by("device")
        .agg(held=pl.col("end_ns").max() - pl.col("start_ns").min())
        .join(side.util.frame.select("device", "span_ns"), on="device")
    )
    span = int(held["span_ns"].sum())
    return bool(span) and int(held["held"].sum()) < limit * span


def step_filters(traces: tuple[Trace, Trace]) -> tuple[EventFilter, EventFilter] | None:
    """Each trace's filter narrowed to the GPU work of all its steps (first to last, warm-up
    included: the steps the board counts); None when a side's steps cannot be selected."""
    from ..errors import UsageError
    from ..stepwork import select_steps

    out = []
    for trace in traces:
        frame = trace.steps().frame
        try:
            chosen = select_steps(trace, (int(frame["step"].min()), int(frame["step"].max())))
        except UsageError:
            return None
        out.append(chosen.where)
    return out[0], out[1]


def _outside_ns(whole: Side, steps: Side) -> int:
    """GPU busy time of ``whole`` outside the work of its steps (``steps``), ns."""
    busy = (whole.totals["gpu_busy_ns"] or 0) - (steps.totals["gpu_busy_ns"] or 0)
    return max(busy, 0)


def _where(whole: tuple[Side, Side]) -> str:
    """The top-level NVTX range holding most of the GPU time outside every step over both
    runs (``Side.regions``, step null), as `` (NVTX prefill)``; empty without one."""
    import polars as pl

    frames = [s.regions for s in whole if s.regions is not None]
    if not frames:
        return ""
    outside = pl.concat([f.select("path", "step", "gpu_ns") for f in frames])
    top = (
        outside.filter(pl.col("step").is_null())
        .group_by(pl.col("path").str.split(" / ").list.first().alias("top"))
        .agg(pl.col("gpu_ns").sum())
        .sort("gpu_ns", "top", descending=[True, False])
    )
    return f" (NVTX {top['top'][0]})" if top.height else ""


def _moved_kernels(whole: pl.DataFrame, steps: pl.DataFrame) -> list[tuple[str, str, float]]:
    """The kernels whose time outside the steps moved most (whole capture less its steps,
    by name): (name, seen in, B - A ns), largest change first."""
    import polars as pl

    inner = steps.select(
        "name", pl.col("a_total_ns").alias("in_a"), pl.col("b_total_ns").alias("in_b")
    )
    joined = whole.join(inner, on="name", how="left").with_columns(
        out_a=pl.col("a_total_ns") - pl.col("in_a").fill_null(0),
        out_b=pl.col("b_total_ns") - pl.col("in_b").fill_null(0),
    )
    moved = joined.with_columns(delta=pl.col("out_b") - pl.col("out_a")).sort(
        pl.col("delta").abs(), "name", descending=[True, False]
    )
    rows = moved.head(_NAMED_KERNELS).select("name", "status", "delta").rows()
    return [(name, status, float(delta)) for name, status, delta in rows if delta]


def outside_clue(whole: TraceDiff, steps: TraceDiff) -> Clue | None:
    """The work outside the steps, once per capture: each run's GPU busy time outside its
    steps' work, where it is (the NVTX range holding most of it) and the kernels whose
    time there moved most; None unless it moved by ``time_share`` of the longer capture's
    busy time."""
    (wa, wb), (ia, ib) = whole.sides, steps.sides
    oa, ob = _outside_ns(wa, ia), _outside_ns(wb, ib)
    busy = max(wa.totals["gpu_busy_ns"] or 0, wb.totals["gpu_busy_ns"] or 0)
    if abs(ob - oa) < threshold("time_share") * busy:
        return None
    moved = _moved_kernels(whole.kernels, steps.kernels)
    seen = {"only_b": "only in B", "only_a": "only in A", "both": "in both"}
    named = "; ".join(
        f"{short_name(name)} ({seen.get(status, status)}, {fmt_signed_ns(delta)})"
        for name, status, delta in moved
    )
    evidence = (
        f"GPU busy time outside the {steps.steps_a:,} steps of A and {steps.steps_b:,} of B: "
        f"{fmt_ns(oa)} of A's {fmt_ns(wa.totals['gpu_busy_ns'] or 0)}, {fmt_ns(ob)} of B's "
        f"{fmt_ns(wb.totals['gpu_busy_ns'] or 0)}"
        + (f"; there, most of the change: {named}" if named else "")
    )
    return make(
        OUTSIDE_ID,
        evidence,
        impact_ns=ob - oa,
        rows=tuple(name for name, _status, _delta in moved),
        where=_where(whole.sides),
        a=fmt_ns(oa),
        b=fmt_ns(ob),
        delta=fmt_signed_ns(ob - oa),
    )


def merged(whole: TraceDiff, steps: TraceDiff) -> TraceDiff:
    """``whole`` (the tables of the whole captures) with the board, the per-step gate
    figure and the step counts of ``steps`` (the diff of the steps' work), the work outside
    the steps as its own clue and figures (``outside_steps_ms``, ``_a``), and a note that
    says so in place of ``whole``'s notes on steps."""
    clue = outside_clue(whole, steps)
    clues = board_order([*steps.clues, *([clue] if clue else [])])
    (wa, wb), (ia, ib) = whole.sides, steps.sides
    figures = whole.figures | {
        "gpu_time_per_step_ratio": steps.figures["gpu_time_per_step_ratio"],
        "outside_steps_ms": _outside_ns(wb, ib) / 1e6,
        "outside_steps_ms_a": _outside_ns(wa, ia) / 1e6,
        "clues": float(len(clues)),
    }
    note = (
        f"per-step clues count the steps' own work: the GPU work launched in A's "
        f"{steps.steps_a:,} and B's {steps.steps_b:,} steps, which hold "
        f"{_share(ia, wa):.0%} and {_share(ib, wb):.0%} of the GPU busy time; the rest of "
        "each capture is the 'outside the steps' clue, once per capture; the tables are of "
        "the whole captures"
    )
    return replace(
        whole,
        clues=tuple(clues),
        figures=figures,
        notes=(note, *steps.notes),
        steps_a=steps.steps_a,
        steps_b=steps.steps_b,
    )


def _share(steps: Side, whole: Side) -> float:
    total = whole.totals["gpu_busy_ns"] or 0
    return (steps.totals["gpu_busy_ns"] or 0) / total if total else 1.0
