"""Capture differences: two runs of one program captured over different spans (one cut
short, or started later). When the two documents' steps differ, each region is compared
over all its steps at once (:func:`tracelens.fingerprint.compare.steps_note`); launches
that only one capture holds *at its start or end* are then a fact about the captures,
stated once, not a change of the path (issue 11: "a fact to state, not a path change").
Launches missing or added inside the span both captures hold are still changes.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .compare import ADDED, REMOVED

# Distinct kernels a sequence can be coded with, one character each (str.find finds a
# slice in C): Unicode's code points.
_CODES = 0x110000
_LIMITS = Path(__file__).with_name("fingerprint.toml")


@dataclass
class Ends:
    """Launches only one capture holds at its ends, summed over the compared units."""

    a_head: int = 0
    a_tail: int = 0
    b_head: int = 0
    b_tail: int = 0

    def add(self, other: Ends) -> None:
        self.a_head += other.a_head
        self.a_tail += other.a_tail
        self.b_head += other.b_head
        self.b_tail += other.b_tail

    def __bool__(self) -> bool:
        return bool(self.a_head or self.a_tail or self.b_head or self.b_tail)


def slice_ends(a: list, b: list, shapes: tuple | None = None) -> Ends | None:
    """The ends one side holds beyond the other when the shorter of ``a`` and ``b`` is a
    contiguous slice of the longer (its first occurrence: a prefix when it is one; with
    ``shapes``, the first whose ends are whole steps, :func:`tracelens.fingerprint.outside.
    fits`), or None. Kernels are compared whole (name, grid, block, fields)."""
    from .outside import fits

    if len(a) == len(b):
        return Ends() if a == b else None
    short, long = (b, a) if len(b) < len(a) else (a, b)
    codes: dict[Any, str] = {}
    for kernel in {id(k): k for k in (*short, *long)}.values():
        if kernel not in codes:
            if len(codes) >= _CODES:
                return None
            codes[kernel] = chr(len(codes))
    by_object = {id(k): codes[k] for k in (*short, *long)}
    text = "".join(by_object[id(k)] for k in long)
    part = "".join(by_object[id(k)] for k in short)
    at, first = text.find(part), None
    while at >= 0:
        head, tail = at, len(long) - len(short) - at
        ends = Ends(a_head=head, a_tail=tail) if long is a else Ends(b_head=head, b_tail=tail)
        if shapes is None or fits(ends, shapes):
            return ends
        first = first or ends
        at = text.find(part, at + 1)
    return first


def trim_ends(changes: list, n: int, m: int, shapes: tuple | None = None) -> tuple[list, Ends]:
    """``changes`` (of an alignment of n launches of A with m of B) without the launches
    only one side holds at the start or the end of the sequences: a leading run of A's
    (or B's) first launches removed (added) while the other side's first launch is paired,
    and the same at the end. Only when the changes left are few (at most
    :func:`same_program_changes` per launch of the span both hold, or, with ``shapes``,
    when those launches are whole steps and the runs outside them,
    :func:`tracelens.fingerprint.outside.fits`: a capture cut at a step's end or inside
    its run outside the steps): two unrelated programs also have launches one side alone
    holds at its ends."""
    from .outside import fits

    ends = Ends()
    removed_first = any(c.kind == REMOVED and c.position == 1 for c in changes)
    added_first = any(c.kind == ADDED and c.position == 1 for c in changes)
    start = _run_from(changes, REMOVED, 1, 1) if not added_first else 0
    if start:
        ends.a_head = start
    elif not removed_first:
        start = ends.b_head = _run_from(changes, ADDED, 1, 1)
    rest = changes[start:]
    removed_last = any(c.kind == REMOVED and c.position == n for c in rest)
    added_last = any(c.kind == ADDED and c.position == m for c in rest)
    back = rest[::-1]
    end = _run_from(back, REMOVED, n, -1) if not added_last else 0
    if end:
        ends.a_tail = end
    elif not removed_last:
        end = ends.b_tail = _run_from(back, ADDED, m, -1)
    rest = rest[: len(rest) - end]
    both = min(n - ends.a_head - ends.a_tail, m - ends.b_head - ends.b_tail)
    if len(rest) > same_program_changes() * both and not (shapes and ends and fits(ends, shapes)):
        return changes, Ends()  # not one program: its ends are changes like the rest
    return rest, ends


def aligned_ends(a: list, b: list, shapes: tuple | None = None) -> tuple[list, Ends]:
    """The changes between launch sequences a and b (:func:`trim_ends`): of the whole
    sequences aligned, or of the shorter one against the longer one's first or last launches
    as many, whichever leaves the fewest changes (the whole first on a tie). Past
    edits._EDITS_MAX launches one side lacks (a capture cut short at scale) the whole
    alignment is by windows, which need not put them at an end; the two windows of the
    longer side are each aligned by an edit script only (skipped past its bound).
    ``shapes``: as :func:`trim_ends` takes them, for the whole alignment."""
    from .edits import _block_changes, _by_name, _matching_blocks, _sequence_changes

    n, m = len(a), len(b)
    whole = _sequence_changes(a, b)
    best = trim_ends(whole, n, m, shapes)
    for lo in dict.fromkeys((0, abs(n - m))) if n != m else ():
        wa, wb = (a[lo : lo + m], b) if n > m else (a, b[lo : lo + n])
        blocks = _matching_blocks([k.name for k in wa], [k.name for k in wb])
        if blocks is None:
            continue
        part = _block_changes(wa, wb, 0, 0, _by_name, blocks)
        rest, ends = trim_ends(part, len(wa), len(wb))
        if (rest is part and part) or len(rest) >= len(best[0]):
            continue  # refused (not one program), or no better
        shift_a, shift_b = (lo, 0) if n > m else (0, lo)
        rest = [
            replace(c, position=c.position + (shift_a if c.kind == REMOVED else shift_b))
            for c in rest
        ]
        ends.add(Ends(shift_a, n - len(wa) - shift_a, shift_b, m - len(wb) - shift_b))
        best = rest, ends
    return best


@functools.cache
def same_program_changes() -> float:
    """The most changes, per launch of the span both captures hold, of two captures of one
    program (fingerprint.toml, limits.capture_changes)."""
    return float(tomllib.loads(_LIMITS.read_text(encoding="utf-8"))["limits"]["capture_changes"])


def _run_from(changes: list, kind: str, position: int, step: int) -> int:
    """How many changes from the first are ``kind`` at position, position + step, ..."""
    count = 0
    for c in changes:
        if c.kind != kind or c.position != position + count * step:
            break
        count += 1
    return count


def cut_steps(ua: dict[tuple, Any], ub: dict[tuple, Any]) -> tuple[set[tuple], Ends]:
    """When the two runs' steps agree: the units (device, region, step) of a first or last
    step that one capture started or ended inside, with the launches the other holds
    beyond it. A step is cut when, on one device, one side's launches in it are fewer and
    each of its regions there is the other side's, or a suffix (the first step) or prefix
    (the last step) of it, or absent, and those that differ are whole in that side's next
    (previous) step; units with unlisted launches (block digests) are not judged."""
    steps = sorted({key[2] for key in (*ua, *ub) if key[2] is not None})
    cut: set[tuple] = set()
    ends = Ends()
    for step, last in dict.fromkeys([(steps[-1], True), (steps[0], False)] if steps else []):
        if last is False and step == steps[-1]:
            continue  # one step: judged as the last
        for device in sorted({key[0] for key in (*ua, *ub) if key[2] == step}):
            keys = {key for key in (*ua, *ub) if key[:1] == (device,) and key[2] == step}
            found = _cut_step(keys, ua, ub, last)
            if found is not None:
                cut |= keys
                ends.add(found)
    return cut, ends


def _cut_step(keys: set[tuple], ua: dict, ub: dict, last: bool) -> Ends | None:
    keys_in_order = sorted(keys)
    units_a, units_b = [ua.get(k) for k in keys_in_order], [ub.get(k) for k in keys_in_order]
    total_a = sum(u.launches for u in units_a if u is not None)
    total_b = sum(u.launches for u in units_b if u is not None)
    if total_a == total_b or any(u.blocks for u in (*units_a, *units_b) if u is not None):
        return None
    shorter_side = ub if total_b < total_a else ua
    short, long = (units_b, units_a) if total_b < total_a else (units_a, units_b)
    for key, s, longer in zip(keys_in_order, short, long, strict=True):
        if s is not None and longer is None:
            return None
        if s is not None and s.kernels == longer.kernels:
            continue
        # The shorter side's own neighbouring step holds this region, whole: the step was
        # cut, rather than every step of that run being so (a kernel added in each).
        device, region, step = key
        whole = shorter_side.get((device, region, step - 1 if last else step + 1))
        if whole is None or (s is not None and whole.kernels == s.kernels):
            return None
        if s is None:
            continue
        part = longer.kernels[: len(s.kernels)] if last else longer.kernels[-len(s.kernels) :]
        if len(s.kernels) > len(longer.kernels) or (s.kernels and part != s.kernels):
            return None
    extra = abs(total_a - total_b)
    if last:
        return Ends(a_tail=extra) if short is units_b else Ends(b_tail=extra)
    return Ends(a_head=extra) if short is units_b else Ends(b_head=extra)


def _step_start(kernels: list, step: list) -> int:
    """The length of the longest run of last ``kernels`` that the launches ``step`` begin
    with (0: none)."""
    if not step:
        return 0
    first = max(0, len(kernels) - len(step))  # a longer run cannot begin the step
    for i in range(first, len(kernels)):
        size = len(kernels) - i
        if kernels[i] == step[0] and kernels[i:] == step[:size]:
            return size
    return 0


def blocks_slice(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether the shorter list of block digests is a contiguous slice of the longer one
    (the unlisted launches of a long region, one capture shorter)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if not short:
        return not long
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def lone_ends(
    ua: dict[tuple, Any], ub: dict[tuple, Any], steps_a: dict[tuple, Any], steps_b: dict[tuple, Any]
) -> tuple[set[tuple], Ends]:
    """The units of step None (keys of ``ua``, ``ub``) of a region only one capture holds
    and holds in no step (``steps_a``, ``steps_b``: the documents' units by step), whose
    launches are a first or last step that capture started or ended inside, in no NVTX range
    of it (a range pushed before the capture started has no row; one left open at its end
    lasts only to the last NVTX event), with the launches they are: they split into a head
    that ends as a unit of the other capture's steps on that device ends, then a tail that
    begins as one begins. Others are compared as they are (kernels added or removed)."""
    lone: set[tuple] = set()
    ends = Ends()
    for units, other, own_steps, other_steps, in_a in (
        (ua, ub, steps_a, steps_b, True),
        (ub, ua, steps_b, steps_a, False),
    ):
        for key, unit in units.items():
            device, region, step = key
            if step is not None or key in other or unit.blocks:
                continue
            if unit.launches != len(unit.kernels) or any(
                k[:2] == (device, region) and k[2] is not None for k in own_steps
            ):
                continue
            # each distinct unit once: a unit is shared by every step with its sequence
            known = list(
                {
                    id(u): u.kernels
                    for k, u in other_steps.items()
                    if k[0] == device and k[2] is not None
                }.values()
            )
            head, tail = _head_and_tail(unit.kernels, known)
            if head is None:
                continue
            lone.add(key)
            ends.add(Ends(head, tail, 0, 0) if in_a else Ends(0, 0, head, tail))
    return lone, ends


def _head_and_tail(kernels: list, known: list[list]) -> tuple[int | None, int]:
    """(head, tail) launch counts of ``kernels`` split into a run that ends as one of the
    ``known`` sequences ends and a run that begins as one begins (the longest such tail),
    or (None, 0) when they do not split so."""
    tail = max((_step_start(kernels, seq) for seq in known), default=0)
    head = len(kernels) - tail
    lead = kernels[:head]
    if head and not any(len(seq) >= head and seq[-head:] == lead for seq in known):
        return None, 0
    return head, tail
