"""The launches outside the steps in a comparison: before a device's first step (a step the
capture started inside, or a warm-up), between steps, and after its last step (a step the
capture ended inside), as the document says them (``before`` and ``after`` of an entry
outside the steps, :mod:`tracelens.fingerprint.ends`).

Launches one capture holds before the other's first launch or past its last one are a fact
about the captures, not a change of the path (:mod:`tracelens.fingerprint.capture`); those
inside the steps both captures hold whole are compared launch by launch, so a kernel
missing from such a step is still removed (:func:`clamp`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .capture import Ends
from .edits import _sequence_changes
from .model import REMOVED


@dataclass
class Shape:
    """One region of one capture, flattened: the launches before its steps (its first
    step's start cut, a warm-up, and those between steps), each step's, and after them."""

    head: int = 0
    steps: list[int] = field(default_factory=list)
    tail: int = 0
    cut: bool = False  # the capture started or ended inside a step here
    numbers: list[int] = field(default_factory=list)  # the steps' numbers


def split(units: dict[tuple, Any]) -> tuple[dict[tuple, list], dict[tuple, list]]:
    """(heads, tails) by (device, region): the launches of each unit outside the steps
    (key step None) before the first step and after the last, taken out of it (in place:
    the unit keeps those between steps, none when that is all). A unit whose launches are
    not all listed (block digests) is left whole."""
    heads: dict[tuple, list] = {}
    tails: dict[tuple, list] = {}
    for key in [k for k in units if k[2] is None]:
        unit = units[key]
        before, after = unit.before, unit.after
        if not (before or after) or unit.blocks or unit.launches != len(unit.kernels):
            continue
        kernels = unit.kernels
        end = len(kernels) - after
        heads[key[:2]], tails[key[:2]] = kernels[:before], kernels[end:]
        units[key] = replace(
            unit,
            launches=end - before,
            kernels=kernels[before:end],
            counts={},
            before=0,
            after=0,
            entry_ends=(before, after, unit.launches),  # where it was (fingerprint.places)
            first_offset=before,
        )
    return heads, tails


def trim(
    ua: dict[tuple, Any],
    ub: dict[tuple, Any],
    sides: tuple[tuple[dict, dict], tuple[dict, dict]],
    known: dict[int, list[list]],
) -> Ends:
    """When the two runs' steps agree: put each region's launches before and after the
    steps (``sides``: (heads, tails) of A, of B, :func:`split`) back into its unit outside
    the steps, less those one capture holds beyond the other at its start or end: the
    shorter run is the end (the start) of the longer one, and what the longer one holds
    beyond it is part of a step (``known``: the launch sequences of each device's step
    units; a suffix of one at the start, a prefix at the end) unless the shorter one holds
    some (the captures started inside one run of launches before the steps). Returns those
    launches; the rest is compared as it is."""
    (heads_a, tails_a), (heads_b, tails_b) = sides
    ends = Ends()
    for device, region in sorted({*heads_a, *heads_b, *tails_a, *tails_b}, key=repr):
        steps = known.get(device, [])
        ha, hb = heads_a.get((device, region), []), heads_b.get((device, region), [])
        ta, tb = tails_a.get((device, region), []), tails_b.get((device, region), [])
        head = _extra(ha, hb, steps, first=True)
        if head and len(ha) > len(hb):
            ha, ends.a_head = ha[head:], ends.a_head + head
        elif head:
            hb, ends.b_head = hb[head:], ends.b_head + head
        tail = _extra(ta, tb, steps, first=False)
        if tail and len(ta) > len(tb):
            ta, ends.a_tail = ta[: len(ta) - tail], ends.a_tail + tail
        elif tail:
            tb, ends.b_tail = tb[: len(tb) - tail], ends.b_tail + tail
        for units, lead, trail in ((ua, ha, ta), (ub, hb, tb)):
            _rejoin(units, (device, region, None), lead, trail)
    return ends


def _extra(a: list, b: list, steps: list[list], first: bool) -> int:
    """The launches the longer of ``a`` and ``b`` holds beyond the shorter at its start
    (``first``) or its end, when they are a capture difference (:func:`trim`), else 0."""
    if len(a) == len(b):
        return 0
    short, long = (a, b) if len(a) < len(b) else (b, a)
    more = len(long) - len(short)
    if (long[more:] if first else long[: len(short)]) != short:
        return 0
    if short:
        return more
    part = long[:more] if first else long[len(short) :]
    fits = (
        (lambda seq: len(seq) >= more and seq[len(seq) - more :] == part)
        if first
        else (lambda seq: len(seq) >= more and seq[:more] == part)
    )
    return more if any(fits(seq) for seq in steps) else 0


def _rejoin(units: dict[tuple, Any], key: tuple, lead: list, trail: list) -> None:
    """The unit ``key`` (:func:`split`) with ``lead`` before its launches and ``trail``
    after them; gone when it then has none."""
    unit = units.get(key)
    if unit is None:
        return
    kernels = [*lead, *unit.kernels, *trail]
    if kernels:
        first = unit.first_offset - len(lead)
        units[key] = replace(unit, launches=len(kernels), kernels=kernels, first_offset=first)
    else:
        del units[key]


def known_steps(*docs_units: dict[tuple, Any]) -> dict[int, list[list]]:
    """Each device's distinct step-unit launch sequences, over the documents' units."""
    out: dict[int, dict[int, list]] = {}
    for units in docs_units:
        for key, unit in units.items():
            if key[2] is not None and not unit.blocks:
                out.setdefault(key[0], {})[id(unit)] = unit.kernels
    return {device: list(seqs.values()) for device, seqs in out.items()}


def clamp(
    a: list, b: list, changes: list, ends: Ends, shapes: tuple[Shape, Shape]
) -> tuple[list, Ends]:
    """``changes`` and ``ends`` of two flattened regions (:func:`tracelens.fingerprint.
    capture.aligned_ends`), with each end left to one side no longer than whole steps of it
    plus its run before (after) the steps, less the other's: a capture cut at a step
    boundary of the other. What the alignment put past the other's end beyond that (the
    last kernel of a step both hold whole, removed) is compared again, a change."""
    kept = _whole_step_ends(ends, shapes)
    if kept == ends:
        return changes, ends
    wa = a[kept.a_head : len(a) - kept.a_tail]
    wb = b[kept.b_head : len(b) - kept.b_tail]
    again = [
        replace(c, position=c.position + (kept.a_head if c.kind == REMOVED else kept.b_head))
        for c in _sequence_changes(wa, wb)
    ]
    return again, kept


def _fit(extra: int, base: int, steps: list[int]) -> int:
    """The most of ``extra`` launches that is ``base`` plus the launches of whole steps
    (``steps``, from that end inward)."""
    best, total = 0, base
    for size in [0, *steps]:
        total += size
        if total > extra:
            break
        if total >= 0:
            best = total
    return best


def fits(ends: Ends, shapes: tuple[Shape, Shape]) -> bool:
    """Whether each end left to one side is whole steps of it plus its run before (after)
    the steps, less the other's (:func:`clamp` keeps nothing else)."""
    return ends == _whole_step_ends(ends, shapes)


