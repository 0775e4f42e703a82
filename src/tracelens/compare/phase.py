"""Both runs' period steps started at the same kernel (:func:`phase_alike`).

``tracelens steps`` starts a run's period steps at the motif's launch with the longest idle
time before it (:mod:`tracelens.steps_period`). Two runs of one program can be phased on
different kernels: B's kernel before A's boundary got slower and ate the host's wait, so
B's longest wait now precedes another kernel. A step's duration runs from its first launch
to its last, so the two runs' step durations then hold different parts of the wait between
steps, and the step time, the per-step parts and the per-step impacts compare unlike steps.
Where both runs' steps come from the launch period and one kernel is launched once in
every motif of both, the diff phases them on it (the other run's own phase kernel first),
with :func:`tracelens.steps.period_steps_at`; otherwise the steps stay as found and the
step-time clue says it is unsure where the period did not move. Under a selection
(--steps, --nvtx, a window) the re-phased steps at the selected work's ends that it holds
only part of are left out (:func:`_whole_steps`): --steps 11:30 re-phased would start
inside step 11 and end inside step 31.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace
    from .collect import Side


def phase_kernels(steps: Steps | None) -> frozenset[str]:
    """The kernels a run's period steps start at (one per device: its motif's first), or
    none when its steps are not period steps."""
    if steps is None or steps.method != "period" or not steps.count:
        return frozenset()
    return frozenset(m[0] for m in steps.motif.values() if m)


def phased_alike(steps_a: Steps | None, steps_b: Steps | None) -> str | None:
    """The kernel both runs' period steps start at on every device, else None."""
    ka, kb = phase_kernels(steps_a), phase_kernels(steps_b)
    return next(iter(ka)) if len(ka) == 1 and ka == kb else None


def _common_phase(steps_a: Steps, steps_b: Steps) -> str | None:
    """The kernel to phase both runs on: A's phase kernel, else B's, else the first of
    A's motif, each only when every motif of both runs launches it once; None when none
    does."""
    motifs = [*steps_a.motif.values(), *steps_b.motif.values()]
    first = next(iter(steps_a.motif.values()), ())
    ka, kb = sorted(phase_kernels(steps_a)), sorted(phase_kernels(steps_b))
    for name in (*ka, *kb, *first):
        if all(m.count(name) == 1 for m in motifs):
            return name
    return None


def phase_alike(
    traces: tuple[Trace, Trace],
    wheres: tuple[EventFilter | None, EventFilter | None],
    sides: tuple[Side, Side],
    nvtx_limit: int,
) -> str | None:
    """Re-phase the period steps of the side(s) not started at the common kernel
    (:func:`_common_phase`) on it, in place (``Side.steps``, and its NVTX region times,
    which count per step), and say so (a note for the board); None when the runs are
    phased alike already, either's steps are not period steps, no kernel is launched once
    in every motif, re-phasing did not start every device's steps at it, or left a device
    no whole step under a selection (then nothing changes)."""
    sa, sb = sides
    if sa is sb or not (phase_kernels(sa.steps) and phase_kernels(sb.steps)):
        return None
    if phased_alike(sa.steps, sb.steps):
        return None
    target = _common_phase(sa.steps, sb.steps)
    if target is None:
        return None
    moved, cut = {}, {}
    for i, side in enumerate(sides):
        if phase_kernels(side.steps) == {target}:
            continue
        from ..steps import period_steps_at

        steps = period_steps_at(traces[i], target, wheres[i])
        if phase_kernels(steps) != {target} or set(steps.motif) != set(side.steps.motif):
            return None
        steps, cut[i], parts = _whole_steps(side.steps, steps, wheres[i])
        if steps is None:
            return None
        moved[i] = steps, parts
    for i, (steps, parts) in moved.items():
        was = phase_kernels(sides[i].steps)
        sides[i].steps = steps
        # the cut parts' work is still the side's: its per-step figures count it
        sides[i].cut_steps, sides[i].cut_busy_ns = parts
        _recount_regions(traces[i], wheres[i], sides[i], nvtx_limit)
        _reshift(traces[i], wheres[i], sides[i])
        moved[i] = was
    return _note(target, moved) + _cut_words(cut)


