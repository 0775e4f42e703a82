"""Where a change is in the capture, so that the first divergence is the first launch that
differs in launch order, not the first in the first region listed: a region's launches can
come before and after other regions' (a prefill's own launches before its layers and after
them), so its launch #4 may be the capture's #340 while another region's #2 is its #4.

A document's entry says where its (first unit's) launches are (``at``, format version 11:
the offset in the unit and the place of each stretch of launches consecutive in the
capture, from 0, as one flat list of pairs; a place counts among the launches of the step
on the device, outside the steps among the device's launches, in launch order as a unit
takes it: one process's after another's, one host thread's after another's, so that how
two threads' calls interleaved, which the host scheduler decides, changes no place). A change is then keyed (device, phase, step, place): launches
before the first step, the steps in order, launches between steps (placed after the steps:
the document does not say which steps they fall between), then those after the last step.
Without ``at`` (a version 10 document, a unit of more than unitrows.AT_RUNS stretches, or
regions compared over all their steps at once) no change has a place, and the first is
found region by region in the document's order, as before."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from .model import REMOVED, KernelChange


def place(at: tuple[tuple[int, int], ...], position: int) -> int:
    """The place (from 0) of the launch at ``position`` (from 1) of a unit whose stretches
    are ``at``."""
    offset = position - 1
    i = bisect_right([o for o, _ in at], offset) - 1
    start, where = at[max(i, 0)]
    return where + offset - start


def change_key(key: tuple, unit_a: Any, unit_b: Any, change: KernelChange) -> tuple | None:
    """(device, phase, step, place) of ``change`` in the unit ``key`` (device, region,
    step), on B's side (A's for a removed kernel, whose position is A's); None when that
    unit has no places."""
    device, _region, step = key
    unit = unit_a if change.kind == REMOVED else unit_b
    if unit is None or not unit.at:
        return None
    offset = change.position - 1 + unit.first_offset  # in its entry's launches
    where = place(unit.at, offset + 1)
    if step is not None:
        return (device, 1, step, where)
    before, after, launches = unit.entry_ends or (unit.before, unit.after, unit.launches)
    if offset < before:
        phase = 0
    elif offset >= launches - after:
        phase = 3
    else:
        phase = 2
    return (device, phase, 0, where)


def first_changes(compared: list[tuple], math_kinds: tuple[str, ...]):
    """(the first change, the first change of the math) of ``compared`` ((key, unit_a,
    unit_b, changes, unlisted) per unit) in launch order, each (key, change, its place from
    1); None when some changed unit has no places (then found in the document's order)."""
    first = first_math = None
    for key, unit_a, unit_b, changes, unlisted in compared:
        if unlisted is not None and not changes:
            return None  # only digests differ: no launch to place
        for change in changes:
            at = change_key(key, unit_a, unit_b, change)
            if at is None:
                return None
            if first is None or at < first[0]:
                first = (at, key, change)
            if change.kind in math_kinds and (first_math is None or at < first_math[0]):
                first_math = (at, key, change)
    return tuple(None if f is None else (f[1], f[2], f[0][3] + 1) for f in (first, first_math))
