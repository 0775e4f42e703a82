"""Clues from GPU time accounting (``trace.util``, ``trace.steps``): the steady-state step
(median and spread), the GPU wall time per step (or per unit of work) and the part of it
that moved it: compute, exposed communication, exposed memory, idle."""

from __future__ import annotations

from ...units import fmt_ns, fmt_ratio, fmt_signed_ns
from ..model import Clue
from .context import Context, short_name
from .spec import make, prose, threshold
from .step_units import LOCATED_UNIT, TIME_PARTS, per_unit, step_coverage


def time_accounting(x: Context) -> list[Clue]:
    """The lead line: GPU wall time per step (or per unit of work) and which part of it
    (compute, exposed communication, exposed memory, idle) moved it; compute told as the
    compute kernels' own time and their overlap when the overlap moved (:func:`_own_times`)."""
    if x.sa.time is None or x.sb.time is None:
        return []
    ta, tb, unit = per_unit(x)
    span_a, span_b = ta["span_ns"], tb["span_ns"]
    limit = threshold("time_share") * max(span_a, span_b)
    moved = [
        (tb[key] - ta[key], words) for key, words in TIME_PARTS if abs(tb[key] - ta[key]) >= limit
    ]
    if not moved or abs(span_b - span_a) < limit:
        return []
    own_a, own_b = _own_times(x, ta, tb)
    overlap = (own_a - ta["compute_ns"]) - (own_b - tb["compute_ns"])  # its wall time
    fields: dict[str, str] = {}
    evidence = "; ".join(
        f"{words} {fmt_ns(ta[key])} → {fmt_ns(tb[key])}" for key, words in TIME_PARTS
    )
    if abs(overlap) >= limit:
        more = "more" if overlap < 0 else "less"
        moved = [m for m in moved if m[1] != "compute"] + [
            (overlap, prose("time_accounting", "overlap_part", more=more))
        ]
        if abs(own_b - own_a) >= limit:
            moved.append((own_b - own_a, prose("time_accounting", "own_part")))
        else:
            ran = prose("time_accounting", f"ran_{more}")
            fields = {"own_a": fmt_ns(own_a), "own_b": fmt_ns(own_b), "ran": ran}
        evidence = evidence.replace(
            "; exposed communication",
            f" (the compute kernels' own time {fmt_ns(own_a)} → {fmt_ns(own_b)}, of it "
            f"overlapping {fmt_ns(own_a - ta['compute_ns'])} → "
            f"{fmt_ns(own_b - tb['compute_ns'])}); exposed communication",
            1,
        )
    moved.sort(key=lambda m: -abs(m[0]))
    parts = ", ".join(f"{words} {fmt_signed_ns(delta)}" for delta, words in moved)
    if fields:
        fields["verdict"] = prose(
            "time_accounting", "verdict_overlap", parts=parts, unit=unit.split(",")[0], **fields
        )
    elif unit.startswith(LOCATED_UNIT):
        fields["verdict"] = _few_waits(x, parts, limit)
    return [
        make(
            "time_accounting",
            evidence
            + f" ({unit}; from {'the steps and util' if unit.startswith(LOCATED_UNIT) else 'util'})",
            impact_ns=span_b - span_a,
            rows=("GPU busy", "wall span"),
            unit=unit.split(",")[0],
            a=fmt_ns(span_a),
            b=fmt_ns(span_b),
            delta=fmt_signed_ns(span_b - span_a),
            parts=parts,
            verdict=fields.get("verdict"),
        )
    ]


def _few_waits(x: Context, parts: str, limit: float) -> str | None:
    """The lead line's verdict when the mean step moved but the median step period (start
    to start: :func:`_period`) did not, by ``limit``: the time is in a few long steps or
    waits between them (a host stall), not in every step; None otherwise (the verdict as
    the rules file says it)."""
    pa, pb = _period(x.sa.steps), _period(x.sb.steps)
    if pa is None or pb is None or abs(pb - pa) >= limit:
        return None
    shifted = [(s, shift) for s, shift in zip("AB", _shifts(x), strict=True) if shift]
    if shifted:  # the median period is one level's: the time is in the other level's steps
        side = " and ".join(s for s, _ in shifted)
        return prose(
            "time_accounting",
            "verdict_shifted",
            parts=parts,
            a=fmt_ns(pa),
            b=fmt_ns(pb),
            side=side,
            named=" and which kernels carry it" if any(_named(x, s) for s, _ in shifted) else "",
        )
    return prose("time_accounting", "verdict_few_waits", parts=parts, a=fmt_ns(pa), b=fmt_ns(pb))