def _whole_steps(
    was: Steps, steps: Steps, where: EventFilter | None
) -> tuple[Steps | None, list[int], tuple[int, int]]:
    """``steps`` (re-phased, restricted to the side's filter) without the parts of steps
    the re-phasing cut off at the filtered work's ends, and the numbers of those steps.
    A selection of whole steps (--steps 11:30) re-phased starts inside one step and ends
    inside another: those two parts are no steps, and counted as steps they made the level
    shift's parts hold other calls per step, and a step selected alone (--step 20) two
    half steps. So per device the first and the last step are left out when they hold
    fewer kernels than the steps ``was`` (the side's steps before re-phasing, restricted
    alike) hold there (median): with --nvtx each step holds the same part of its kernels
    either way. A whole trace's steps are left as they are (``where`` None or whole: no
    selection to cut). None when a device would be left without steps (the side's steps
    then stay as found). Also the steps' worth of kernels the parts left out hold together
    (rounded; the most of any device: --steps 11:30's two parts hold one step's) and their
    GPU busy time, ns: the side's work still holds them (``Side.cut_steps``)."""
    import polars as pl

    frame = steps.frame
    if where is None or where.is_whole() or not frame.height:
        return steps, [], (0, 0)
    held = was.frame.group_by("device").agg(held=pl.col("kernels").median())
    step = pl.col("step")
    end = (step == step.min().over("device")) | (step == step.max().over("device"))
    rows = frame.join(held, on="device", how="left")
    part = end & (pl.col("kernels") < pl.col("held")).fill_null(False)
    cut = rows.filter(part)
    if cut.is_empty():
        return steps, [], (0, 0)
    kept = rows.filter(~part).select(frame.columns)
    if kept["device"].n_unique() < frame["device"].n_unique():
        return None, [], (0, 0)
    worth = cut.group_by("device").agg(worth=pl.col("kernels").sum() / pl.col("held").first())
    parts = round(worth["worth"].max()), int(cut["busy_ns"].sum())
    return replace(steps, frame=kept), sorted(cut["step"].unique().to_list()), parts


def _cut_words(cut: dict[int, list[int]]) -> str:
    """'; B's steps 11 and 31 left out of its steps: …' for the steps :func:`_whole_steps`
    left out of each side's, else ''."""
    from ..steps import _list

    def listed(numbers: list[int]) -> str:
        return " and ".join(map(str, numbers)) if len(numbers) <= 2 else _list(numbers)

    return "".join(
        f"; {'AB'[i]}'s step{'s' if len(numbers) > 1 else ''} {listed(numbers)} left out of "
        "its steps: once re-phased, the selected work holds only part of "
        f"{'them' if len(numbers) > 1 else 'it'}"
        for i, numbers in sorted(cut.items())
        if numbers
    )


def _recount_regions(trace: Trace, where, side: Side, nvtx_limit: int) -> None:
    """The side's NVTX region times counted again over its re-phased steps (they count per
    step), when it had them."""
    if side.regions is None or (side.totals["kernel_launches"] or 0) > nvtx_limit:
        return
    from ..filters import EventFilter
    from .regions import region_times

    side.regions = region_times(trace, where or EventFilter(), side.steps)


def _reshift(trace: Trace, where, side: Side) -> None:
    """The side's level shift's kernels found again over its re-phased steps: the step the
    shift is at, and the parts, are those steps' (the board numbers steps by them)."""
    from .shift import read_shift

    side.shift = read_shift(trace, where, side.steps, side.shift_names or {})


def _note(target: str, moved: dict[int, frozenset[str]]) -> str:
    from .clues import short_name

    if len(moved) == 2:
        start = f"both runs' steps start at their {short_name(target)} launch"
    else:
        (i,) = moved
        start = f"{'AB'[i]}'s steps start at their {short_name(target)} launch, as {'BA'[i]}'s"
    own = "; ".join(
        f"{'AB'[i]} alone at its {', '.join(short_name(k) for k in sorted(was))} launch"
        for i, was in sorted(moved.items())
    )
    return (
        f"steps phased alike: {start}, so both runs' step durations hold the same part of "
        f"the wait between steps (`tracelens steps` phases them after the longest idle "
        f"time: {own})"
    )
