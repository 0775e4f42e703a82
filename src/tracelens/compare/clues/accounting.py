"""Clues from GPU time accounting (``trace.util``, ``trace.steps``): the steady-state step
(median and spread), the GPU wall time per step (or per unit of work) and the part of it
that moved it: compute, exposed communication, exposed memory, idle."""

from __future__ import annotations

from ...units import fmt_ns, fmt_ratio, fmt_signed_ns
from ..model import Clue
from .context import Context
from .spec import make, prose, threshold

_TIME_PARTS = (
    ("compute_ns", "compute"),
    ("exposed_communication_ns", "exposed communication"),
    ("exposed_memory_ns", "exposed memory"),
    ("idle_ns", "idle"),
)


def _time_unit(x: Context) -> tuple[float, float, str]:
    """Per step of each run when both repeat a step; else A scaled to B's launches (the
    same amount of work): factors for A's and B's figures, and the unit's words. Per device
    (the mean over devices). Per step counts the work inside the steps only
    (:func:`_in_steps`)."""
    da, db = max(x.sa.devices, 1), max(x.sb.devices, 1)
    if x.steps and x.steps_a:
        share_a, share_b = _in_steps(x)
        return share_a / (x.steps_a * da), share_b / (x.steps * db), "per step"
    scale = x.launches_b / x.launches_a if x.launches_a else 1.0
    return scale / da, 1 / db, "per device, A scaled to B's launches"


def _in_steps(x: Context) -> tuple[float, float]:
    """The share of each run's GPU time (util's figures) that its steps hold, when the
    per-step unit counts the steps ``tracelens steps`` finds (as ``compare.impact_steps``
    decides: both runs' steps hold most of their busy time): a capture that starts or ends
    mid-step has work outside its complete steps, which divided over them would read as
    longer steps. (1, 1) when the unit counts the repetitions of the launch sequence."""
    if not _steps_counted(x):
        return 1.0, 1.0
    share_a, share_b = step_coverage(x.sa), step_coverage(x.sb)
    return min(share_a, 1.0), min(share_b, 1.0)


def _steps_counted(x: Context) -> bool:
    """Whether the per-step unit counts the steps ``tracelens steps`` finds on both runs
    (``Side.steps``, which hold most of their busy time), not the repetitions of the
    launch sequence: then each step's place in time is known."""
    sa, sb = x.sa.steps, x.sb.steps
    if sa is None or sb is None or (sa.count, sb.count) != (x.steps_a, x.steps):
        return False
    return min(step_coverage(x.sa), step_coverage(x.sb)) >= threshold("step_time_coverage")


def _times(side, unit: str, gap: int) -> dict[str, int]:
    """A run's time accounting (``Side.time``) for ``unit``: per step, without the idle
    time before its devices' first GPU operation and after their last (util's before_first
    and after_last causes): a capture's edges, where no step runs (a capture that opens an
    NVTX range before the work, or ends later, read as longer steps, and one cut mid-step
    as shorter ones); and with one idle ``gap`` between steps added (:func:`_step_gap`):
    from the first GPU operation to the last, n steps hold only n - 1 of the gaps that
    follow a step, so dividing by n would give each step (n - 1)/n of its idle time
    between steps, less the fewer steps were captured."""
    import polars as pl

    if unit != "per step" or side.util is None or side.util.idle_causes.is_empty():
        return side.time
    causes = side.util.idle_causes
    edge = int(causes.filter(pl.col("cause").is_in(_EDGES))["time_ns"].sum())
    if not edge and not gap:
        return side.time
    return side.time | {
        "span_ns": side.time["span_ns"] - edge + gap,
        "idle_ns": side.time["idle_ns"] - edge + gap,
    }


def _step_times(x: Context, unit: str) -> tuple[dict[str, int], dict[str, int]]:
    """Each run's time accounting for ``unit`` (:func:`_times`), with the gap between its
    steps (:func:`_step_gap`)."""
    if unit != "per step":
        return _times(x.sa, unit, 0), _times(x.sb, unit, 0)
    located = _steps_counted(x)
    return _times(x.sa, unit, _step_gap(x, 0, located)), _times(
        x.sb, unit, _step_gap(x, 1, located)
    )


def _step_gap(x: Context, run: int, located: bool) -> int:
    """The idle time run ``run`` (0: A, 1: B) adds to its span for the wait after its last
    step, summed over its devices, ns. With the steps ``tracelens steps`` places in time
    (``located``), the mean gap between them (:func:`_gap_between_steps`). With the
    repetitions of the launch sequence, which have no window of their own, a step is still
    one repetition of the program and the wait until the next one starts, timed by the
    kernel that starts them (:mod:`..repetitions`: the same program captured for more or
    fewer steps costs the same per step)."""
    side = (x.sa, x.sb)[run]
    if located:
        return _gap_between_steps(side.steps)
    from ..repetitions import device_spans, device_steps, repetition_gap

    steps = device_steps(x.alignment, run)
    return repetition_gap(side, steps, device_spans(side.util, _EDGES))


def _gap_between_steps(steps) -> int:
    """The mean idle time between one step's GPU work and the next step's, summed over
    the devices (as util's figures are), ns: per device, the time from the latest end of
    its earlier steps' work to the start of its next step's, where positive, over its
    steps but the first. 0 with fewer than two steps on every device."""
    import polars as pl

    frame = steps.frame.select("device", "step", "start_ns", "end_ns").sort("device", "step")
    earlier = pl.col("end_ns").cum_max().shift(1).over("device")
    per_device = (
        frame.with_columns(gap=(pl.col("start_ns") - earlier).clip(lower_bound=0))
        .group_by("device")
        .agg(pl.col("gap").sum(), (pl.len() - 1).alias("gaps"))
        .filter(pl.col("gaps") > 0)
    )
    return round(float((per_device["gap"] / per_device["gaps"]).sum()))