def _named(x: Context, side: str) -> bool:
    """Whether the step line names the kernels that carry run ``side``'s level shift."""
    from ..shift import carriers

    kernels = (x.sa if side == "A" else x.sb).shift
    return kernels is not None and not carriers(kernels).is_empty()


def _shifts(x: Context) -> tuple:
    """Each run's level shift in step time (:attr:`tracelens.steps.Steps.level_shift`), or
    None (no shift, or no steps)."""
    return tuple(s.steps.level_shift if s.steps is not None else None for s in (x.sa, x.sb))


def _own_times(x: Context, ta: dict[str, float], tb: dict[str, float]) -> tuple[float, float]:
    """The compute kernels' own time (the sum of their durations) in each run, in the unit
    of ``ta``/``tb``: util's compute time (their union on each device) scaled by the run's
    ratio of the two over the whole window. The kernels util counts as compute: all but the
    communication and memory categories (:mod:`tracelens.util_ops`), and graph replays."""
    import polars as pl

    compute = x.kernels.filter(~pl.col("category").is_in(["communication", "memory"]))
    own = []
    for side, t, col in ((x.sa, ta, "a_total_ns"), (x.sb, tb, "b_total_ns")):
        union = (side.time or {}).get("compute_ns") or 0
        total = float(compute[col].sum()) + side.graph[1]
        own.append(t["compute_ns"] * max(total / union, 1.0) if union else t["compute_ns"])
    return own[0], own[1]


def exposed_communication(x: Context) -> list[Clue]:
    """Communication that compute used to hide and no longer does (per call unchanged or
    not: the per-call clues say that)."""
    if x.sa.time is None or x.sb.time is None:
        return []
    ta, tb, unit = per_unit(x)
    ea, eb = ta["exposed_communication_ns"], tb["exposed_communication_ns"]
    span = max(ta["span_ns"], tb["span_ns"])
    grew = eb >= ea * threshold("exposed_growth")
    if not grew or eb - ea < threshold("time_share") * span:
        return []
    return [
        make(
            "exposed_communication",
            f"exposed communication {fmt_ns(ea)} → {fmt_ns(eb)} {unit}, of a GPU wall time of "
            f"{fmt_ns(ta['span_ns'])} → {fmt_ns(tb['span_ns'])}",
            impact_ns=eb - ea,
            rows=("GPU busy", "wall span"),
            a=fmt_ns(ea),
            b=fmt_ns(eb),
            unit=unit.split(",")[0],
        )
    ]


def _step_words(steps, shift, kernels=None) -> str:
    """One run's steps as the board says them: how many, the steady ones' median and spread;
    first, when their time shifted level part-way (``shift``:
    :attr:`tracelens.steps.Steps.level_shift`), where and each part's median, as
    ``tracelens steps`` says it: one median of two levels is a time few steps took; and
    which kernels carry the shift (``kernels``: :attr:`..collect.Side.shift`, when read)."""
    from ...views import plural
    from ..shift import shift_words, untold_words

    s = steps.summary()
    warmup = f" ({len(s['warmup_steps'])} warm-up)" if s["warmup_steps"] else ""
    figures = f"p90 {fmt_ns(s['p90_ns'])}, std {fmt_ns(s['std_ns'])}"
    if shift is None:
        return f"{plural(s['count'], 'step')}{warmup}, median {fmt_ns(s['median_ns'])}, {figures}"
    carried = f"; {shift_words(kernels, short_name)}" if kernels else untold_words(steps)
    return (
        f"not steady: {shift.words()} ({plural(shift.before_steps, 'step')} before, "
        f"{shift.after_steps:,} from it), {plural(s['count'], 'step')}{warmup}, median of all "
        f"{fmt_ns(s['median_ns'])}, {figures}{carried}"
    )


