"""Compare two fingerprints: where the numerical path of run B leaves run A's.

A *unit* is one (device, region, step) of a document. Units present in both are compared
launch by launch: the two sequences are aligned on kernel names by a minimal edit script
(:mod:`tracelens.fingerprint.edits`: past _EDITS_MAX edits by difflib, window by window
past 20M launch pairs), so a kernel that kept its name but not its grid is a
launch-configuration change (usually a shape change), a different name in the same slot is
a kernel-variant change (different math), and what is left over was added or removed (a
merge kernel, a split-K reduction). A unit whose launches are the same variants as often
in another order is one launch-order change (``_reordered``), not aligned at all. Units with the same changes in several steps are
reported once, with their steps. The alignment work of a whole comparison is bounded
(:mod:`tracelens.fingerprint.budget`): units past it are compared by their variant counts,
and the note says how many. The result types are in :mod:`tracelens.fingerprint.model`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import brought, budget, counted, listed
from .devices import devices_text
from .edits import _change
from .model import (
    ADDED,
    CONFIG,
    KINDS,
    ORDER,
    REMOVED,
    VARIANT,
    Divergence,
    Kernel,
    KernelChange,
    PathDiff,
    RegionChange,
)
from .places import first_changes

__all__ = [
    "ADDED",
    "CONFIG",
    "KINDS",
    "ORDER",
    "REMOVED",
    "VARIANT",
    "Divergence",
    "Kernel",
    "KernelChange",
    "PathDiff",
    "RegionChange",
    "compare",
    "steps_note",
]


@dataclass
class _Unit:
    order: int
    launches: int
    kernels: list[Kernel]  # the listed launches
    blocks: tuple[str, ...]
    counts: dict[Kernel, int]
    before: int = 0  # outside the steps: launches before the first step (fingerprint.ends)
    after: int = 0  # and after the last
    at: tuple = ()  # where its launches are in the capture (fingerprint.places); () unknown
    # outside the steps, once its launches before and after them were set apart and put
    # back (fingerprint.outside): its entry's (before, after, launches), and the offset in
    # the entry of its first launch (those one capture held beyond the other left out)
    entry_ends: tuple = ()
    first_offset: int = 0
    # the launches past the listed ones, by variant (counted.tail; empty: all listed)
    tail: Counter = field(default_factory=Counter)


def _units(doc: dict[str, Any]) -> dict[tuple, _Unit]:
    """The document's units by (device, region, step)."""
    variants = {v["id"]: Kernel.of(v) for v in doc["variants"]}
    out: dict[tuple, _Unit] = {}
    for order, entry in enumerate(doc["paths"]):
        kernels = [variants[i] for i in entry["sequence"]]
        counts = {variants[i]: n for i, n in entry.get("counts", ())}
        blocks = tuple(entry.get("blocks", ()))
        ends = (entry.get("before", 0), entry.get("after", 0))
        flat = entry.get("at", ())
        at = tuple(zip(flat[::2], flat[1::2], strict=True))
        unit = _Unit(order, entry["launches"], kernels, blocks, counts, *ends, at)
        unit.tail = counted.tail(counts, kernels)
        for step in entry["steps"] or [None]:
            out[(entry["device"], tuple(entry["region"]), step)] = unit
    return out


def _flatten(units: dict[tuple, _Unit]) -> tuple[dict[tuple, _Unit], dict[tuple, Any]]:
    """One unit per (device, region) with its launches in launch order (when the two runs'
    steps differ): those before the first step, then between steps, the steps' in step
    order, then those after the last step (a step the capture ended inside); and each
    one's shape (:class:`tracelens.fingerprint.outside.Shape`)."""
    from .outside import Shape, split

    units = dict(units)
    heads, tails = split(units)  # the units outside the steps keep those between steps
    parts: dict[tuple, list[tuple[Any, _Unit]]] = {}
    for (device, region, step), unit in sorted(units.items(), key=lambda kv: _step_order(kv[0])):
        parts.setdefault((device, region), []).append((step, unit))
    flat: dict[tuple, _Unit] = {}
    shapes: dict[tuple, Shape] = {}
    for (device, region), steps in parts.items():
        key = (device, region, None)
        head, tail = heads.get((device, region), []), tails.get((device, region), [])
        flat[key] = _Unit(steps[0][1].order, 0, [], (), {})
        shape = shapes[key] = Shape(len(head), [], len(tail), bool(head or tail))
        for step, unit in [(None, _listed(head)), *steps, (None, _listed(tail))]:
            _merge(flat, key, unit)
            if step is not None:
                shape.steps.append(unit.launches)
                shape.numbers.append(step)
            elif unit.kernels is not head and unit.kernels is not tail:
                shape.head += unit.launches  # between steps: flattened before them
    return flat, shapes