# util's idle causes at a capture's edges: before the first GPU operation, after the last.
_EDGES = ("before_first", "after_last")


def time_accounting(x: Context) -> list[Clue]:
    """The lead line: GPU wall time per step (or per unit of work) and which part of it
    (compute, exposed communication, exposed memory, idle) moved it."""
    if x.sa.time is None or x.sb.time is None:
        return []
    fa, fb, unit = _time_unit(x)
    ta, tb = _step_times(x, unit)
    span_a, span_b = ta["span_ns"] * fa, tb["span_ns"] * fb
    limit = threshold("time_share") * max(span_a, span_b)
    moved = [
        (tb[key] * fb - ta[key] * fa, words)
        for key, words in _TIME_PARTS
        if abs(tb[key] * fb - ta[key] * fa) >= limit
    ]
    if not moved or abs(span_b - span_a) < limit:
        return []
    moved.sort(key=lambda m: -abs(m[0]))
    parts = ", ".join(f"{words} {fmt_signed_ns(delta)}" for delta, words in moved)
    return [
        make(
            "time_accounting",
            "; ".join(
                f"{words} {fmt_ns(ta[key] * fa)} → {fmt_ns(tb[key] * fb)}"
                for key, words in _TIME_PARTS
            )
            + f" ({unit}; from util)",
            impact_ns=span_b - span_a,
            rows=("GPU busy", "wall span"),
            unit=unit.split(",")[0],
            a=fmt_ns(span_a),
            b=fmt_ns(span_b),
            delta=fmt_signed_ns(span_b - span_a),
            parts=parts,
        )
    ]


def exposed_communication(x: Context) -> list[Clue]:
    """Communication that compute used to hide and no longer does (per call unchanged or
    not: the per-call clues say that)."""
    if x.sa.time is None or x.sb.time is None:
        return []
    fa, fb, unit = _time_unit(x)
    ta, tb = _step_times(x, unit)
    ea = ta["exposed_communication_ns"] * fa
    eb = tb["exposed_communication_ns"] * fb
    span = max(ta["span_ns"] * fa, tb["span_ns"] * fb)
    grew = eb >= ea * threshold("exposed_growth")
    if not grew or eb - ea < threshold("time_share") * span:
        return []
    return [
        make(
            "exposed_communication",
            f"exposed communication {fmt_ns(ea)} → {fmt_ns(eb)} {unit}, of a GPU wall time of "
            f"{fmt_ns(ta['span_ns'] * fa)} → {fmt_ns(tb['span_ns'] * fb)}",
            impact_ns=eb - ea,
            rows=("GPU busy", "wall span"),
            a=fmt_ns(ea),
            b=fmt_ns(eb),
            unit=unit.split(",")[0],
        )
    ]


def _step_words(steps, shift) -> str:
    """One run's steps as the board says them: how many, the steady ones' median and spread;
    first, when their time shifted level part-way (``shift``:
    :attr:`tracelens.steps.Steps.level_shift`), where and each part's median, as
    ``tracelens steps`` says it: one median of two levels is a time few steps took."""
    s = steps.summary()
    warmup = f" ({len(s['warmup_steps'])} warm-up)" if s["warmup_steps"] else ""
    figures = f"p90 {fmt_ns(s['p90_ns'])}, std {fmt_ns(s['std_ns'])}"
    if shift is None:
        return f"{s['count']:,} steps{warmup}, median {fmt_ns(s['median_ns'])}, {figures}"
    return (
        f"not steady: {shift.words()} ({shift.before_steps:,} steps before, "
        f"{shift.after_steps:,} from it), {s['count']:,} steps{warmup}, median of all "
        f"{fmt_ns(s['median_ns'])}, {figures}"
    )


def step_coverage(side) -> float:
    """The share of one run's GPU busy time its steps hold (1 without the accounting)."""
    busy = (side.time or {}).get("busy_ns")
    return float(side.steps.frame["busy_ns"].sum()) / busy if busy else 1.0


def step_time(x: Context) -> list[Clue]:
    """The steady-state step (``trace.steps`` of each run, warm-up left out) when both runs
    have steps that hold most of their GPU time (``step_time_coverage``) and its median
    moved by ``time_share`` of the longer one, or either run's step time shifted level
    part-way (then that side says where, and the verdict says the median is no typical
    step): median, p90 and standard deviation of each, and how many steps each capture
    holds."""
    steps_a, steps_b = x.sa.steps, x.sb.steps
    if steps_a is None or steps_b is None or not steps_a.count or not steps_b.count:
        return []
    if min(step_coverage(x.sa), step_coverage(x.sb)) < threshold("step_time_coverage"):
        return []
    ma, mb = steps_a.median_ns, steps_b.median_ns
    if ma is None or mb is None:
        return []
    shift_a, shift_b = steps_a.level_shift, steps_b.level_shift
    shifted = [side for side, shift in (("A", shift_a), ("B", shift_b)) if shift]
    if not shifted and abs(mb - ma) < threshold("time_share") * max(ma, mb):
        return []
    fields = {"a": fmt_ns(ma), "b": fmt_ns(mb), "delta": fmt_signed_ns(mb - ma)}
    fields["ratio"] = fmt_ratio(mb / ma if ma else None)
    if shifted:
        fields["verdict"] = prose("step_time", "verdict_shifted", sides=" and ".join(shifted))
    return [
        make(
            "step_time",
            f"A: {_step_words(steps_a, shift_a)}; B: {_step_words(steps_b, shift_b)}; steps "
            f"found from {steps_b.source or steps_b.method}",
            impact_ns=mb - ma,
            rows=("wall span",),
            **fields,
        )
    ]
