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
step-time clue says it is unsure where the period did not move.
"""

from __future__ import annotations

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
    in every motif, or re-phasing did not start every device's steps at it (then nothing
    changes)."""
    sa, sb = sides
    if sa is sb or not (phase_kernels(sa.steps) and phase_kernels(sb.steps)):
        return None
    if phased_alike(sa.steps, sb.steps):
        return None
    target = _common_phase(sa.steps, sb.steps)
    if target is None:
        return None
    moved = {}
    for i, side in enumerate(sides):
        if phase_kernels(side.steps) == {target}:
            continue
        from ..steps import period_steps_at

        steps = period_steps_at(traces[i], target, wheres[i])
        if phase_kernels(steps) != {target} or set(steps.motif) != set(side.steps.motif):
            return None
        moved[i] = steps
    for i, steps in moved.items():
        was = phase_kernels(sides[i].steps)
        sides[i].steps = steps
        _recount_regions(traces[i], wheres[i], sides[i], nvtx_limit)
        _reshift(traces[i], wheres[i], sides[i])
        moved[i] = was
    return _note(target, moved)


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
