"""The launches a comparison does not align one by one, compared by their variant counts.

A unit of more than ``block_launches`` launches (fingerprint.toml; a capture with neither
NVTX ranges nor steps is one unit per device: 1.25M launches on the 5M-kernel bench trace)
lists its first block one by one and keeps, for the rest, a digest per block and the
launches of each variant (the entry's ``counts``). The listed launches are aligned
(:mod:`tracelens.fingerprint.edits`, up to the last launch the two lists share:
:mod:`tracelens.fingerprint.listed`); those past them (the unit's *tail*: its counts less
its listed launches) are compared here, by variant: a variant B's tail runs more often than
A's and one it runs less often of the same name are a launch-configuration change, of the
same family a variant change (as the alignment pairs a replaced launch: by name, then by
family), and what is left was added or removed. So a whole device added counts all its
launches as added (the board said "4,096 launches added", the listed ones, for 1.25M), and a
region whose tails differ counts their launches in ``launches_added``, ``launches_removed``,
``variant_changed`` and ``config_changed`` (:class:`tracelens.fingerprint.model.
CountedChange`). Tails of the same variants as often whose digests differ are one launch
order change. A count is a lower bound of what differs there: changes that cancel out in
the counts (two launches that traded places) are only that one order change."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .edits import risky_rules
from .model import ADDED, CONFIG, ORDER, REMOVED, VARIANT, CountedChange, Kernel


@dataclass(frozen=True)
class Unlisted:
    """What differs past a compared unit's listed launches: a sentence (the launches, where
    the first block that differs starts; None: nothing to say) and the changes counted
    there."""

    text: str | None
    counted: tuple[CountedChange, ...] = ()


def one_side(a: Any, b: Any) -> Unlisted | None:
    """The launches past the listed ones of a unit only B (``a`` None) or only A holds:
    all added (removed), by variant; None when every launch is listed."""
    unit, kind = (b, ADDED) if a is None else (a, REMOVED)
    if not unit.tail:
        return None
    text = f"{unit.launches:,} launches {kind}, the first {len(unit.kernels):,} listed"
    return Unlisted(text, one_sided(unit, kind))


def both_sides(
    a: Any, b: Any, text: str | None, listed: list, tails: tuple[Counter, Counter] | None = None
) -> Unlisted | None:
    """The launches past the listed ones of a unit both sides hold (``text``: what
    compare._unlisted says of their digests, None when they agree or are left out as a
    capture difference; ``listed``: the listed launches' changes; ``tails``: A's and B's
    launches per variant to compare, when not their tails: :func:`.listed.changes`)."""
    if text is None:
        return None
    ta, tb = (a.tail, b.tail) if tails is None else tails
    return Unlisted(text, beyond(ta, tb, digests_differ=not listed))


def by_counts(a: Any, b: Any, text: str) -> Unlisted:
    """A unit not aligned (the comparison's budget ran out): every launch, by variant."""
    return Unlisted(text, beyond(every(a), every(b), digests_differ=True))


def tail(counts: dict[Kernel, int], listed: list[Kernel]) -> Counter:
    """The launches per variant past the listed ones (``counts``: every launch of the unit
    by variant, empty when all are listed)."""
    if not counts:
        return Counter()
    return Counter(counts) - Counter(listed)


def every(unit: Any) -> Counter:
    """Every launch of ``unit`` (a ``compare._Unit``) by variant: its listed ones and its
    tail."""
    return Counter(unit.kernels) + unit.tail


def beyond(a: Counter, b: Counter, *, digests_differ: bool) -> tuple[CountedChange, ...]:
    """The changes from A's launches ``a`` to B's ``b`` (per variant, the ones not aligned),
    paired by name, then family, the rest added or removed; one launch-order change when
    they are the same variants as often and ``digests_differ`` (their order is not)."""
    gained, lost = b - a, a - b
    if not gained and not lost:
        return (CountedChange(ORDER, 1, None, None),) if digests_differ else ()
    out = _paired(gained, lost, CONFIG, lambda k: k.name)
    out += _paired(gained, lost, VARIANT, lambda k: k.family)
    out += [_counted(ADDED, n, None, k) for k, n in sorted(gained.items(), key=_by_kernel) if n]
    out += [_counted(REMOVED, n, k, None) for k, n in sorted(lost.items(), key=_by_kernel) if n]
    return tuple(out)


def one_sided(unit: Any, kind: str) -> tuple[CountedChange, ...]:
    """The tail of a unit only one side holds: every launch of it ``kind`` (added or
    removed)."""
    rows = sorted(unit.tail.items(), key=_by_kernel)
    if kind == ADDED:
        return tuple(_counted(ADDED, n, None, k) for k, n in rows)
    return tuple(_counted(REMOVED, n, k, None) for k, n in rows)


def _paired(
    gained: Counter, lost: Counter, kind: str, key: Callable[[Kernel], str]
) -> list[CountedChange]:
    """Launches B runs more of paired with those it runs less of that share ``key``, in
    kernel order, taken out of ``gained`` and ``lost``."""
    losing: dict[str, list[Kernel]] = {}
    for k in sorted(lost, key=_kernel_key):
        losing.setdefault(key(k), []).append(k)
    out = []
    for k in sorted(gained, key=_kernel_key):
        for old in losing.get(key(k), ()):
            n = min(gained[k], lost[old])
            if n:
                out.append(_counted(kind, n, old, k))
                gained[k] -= n
                lost[old] -= n
    return out


def _counted(kind: str, n: int, a: Kernel | None, b: Kernel | None) -> CountedChange:
    """As :func:`tracelens.fingerprint.edits._change`: the danger rules of B's kernel (A's
    when removed), the risky ones as brought by a variant change or an addition."""
    new = b if b is not None else a
    brought = risky_rules(new.danger) if kind in (VARIANT, ADDED) else ()
    return CountedChange(kind, n, a, b, new.danger, brought)


def _kernel_key(k: Kernel) -> tuple:
    none = -1  # a dimension the export left unknown
    dims = tuple(none if d is None else d for d in (*k.grid, *k.block))
    return (k.name, dims, k.family, k.fields, k.danger)


def _by_kernel(item: tuple[Kernel, int]) -> tuple:
    return _kernel_key(item[0])