def _period(steps) -> float | None:
    """The median time from one steady step's start to the next one's (per device, over
    the step numbers between), ns: what a step takes whichever launch it starts at."""
    import polars as pl

    frame = steps.steady.filter(pl.col("start_ns").is_not_null()).sort("device", "step")
    gaps = frame.select(
        (pl.col("start_ns").diff() / pl.col("step").diff()).over("device").alias("period")
    ).drop_nulls()
    gaps = gaps.filter(pl.col("period") > 0)
    return float(gaps["period"].median()) if gaps.height else None


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
        fields["verdict"] = _shifted_verdict(x, shift_a, shift_b, ma, mb)
    else:
        pa, pb = _period(steps_a), _period(steps_b)
        if pa and pb and abs(pb - pa) < threshold("time_share") * max(pa, pb):
            fields["verdict"] = _period_verdict(steps_a, steps_b, fmt_ns(pa), fmt_ns(pb))
    return [
        make(
            "step_time",
            f"A: {_step_words(steps_a, shift_a, x.sa.shift)}; "
            f"B: {_step_words(steps_b, shift_b, x.sb.shift)}; steps "
            f"found from {steps_b.source or steps_b.method}",
            impact_ns=mb - ma,
            rows=("wall span",),
            **fields,
        )
    ]


def _shifted_verdict(x: Context, shift_a, shift_b, ma: float, mb: float) -> str:
    """The step-time verdict when either run's step time shifted level part-way: for one
    side, the other's median against each of its levels (the comparison depends on the
    level taken, and one capture cannot tell which is the run's steady state)."""
    if shift_a and shift_b:
        return prose("step_time", "verdict_shifted", sides="A and B")
    side, shift, other = ("A", shift_a, mb) if shift_a else ("B", shift_b, ma)
    levels = (shift.before_median_ns, shift.after_median_ns)
    # as B/A: B's level over A's median, or B's median over A's level
    before, after = (lv / other if side == "B" else other / lv for lv in levels)
    return prose(
        "step_time",
        "verdict_shifted_one",
        side=side,
        other="AB"[side == "A"],
        step=f"{shift.step:,}",
        named=" (the evidence says which kernels carry it)" if _named(x, side) else "",
        before=fmt_ratio(before),
        after=fmt_ratio(after),
    )


def _period_verdict(steps_a, steps_b, a: str, b: str) -> str:
    """The step-time verdict when the steps' period did not move: unsure, unless both runs'
    period steps start at the same kernel (:func:`..phase.phased_alike`), when their
    durations hold the same part of the wait between steps."""
    from ..phase import phased_alike

    kernel = phased_alike(steps_a, steps_b)
    if kernel is None:
        return prose("step_time", "verdict_period", a=a, b=b)
    return prose("step_time", "verdict_period_phased", a=a, b=b, kernel=short_name(kernel))


# The lines of the board that name no kernel, path or copy: the step time's own company.
_TIME_ONLY = {
    "time_accounting",
    "step_time",
    "capture_difference",
    "weak_evidence",
    "low_comparability",
    "graph_replays_hidden",
}


def step_time_alone(x: Context, clues: list[Clue]) -> list[Clue]:
    """``clues`` with the step-time line's verdict saying that no other line names a
    kernel, when none does (it would otherwise point at lines that are not there); a step
    time that shifted level keeps its own verdict."""
    from dataclasses import replace

    alone = all(c.id in _TIME_ONLY for c in clues)
    if not alone or not any(c.id == "step_time" for c in clues):
        return clues
    if x.sa.steps.level_shift or x.sb.steps.level_shift:
        return clues
    where = "where_accounting" if any(c.id == "time_accounting" for c in clues) else "where_tables"
    ratio = fmt_ratio(x.sb.steps.median_ns / x.sa.steps.median_ns)
    verdict = prose("step_time", "verdict_alone", ratio=ratio, where=prose("step_time", where))
    # only the verdict that points at the other lines (an unsure one stays)
    pointing = prose("step_time", "verdict", ratio=ratio)
    return [replace(c, verdict=verdict) if c.verdict == pointing else c for c in clues]
