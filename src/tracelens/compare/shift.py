"""A run whose step time shifted level part-way (:attr:`tracelens.steps.Steps.level_shift`):
which kernels carry the shift. A run diffed against another whose steps ran at one level,
then at another from step N on, compares the other run with a mean of two levels: the
board says which side shifted, at which step, which kernels' calls changed with it, and
what the comparison is against each level.

    shift_kernels   per kernel: calls and time in the steady steps before the shift and
                    from it (read with the side, from the step search's launches)
    read_shift      the same for steps found after the side was read (re-phased:
                    compare.phase), from a read of the kernels' starts, ends and names
    carriers        the kernels that carry the shift, largest change per step first
    shift_words     the evidence's words for them
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..units import fmt_ns, fmt_ratio, fmt_signed_ns

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace


@dataclass(frozen=True)
class ShiftKernels:
    """One run's kernels before and from its level shift: ``step`` the shift is at, how
    many steady steps each part holds, and per kernel (``frame``: name, before_calls,
    before_ns, after_calls, after_ns: launches and their time in each part)."""

    step: int
    before_steps: int
    after_steps: int
    frame: pl.DataFrame

    def per_step(self) -> pl.DataFrame:
        """``frame`` with each part's time per step and call (before_step_ns,
        after_step_ns, change_ns: the second less the first, before_call_ns,
        after_call_ns; null without calls; same_calls: as many calls per step in both),
        largest change per step first."""
        import polars as pl

        before = pl.col("before_ns") / self.before_steps
        after = pl.col("after_ns") / self.after_steps
        return self.frame.with_columns(
            before_step_ns=before,
            after_step_ns=after,
            change_ns=after - before,
            before_call_ns=pl.col("before_ns") / pl.col("before_calls").replace(0, None),
            after_call_ns=pl.col("after_ns") / pl.col("after_calls").replace(0, None),
            same_calls=pl.col("before_calls") * self.after_steps
            == pl.col("after_calls") * self.before_steps,
        ).sort(pl.col("change_ns").abs(), pl.col("name"), descending=[True, False])


#: A kernel carries the shift when its time per step changed by this share of the change
#: of all kernels' time per step (absolute changes summed) or more
CARRIER_SHARE = 0.1
#: Kernels named in the evidence, at most
CARRIERS_SHOWN = 3
#: Per-call ratios within this factor of each other read as "every kernel alike" (and
#: within it of 1, as a kept cost)
ALIKE = 1.1


def shift_kernels(
    steps: Steps, launches: pl.DataFrame, names: dict[int, str]
) -> ShiftKernels | None:
    """The kernels of ``launches`` (the step search's: device, start_ns, end_ns, name_id)
    in the steady steps of ``steps`` before their level shift and from it, per device by
    the start of the shift's step on it; ``names``: name_id → the name the diff shows
    (a launch whose id is not there is left out). None without a shift, or without
    launches in both parts, or when the steps before the shift end after it starts (their
    windows overlap in time)."""
    import polars as pl

    shift = steps.level_shift
    if shift is None or not names:
        return None
    bounds = _bounds(steps, shift.step)
    if bounds.is_empty() or overlap(steps):
        return None
    bounds = bounds.with_columns(pl.col("device").cast(launches["device"].dtype))
    start, duration = pl.col("start_ns"), pl.col("end_ns") - pl.col("start_ns")
    after = start >= pl.col("at")
    frame = (
        launches.select("device", "start_ns", "end_ns", "name_id")
        .join(bounds, on="device")
        .filter((start >= pl.col("first")) & (start < pl.col("last")))
        .group_by("name_id")
        .agg(
            before_calls=(~after).sum(),
            before_ns=duration.filter(~after).sum(),
            after_calls=after.sum(),
            after_ns=duration.filter(after).sum(),
        )
    )
    frame = frame.filter(pl.col("name_id").is_in(list(names))).select(
        pl.col("name_id").replace_strict(names, return_dtype=pl.String).alias("name"),
        pl.exclude("name_id").cast(pl.Int64),
    )
    if frame.is_empty() or not frame["before_calls"].sum() or not frame["after_calls"].sum():
        return None
    return ShiftKernels(shift.step, shift.before_steps, shift.after_steps, frame.sort("name"))


def _bounds(steps: Steps, at: int) -> pl.DataFrame:
    """Per device the steady steps' first start, the start of step ``at`` (at), their last
    end, and the last end of the steps before ``at`` (before_end)."""
    import polars as pl

    steady = steps.steady.filter(pl.col("start_ns").is_not_null())
    before = pl.col("step") < at
    bounds = steady.group_by("device").agg(
        first=pl.col("start_ns").min(),
        at=pl.col("start_ns").filter(~before).min(),
        last=pl.col("end_ns").max(),
        before_end=pl.col("end_ns").filter(before).max(),
    )
    return bounds.drop_nulls()


def overlap(steps: Steps) -> bool:
    """Whether the steady steps before the level shift of ``steps`` end after the shift's
    step starts on some device. The parts by time need steps in time order: steps from the
    launch order that overlap in time (a step's GPU work running on past the next one's
    start, on another stream) do not split the capture at one time, and the kernels of
    each part cannot be told."""
    shift = steps.level_shift
    if shift is None:
        return False
    bounds = _bounds(steps, shift.step)
    return bool((bounds["before_end"] > bounds["at"]).any())


def untold_words(steps: Steps) -> str:
    """What the step line says when the level shift's kernels cannot be told because the
    steps overlap in time (:func:`overlap`), else ''."""
    if not overlap(steps):
        return ""
    return (
        "; which kernels carry the shift cannot be told: the steps overlap in time (a "
        "step's GPU work runs on past the next one's start)"
    )


def read_shift(
    trace: Trace, where: EventFilter | None, steps: Steps, names: dict[int, str]
) -> ShiftKernels | None:
    """:func:`shift_kernels` of ``steps`` found after the side was read (the diff re-phased
    them): the kernels of ``where`` read again (``queries/steps_launch_rows.sql``, their
    device, start, end and demangled name id, in any order: the parts are sums) when the
    steps shifted level; None when they did not (no read)."""
    import polars as pl

    from ..filters import EventFilter

    if steps.level_shift is None or not names:
        return None
    params = {"selection": None, **(where or EventFilter()).params()}
    rows = trace.query("steps_launch_rows", any_order=True, **params, streams=False, pids=False)
    launches = rows.filter(pl.col("token") >= 0).select(
        "device", "start_ns", "end_ns", name_id="token"
    )
    return shift_kernels(steps, launches, names)


def carriers(shift: ShiftKernels) -> pl.DataFrame:
    """The kernels whose time per step changed by :data:`CARRIER_SHARE` of the kernels'
    change, or more (:meth:`ShiftKernels.per_step`'s rows), largest first."""
    import polars as pl

    rows = shift.per_step()
    total = float(rows["change_ns"].abs().sum())
    if not total:
        return rows.clear()
    return rows.filter(pl.col("change_ns").abs() >= CARRIER_SHARE * total)


def shift_words(shift: ShiftKernels, short_name) -> str:
    """'from step 21 on, per call: GEMM 40.00 µs → 60.00 µs (1.50×, +40.00 µs/step); the
    other kernels kept their cost', or 'every kernel alike' when every kernel launched in
    both parts changed its per-call time alike (within :data:`ALIKE`) and carries the
    shift, or 'no kernel's time moved' (the shift is between the kernels: waits, the
    host). ``short_name``: how a kernel name reads in a sentence."""
    import polars as pl

    rows = shift.per_step()
    named = carriers(shift)
    at = f"from step {shift.step:,} on"
    if named.is_empty():
        return f"{at}, no kernel's time per step moved: the shift is between the kernels"
    both = rows.filter((pl.col("before_calls") > 0) & (pl.col("after_calls") > 0))
    ratios = both["after_call_ns"] / both["before_call_ns"]
    low, high = (float(ratios.min()), float(ratios.max())) if both.height else (1.0, 1.0)
    moved = low > ALIKE or high < 1 / ALIKE
    if both.height >= 2 and high <= low * ALIKE and moved:
        return (
            f"{at}, every kernel alike: {_range(low, high)} per call, "
            f"{fmt_signed_ns(float(rows['change_ns'].sum()))}/step"
        )
    parts = [_kernel_words(r, short_name) for r in named.head(CARRIERS_SHOWN).iter_rows(named=True)]
    more = named.height - CARRIERS_SHOWN
    rest = f"; {more} more" if more > 0 else ""
    others = both.filter(~pl.col("name").is_in(named.head(CARRIERS_SHOWN)["name"].to_list()))
    if others.is_empty():
        return f"{at}, per call: " + "; ".join(parts) + rest
    ratios = others["after_call_ns"] / others["before_call_ns"]
    low, high = float(ratios.min()), float(ratios.max())
    if max(high, 1 / low) <= ALIKE:
        kept = "the other kernels kept their cost"
    else:
        kept = f"the other kernels {_range(low, high)} per call"
    return f"{at}, per call: " + "; ".join(parts) + rest + f"; {kept}"


def _range(low: float, high: float) -> str:
    """'1.50×', or '1.45–1.55×'."""
    if fmt_ratio(low) == fmt_ratio(high):
        return fmt_ratio(low)
    return f"{low:.2f}–{fmt_ratio(high)}"


def _kernel_words(r: dict, short_name) -> str:
    """'GEMM 40.00 µs → 60.00 µs (1.50×, +40.00 µs/step)', or for a kernel launched in one
    part only, its calls and time per step."""
    name = short_name(r["name"])
    change = f"{fmt_signed_ns(r['change_ns'])}/step"
    if r["before_call_ns"] is None or r["after_call_ns"] is None:
        part = "from it only" if r["before_call_ns"] is None else "before it only"
        return f"{name} launched {part} ({change})"
    ratio = r["after_call_ns"] / r["before_call_ns"]
    calls = "" if r["same_calls"] else ", other calls per step"
    return (
        f"{name} {fmt_ns(r['before_call_ns'])} → {fmt_ns(r['after_call_ns'])} "
        f"({fmt_ratio(ratio)}, {change}{calls})"
    )


def kernel_note(shift: ShiftKernels | None, name: str, side: str) -> str:
    """'; B: 40.00 µs per call before step 21, 60.00 µs from it (1.50×)' for a kernel
    that carries ``side``'s shift, else ''. What the per-call clue adds: its mean per
    call mixes the two levels."""
    if shift is None:
        return ""
    rows = carriers(shift).filter(name=name)
    if rows.is_empty():
        return ""
    r = rows.row(0, named=True)
    if r["before_call_ns"] is None or r["after_call_ns"] is None:
        return ""
    ratio = r["after_call_ns"] / r["before_call_ns"]
    return (
        f"; {side}: {fmt_ns(r['before_call_ns'])} per call before step {shift.step:,}, "
        f"{fmt_ns(r['after_call_ns'])} from it ({fmt_ratio(ratio)})"
    )
