"""What one step costs when the diff's steps are the repetitions of the launch sequence
(``notes.impact_steps``: the steps ``tracelens steps`` finds do not hold most of both runs'
GPU time, so the per-step unit counts how often the launch motif on the busiest device
repeats, ``period.py``).

Such steps are counted, not placed in time: no step has a GPU window of its own. "Per step"
still means what one repetition of the program costs, its work and the wait until the next
repetition starts, so that the same program captured for more or fewer steps costs the same
per step. From the first GPU operation to the last, a capture of n steps holds only n - 1 of
those waits (the one after its last step is not captured): that span divided by n gives
each step (n - 1)/n of its wait, less the fewer steps were captured (the steps
``tracelens steps`` places in time are timed start to start instead, ``clues.accounting``).

So the repetitions are timed by the kernel that starts them: per device, the one launched
once per step (as often as the device has steps) that the capture launches first. n steps
take the time from its first launch to its last (n - 1 steps, start to start), plus the
last step, taken as long as the one before it: exact for a capture of whole steps of one
program, whatever its first step does before that kernel (an input copy), and a first step
unlike the others (a prefill before a decode loop) counts as itself. The span lacks the
difference, the uncaptured wait, which counts as idle time. Cost: nothing until the
alignment has counted the steps, then, for this unit only, a count of each repeating
device's kernels and three starts of the one chosen (the starts are the step search's
column, kept: :attr:`.collect.Side.launch_starts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..util import Util
    from .collect import Side
    from .model import SequenceAlignment


def repetition_gap(side: Side, steps: dict[int, int], spans: dict[int, int]) -> int:
    """The time n steps take (module doc) less the span that holds them (``spans``: per
    device, from its first GPU operation to its last), summed over the devices that repeat
    a step (``steps``: how many each holds, :func:`device_steps`), ns: the wait after the
    last step, which the capture ends before. 0 where it is not positive (work after the
    last step, one step longer than the one before), where the launches of the kernel
    that starts the steps are not in time order (several processes launching on the
    device, one after another), or without the launch starts
    (:attr:`.collect.Side.launch_starts`: left out)."""
    if side.launch_starts is None or not steps:
        return 0
    offset, total = 0, 0
    for device, seq in side.sequences.items():  # device after device, as the starts
        if device in steps:
            at = _step_starts(seq, steps[device])
            if at is not None:
                lead, before_last, last = (int(side.launch_starts[offset + i]) for i in at)
                if lead <= before_last <= last:
                    held = (last - lead) + (last - before_last)
                    total += max(held - spans.get(device, held), 0)
        offset += len(seq)
    return total


def _step_starts(seq: pl.Series, steps: int) -> tuple[int, int, int] | None:
    """The positions in ``seq`` (one device's launches in host launch order, as tokens) of
    the first, second-to-last and last launch of the kernel launched ``steps`` times that
    comes first; None without one."""
    import polars as pl

    counts = seq.value_counts()
    tokens = counts.filter(pl.col("count") == steps).to_series(0)
    if steps < 2 or tokens.is_empty():
        return None
    where = (
        pl.DataFrame({"token": seq})
        .with_row_index("at")
        .filter(pl.col("token").is_in(tokens.implode()))
        .group_by("token")
        .agg(
            first=pl.col("at").first(),
            before_last=pl.col("at").tail(2).first(),
            last=pl.col("at").last(),
        )
        .sort("first")
    )
    return tuple(int(v) for v in where.row(0)[1:])


def device_steps(alignment: tuple[SequenceAlignment, ...], run: int) -> dict[int, int]:
    """How many steps (repetitions of the launch motif) each device of run ``run`` (0: A,
    1: B) holds, where the alignment found the run repeats one there."""
    out = {}
    for al in alignment:
        steps = al.steps_b if run else al.steps_a
        if steps:
            out[al.device_b if run and al.device_b is not None else al.device] = steps
    return out


def device_spans(util: Util, edges: tuple[str, ...]) -> dict[int, int]:
    """Per device, util's span less its idle time at the ``edges`` (its causes before the
    first GPU operation and after the last): from the first GPU operation to the last."""
    import polars as pl

    edge = (
        util.idle_causes.filter(pl.col("cause").is_in(edges))
        .group_by("device")
        .agg(edge=pl.col("time_ns").sum())
    )
    frame = util.frame.join(edge, on="device", how="left")
    spans = frame.select("device", pl.col("span_ns") - pl.col("edge").fill_null(0))
    return dict(spans.iter_rows())