def _listed(kernels: list[Kernel]) -> _Unit:
    return _Unit(0, len(kernels), kernels, (), {})


def _merge(flat: dict[tuple, _Unit], key: tuple, unit: _Unit) -> None:
    """Append ``unit``'s launches to the flattened unit ``key``."""
    if key not in flat:
        flat[key] = _Unit(unit.order, 0, [], (), {})
    merged = flat[key]
    merged.launches += unit.launches
    merged.kernels.extend(unit.kernels)
    merged.blocks += unit.blocks
    for k, n in unit.counts.items():
        merged.counts[k] = merged.counts.get(k, 0) + n
    merged.tail.update(unit.tail)


def _step_order(key: tuple) -> tuple:
    device, region, step = key
    return (device, region, -1 if step is None else step)


def steps_note(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why the two documents are compared over whole captures, or None when their steps
    agree (same method and count)."""
    sa, sb = a["steps"], b["steps"]
    if (sa["method"], sa["count"]) == (sb["method"], sb["count"]):
        return None
    return (
        f"the steps differ (A: {sa['count']} by {sa['method']}, B: {sb['count']} by "
        f"{sb['method']}): each region is compared over all its steps at once"
    )


def _unlisted(a: _Unit, b: _Unit) -> str | None:
    """Which unlisted launches differ, from the block digests and variant counts."""
    if not (a.blocks or b.blocks) or (a.blocks == b.blocks and a.launches == b.launches):
        return None
    size = max(len(a.kernels), len(b.kernels))
    first = next(
        (i for i, (x, y) in enumerate(zip(a.blocks, b.blocks, strict=False)) if x != y),
        min(len(a.blocks), len(b.blocks)),
    )
    more = {k: b.counts.get(k, 0) - a.counts.get(k, 0) for k in {*a.counts, *b.counts}}
    grew = sum(1 for n in more.values() if n > 0)
    shrank = sum(1 for n in more.values() if n < 0)
    return (
        f"{a.launches:,} → {b.launches:,} launches; the first differing block of {size:,} "
        f"starts at launch #{first * size + 1:,}; {grew} variants run more often, "
        f"{shrank} less often"
    )


def _reordered(a: _Unit, b: _Unit) -> KernelChange | None:
    """The launch-order change of a unit whose listed launches differ but are the same
    variants as often (and so are its unlisted ones, by their counts), at the first launch
    that differs; else None. No alignment: an edit script would call a reorder kernels
    added and removed, and spend the most on it (two orders of the same launches)."""
    if a.kernels == b.kernels or a.launches != b.launches or a.counts != b.counts:
        return None
    if Counter(a.kernels) != Counter(b.kernels):
        return None
    first = next(i for i, (x, y) in enumerate(zip(a.kernels, b.kernels, strict=True)) if x != y)
    return KernelChange(ORDER, first + 1, a.kernels[first], b.kernels[first])


def _compare_units(
    a: _Unit | None, b: _Unit | None
) -> tuple[list[KernelChange], counted.Unlisted | None]:
    """The changes of the listed launches, and what differs past them (:mod:`.counted`)."""
    if a is None:
        changes = [_change(ADDED, j + 1, None, k) for j, k in enumerate(b.kernels)]
        return changes, counted.one_side(a, b)
    if b is None:
        changes = [_change(REMOVED, i + 1, k, None) for i, k in enumerate(a.kernels)]
        return changes, counted.one_side(a, b)
    order = _reordered(a, b)
    if order is not None:
        return [order], counted.both_sides(a, b, _unlisted(a, b), [order])
    changes, tail_a, tail_b = listed.changes(a, b)
    return changes, counted.both_sides(a, b, _unlisted(a, b), changes, (tail_a, tail_b))


def _compare_captures(
    a: _Unit, b: _Unit, shapes: tuple[Any, Any] | None
) -> tuple[list[KernelChange], counted.Unlisted | None, Any]:
    """:func:`_compare_units` of one region in two runs whose steps differ: launches only
    one side holds at the start or end are left out and returned apart (capture.Ends);
    the shorter sequence being a slice of the longer is found without an alignment.
    ``shapes`` (:class:`tracelens.fingerprint.outside.Shape` of each side, when known): a
    side that started or ended inside a step is aligned before the same launches in
    another order are taken for a launch-order change (a capture started and ended a few
    launches later holds the same kernels as often, one step's order rotated), and those
    left to one side are at most whole steps and the launches outside them
    (:func:`tracelens.fingerprint.outside.clamp`)."""
    from . import capture
    from .outside import clamp

    cut = shapes is not None and (shapes[0].cut or shapes[1].cut)
    order = _reordered(a, b)  # the same launches in another order: no end is one side's
    changes: list[KernelChange] = []
    ends = (
        capture.Ends()
        if order is not None and not cut
        else capture.slice_ends(a.kernels, b.kernels, shapes)
    )
    if order is not None and not cut:
        changes = [order]
    elif ends is None:
        changes, ends = capture.aligned_ends(a.kernels, b.kernels, shapes)
    if shapes is not None and ends:
        changes, ends = clamp(a.kernels, b.kernels, changes, ends, shapes)
    if order is not None and cut and changes:
        changes, ends = [order], capture.Ends()  # not a rotation: another order
    unlisted = None if capture.blocks_slice(a.blocks, b.blocks) else _unlisted(a, b)
    return changes, counted.both_sides(a, b, unlisted, changes), ends


def _compare_key(a: _Unit | None, b: _Unit | None, whole, ends, spent: budget.Budget):
    """(a, b, changes, unlisted) of one unit key: ``_compare_captures`` when ``whole``
    (the steps differ: None, or the two sides' shapes of the key, or (None, None); the
    launches only one capture holds at an end are added to ``ends``), else
    ``_compare_units``; by variant counts when the comparison's alignment budget
    (``spent``) runs out."""
    try:
        if whole is not False and a is not None and b is not None:
            changes, unlisted, cut = _compare_captures(a, b, whole)
            ends.add(cut)
            return a, b, changes, unlisted
        return a, b, *_compare_units(a, b)
    except budget.OverBudget:
        spent.counted += 1
        return a, b, [], counted.by_counts(a, b, budget.by_counts(a, b))


def _shapes(pair):
    """False (steps agree), the two shapes of a key, or None where one side has none."""
    if pair is False:
        return False
    return None if None in pair else pair


def _set_apart_moved(changed: list[tuple], ua: dict, ub: dict, keys: set):
    """(``changed`` less the units whose launches only changed device, those units, how
    many launches run on another device, the device of the other side each unit only one
    side holds is a replica of, {key: device or None}) (:mod:`tracelens.fingerprint.devices`); ``keys``:
    the unit keys compared. Added launches bring a danger rule only where A runs no such
    kernel in that region and step (:mod:`.brought`: in the unit, or for a unit only B
    holds on A's other devices, :meth:`.devices.OneSided.matched_danger`)."""
    from . import devices

    groups = devices.moved(ua, ub, keys, {unit[0] for unit in changed})
    lone = {unit[0] for unit in changed if unit[1] is None or unit[2] is None}
    others = devices.OneSided(ua, ub, lone) if lone else None
    kept, apart, same = [], [], {}
    for key, unit_a, unit_b, changes, unlisted in changed:
        if key[1:] in groups:
            apart.append((key, unit_a, unit_b, changes, unlisted))
            continue
        if unit_a is None:
            changes = others.matched_danger(key, changes)
            unlisted = others.matched_unlisted(key, unlisted)
        else:
            changes, unlisted = brought.in_unit(unit_a, changes, unlisted)
        if unit_a is None or unit_b is None:
            side, other = (unit_b, "a") if unit_a is None else (unit_a, "b")
            same[key] = others.replica_of(key, side, other)
        kept.append((key, unit_a, unit_b, changes, unlisted))
    return kept, apart, sum(groups.values()), same


def _region_changes(changed, same: dict | None = None) -> list[RegionChange]:
    """The changed units as regions: one per (device, region, changes, what differs past
    the listed launches, status, the device it is a replica of: ``same``) with the steps it
    holds them in."""
    grouped: dict[tuple, list] = {}
    for key, unit_a, unit_b, changes, unlisted in changed:
        device, region, step = key
        status = "added" if unit_a is None else "removed" if unit_b is None else "changed"
        group = (device, region, tuple(changes), unlisted, status, (same or {}).get(key))
        grouped.setdefault(group, []).append(step)
    return [
        RegionChange(
            dev,
            reg,
            tuple(s for s in steps if s is not None),
            ch,
            None if unl is None else unl.text,
            status,
            of,
            () if unl is None else unl.counted,
        )
        for (dev, reg, ch, unl, status, of), steps in grouped.items()
    ]


def _figures(regions: list[RegionChange], compared: int, moved: int = 0) -> dict[str, int]:
    """Counts over every step a change happens in (a change in steps 2-4 counts 3 times).
    ``kernels_added`` and ``kernels_removed`` are the older names of ``launches_added`` and
    ``launches_removed`` (they always counted launches), kept for the gates written on
    them. ``moved``: launches that only run on another device (``launches_moved``), not
    counted in ``path_changed``: the same kernels with the same launch configurations do
    the same math on another GPU (:mod:`tracelens.fingerprint.devices`). The launches
    past a unit's listed ones count by their variants (``RegionChange.counted``)."""

    def total(kind: str | None = None, danger: bool = False) -> int:
        return sum(
            max(1, len(r.steps)) * n
            for r in regions
            for c, n in (*((c, 1) for c in r.changes), *((c, c.launches) for c in r.counted))
            if (kind is None or c.kind == kind)
            and (not danger or (c.danger_new and c.kind != REMOVED))
        )

    return {
        "path_changed": int(bool(regions)),
        "regions_compared": compared,
        "regions_changed": len(regions),
        "variant_changed": total(VARIANT),
        "config_changed": total(CONFIG),
        "kernels_added": total(ADDED),
        "kernels_removed": total(REMOVED),
        "launches_added": total(ADDED),
        "launches_removed": total(REMOVED),
        "launches_moved": moved,
        "danger_added": total(danger=True),
        "order_changed": total(ORDER),
    }


def _set_apart(a: dict, b: dict, units: tuple[dict, dict], steps_differ: bool, one: bool):
    """(A's and B's units to compare, keyed (device, region, step); per side the shapes of
    their steps when the two documents' steps differ (else empty); the keys set apart as
    launches only one capture holds; the capture ends, :class:`.capture.Ends`). ``units``:
    each side's units as read (:func:`_units`); ``steps_differ``: :func:`steps_note` said
    so; ``one``: the documents may be of one program (else nothing is set apart)."""
    from .capture import Ends, cut_steps, lone_ends
    from .outside import beyond, known_steps, split, trim

    ra, rb = units
    shapes: tuple[dict, dict] = ({}, {})
    if steps_differ:
        (ua, shapes_a), (ub, shapes_b) = _flatten(ra), _flatten(rb)
        shapes = (shapes_a, shapes_b)
        # regions only in steps one capture ended before (of one kind: the regions of NVTX
        # ranges are none of a capture's whole steps)
        counts = (a["steps"]["count"], b["steps"]["count"])
        same = a.get("regions") == b.get("regions") and one
        cut, ends = beyond(ua, ub, shapes, counts) if same else (set(), Ends())
    elif one:
        ua, ub = dict(ra), dict(rb)
        cut, ends = cut_steps(ua, ub)
        # before the first step and after the last: one capture started or ended later
        sides = split(ua), split(ub)
        ends.add(trim(ua, ub, sides, known_steps(ra, rb)))
    else:
        ua, ub, cut, ends = dict(ra), dict(rb), set(), Ends()
    if one:
        lone, lone_cut = lone_ends(ua, ub, ra, rb)  # a cut step's launches in no range
        cut |= lone
        ends.add(lone_cut)
    return ua, ub, shapes, cut, ends


def compare(a: dict[str, Any], b: dict[str, Any]) -> PathDiff:
    """Where B's numerical path differs from A's (both fingerprint documents). Launches
    only one capture holds at its start or end are a capture difference
    (``PathDiff.ends``, in words ``PathDiff.capture``), not a change."""
    from .programs import unrelated

    note = steps_note(a, b)
    # two programs, not one captured apart: no launch is set aside as a capture difference
    caveat = unrelated(a, b)
    ra, rb = _units(a), _units(b)
    ua, ub, shapes, cut, ends = _set_apart(a, b, (ra, rb), note is not None, caveat is None)

    def order(key: tuple) -> tuple:
        device, _region, step = key
        unit = ua.get(key) or ub[key]
        return (device, -1 if step is None else step, unit.order, key in ua)

    def whole(key: tuple):
        if note is None or caveat is not None:
            return False
        return shapes[0].get(key), shapes[1].get(key)

    with budget.budgeted() as spent:
        compared_units = [
            (key, *_compare_key(ua.get(key), ub.get(key), _shapes(whole(key)), ends, spent))
            for key in sorted({*ua, *ub} - cut, key=order)
        ]
    changed = [u for u in compared_units if u[3] or u[4] is not None]
    changed, moved, shifted, same = _set_apart_moved(
        changed, ua, ub, {u[0] for u in compared_units}
    )
    first, first_math = _firsts(changed)
    regions = _region_changes(changed, same)
    compared = len({(d, r) for d, r, _s in {*ua, *ub}})
    figures = _figures(regions, compared, shifted)
    devices = devices_text(ua, ub) if moved else None
    apart = _capture_ends(a, b, ends, (ra, rb), cut) if ends else None
    capture = None
    if apart is not None:
        from .board import capture_text

        capture = capture_text(apart)
        said = f"{capture[0].upper()}{capture[1:]}"
        note = said if note is None else f"{note}. {said}"
    if spent.counted:  # say so: those regions were not aligned
        said = budget.note(spent.counted)
        note = said if note is None else f"{note}. {said[0].upper()}{said[1:]}"
    replays = (a.get("graph_replays", 0), b.get("graph_replays", 0))
    kinds = (a.get("regions", ""), b.get("regions", ""))
    return PathDiff(
        tuple(regions),
        first,
        first_math,
        figures,
        compared,
        note,
        capture,
        replays,
        kinds,
        apart,
        caveat,
        tuple(_region_changes(moved)),
        devices,
    )


def _firsts(changed: list[tuple]) -> tuple[Divergence | None, Divergence | None]:
    """(the first divergence, the first change of the math) of the ``changed`` units: in
    launch order where the documents place every change (fingerprint.places), else the
    first in the units' order."""
    placed = first_changes(changed, (VARIANT, ADDED, REMOVED))
    if placed is not None:
        first, first_math = (
            None if p is None else Divergence(*p[0], p[1], launch=p[2]) for p in placed
        )
        return first, first_math
    first = first_math = None
    for (device, region, step), _unit_a, _unit_b, changes, unlisted in changed:
        if first is None:
            # the unlisted launches' sentence when no listed launch differs (a divergence
            # with a change says that change, and equals the first change of math then)
            said = None if unlisted is None or changes else unlisted.text
            first = Divergence(device, region, step, changes[0] if changes else None, said)
        math = next((c for c in changes if c.kind not in (CONFIG, ORDER)), None)
        if first_math is None and math is not None:
            first_math = Divergence(device, region, step, math)
    return first, first_math


def _capture_ends(a: dict[str, Any], b: dict[str, Any], ends: Any, units: tuple, cut: set):
    """The launches only one capture holds at its ends (``ends``: capture.Ends) with the
    two documents' steps, as :class:`tracelens.fingerprint.ends.CaptureEnds`; ``units``:
    each document's units by (device, region, step), ``cut``: the keys left out (whether
    the launches could as well be at the other end, outside.either_end)."""
    from .ends import CaptureEnds
    from .outside import either_end

    wider = (bool(ends.a_head or ends.a_tail), bool(ends.b_head or ends.b_tail))
    ambiguous = either_end(*units, cut, wider)
    sa, sb = a["steps"], b["steps"]
    return CaptureEnds(
        sa["count"],
        sb["count"],
        sa["method"],
        sb["method"],
        before_start_a=ends.a_head,
        past_end_a=ends.a_tail,
        before_start_b=ends.b_head,
        past_end_b=ends.b_tail,
        ambiguous=ambiguous,
    )