def _whole_step_ends(ends: Ends, shapes: tuple[Shape, Shape]) -> Ends:
    """Each end of ``ends`` cut to the most of it that is whole steps of its side plus its
    run before (after) the steps, less the other side's (:func:`_fit`)."""
    sa, sb = shapes
    return Ends(
        _fit(ends.a_head, sa.head - sb.head, sa.steps),
        _fit(ends.a_tail, sa.tail - sb.tail, sa.steps[::-1]),
        _fit(ends.b_head, sb.head - sa.head, sb.steps),
        _fit(ends.b_tail, sb.tail - sa.tail, sb.steps[::-1]),
    )


def beyond(
    ua: dict[tuple, Any], ub: dict[tuple, Any], shapes: tuple[dict, dict], counts: tuple[int, int]
) -> tuple[set[tuple], Ends]:
    """When the two runs' steps differ: the regions (flattened units, keys of ``ua`` or
    ``ub``) only one capture holds, whose launches are all in its steps numbered past the
    other's last (``counts``: each capture's steps), in none outside them: steps the other
    capture ended before (an optimizer step every 4 steps, the capture cut after 3), with
    their launches, past its end. A capture without steps has no step to be past."""
    keys: set[tuple] = set()
    ends = Ends()
    for units, other, own, count, in_a in (
        (ua, ub, shapes[0], counts[1], True),
        (ub, ua, shapes[1], counts[0], False),
    ):
        if not count:
            continue  # no steps there: none to be past
        for key, unit in units.items():
            shape = own.get(key)
            if key in other or shape is None or shape.head or shape.tail or not shape.numbers:
                continue
            if min(shape.numbers) > count:
                keys.add(key)
                ends.add(Ends(a_tail=unit.launches) if in_a else Ends(b_tail=unit.launches))
    return keys, ends


