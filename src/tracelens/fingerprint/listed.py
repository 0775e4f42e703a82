"""The listed launches of a unit both sides hold, where a list ends before its unit does.

A unit of more than ``block_launches`` launches lists its first block one by one and keeps
the rest as counts per variant (:mod:`tracelens.fingerprint.counted`). A launch B inserts
early in the listed part pushes A's last listed launch past B's list: aligned to their ends,
the two lists read as that launch removed at the end of the list, and the counts past the
lists as one launch of it added (an overcount of one each; a launch B lacks there, the
other way round). So the lists are aligned up to the last launch they share by name
(:func:`tracelens.fingerprint.edits.open_end`) and what lies past it is matched against
the counts first: a launch of A's there that B's counts past its list hold more of than
A's do is taken past B's list (it is no change), and the same for B's; the launches left
there are aligned by family as a replaced stretch is, at their own positions. A unit whose
lists hold every launch of both sides is aligned to its ends as before.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from .edits import _align, _by_family, _sequence_changes, open_end
from .model import REMOVED, Kernel, KernelChange


def changes(a: Any, b: Any) -> tuple[list[KernelChange], Counter, Counter]:
    """(the changes of the listed launches of ``a`` and ``b``, ``compare._Unit`` of both
    sides; the launches per variant of A and of B to compare by counts: their tails, with
    the launches at the end of one list the other side holds past its own)."""
    if not (a.tail or b.tail):
        return _sequence_changes(a.kernels, b.kernels), a.tail, b.tail
    out, i, j = open_end(a.kernels, b.kernels)
    if i == len(a.kernels) and j == len(b.kernels):
        return out, a.tail, b.tail
    kept_a, past_a = _past(a.kernels, i, b.tail - a.tail)
    kept_b, past_b = _past(b.kernels, j, a.tail - b.tail)
    out += _rest(a.kernels, b.kernels, kept_a, kept_b)
    return out, a.tail + past_a, b.tail + past_b


def _past(kernels: list[Kernel], start: int, more: Counter) -> tuple[list[int], Counter]:
    """(the positions from ``start`` whose launches stay listed, the launches per variant
    taken past the list): from the end of the list back, a launch of a variant the other
    side's tail holds ``more`` of (as many as it holds more)."""
    left, past, kept = Counter(more), Counter(), []
    for x in range(len(kernels) - 1, start - 1, -1):
        k = kernels[x]
        if left[k] > 0:
            left[k] -= 1
            past[k] += 1
        else:
            kept.append(x)
    return kept[::-1], past


def _rest(a: list[Kernel], b: list[Kernel], kept_a: list[int], kept_b: list[int]):
    """The changes of the launches left past the last shared one: aligned by family (they
    share no name), at their positions in the lists."""
    if not kept_a and not kept_b:
        return []
    found = _align([a[x] for x in kept_a], [b[y] for y in kept_b], 0, 0, _by_family)
    return [
        replace(c, position=(kept_a if c.kind == REMOVED else kept_b)[c.position - 1] + 1)
        for c in found
    ]