def either_end(
    ra: dict[tuple, Any], rb: dict[tuple, Any], skip: set[tuple], wider: tuple[bool, bool]
) -> bool:
    """Whether the launches one capture holds beyond the other could as well be at its
    other end (:attr:`tracelens.fingerprint.ends.CaptureEnds.ambiguous`; ``ra``, ``rb``:
    the documents' units by (device, region, step); ``wider``: whether A, whether B holds
    launches beyond the other): every step of each capture that holds some holds the same
    launches, region by region (the steps of the units in ``skip`` aside: a first or last
    step one capture started or ended inside), so the other's steps fit at any of its
    steps; and no run outside the steps fixes an end: one both captures hold some of, alike,
    before their steps (after them) that is no end (no start) of a step, as a warm-up is
    (:func:`_fixes`)."""
    skipped = {key[2] for key in skip if key[2] is not None}
    step_kernels: dict[tuple, list] = {}
    for units, holds in zip((ra, rb), wider, strict=True):
        if holds and not _one_program(units, skipped, step_kernels):
            return False
    runs_a, runs_b = _outside_runs(ra), _outside_runs(rb)
    for key, (head, tail) in runs_a.items():
        other = runs_b.get(key)
        seq = step_kernels.get(key[:2], [])
        if other is not None and (
            _fixes(head, other[0], seq[::-1], start=True) or _fixes(tail, other[1], seq)
        ):
            return False
    return True


def _fixes(run: list, other: list, step: list, start: bool = False) -> bool:
    """Whether two captures' runs outside the steps at one end (``start``: before the
    steps, else after them) fix where their steps are: the shorter one ends the longer one
    (before the steps; begins it, after them) and is no end (start) of a step (``step``,
    its launches, reversed before the steps): a warm-up both hold some of."""
    short, long = (run, other) if len(run) <= len(other) else (other, run)
    if not short:
        return False
    if start:
        return long[len(long) - len(short) :] == short and short[::-1] != step[: len(short)]
    return long[: len(short)] == short and short != step[: len(short)]


def _one_program(units: dict[tuple, Any], skipped: set[int], kernels: dict[tuple, list]) -> bool:
    """Whether the steps of ``units`` (those ``skipped`` aside) all hold the same launches,
    region by region; puts each (device, region)'s step launches in ``kernels``. Compared
    as lists (a document's kernel variants are one object each: mostly identity checks)."""
    first: dict[tuple, Any] = {}
    regions: dict[int, set[tuple]] = {}
    for (device, region, step), unit in units.items():
        if step is None or step in skipped:
            continue
        seen = first.setdefault((device, region), unit)
        if seen is not unit and (seen.launches, seen.blocks, seen.kernels) != (
            unit.launches,
            unit.blocks,
            unit.kernels,
        ):
            return False
        regions.setdefault(step, set()).add((device, region))
        kernels[(device, region)] = unit.kernels
    return len({frozenset(held) for held in regions.values()}) == 1


def _outside_runs(units: dict[tuple, Any]) -> dict[tuple, tuple[list, list]]:
    """Per (device, region, None) unit outside the steps whose launches are all listed:
    its launches before the first step and after the last (``before``, ``after``)."""
    out = {}
    for key, unit in units.items():
        if key[2] is None and not unit.blocks and unit.launches == len(unit.kernels):
            kernels = unit.kernels
            out[key] = (kernels[: unit.before], kernels[len(kernels) - unit.after :])
    return out
