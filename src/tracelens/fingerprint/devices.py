"""Launches that changed device, not math: the comparison's units grouped by (region, step)
over every device.

*Placement*: in a region and step, A's launches over all its devices and B's over all its
devices are the same kernels as often, each with the same launch configuration, but some
device runs other kernels than it did in A (pipeline stages on two GPUs against the whole
step on one, or stages swapped between GPUs). Aligned device by device, that read as
launches added on one device and removed from another. It is no change of the numerical
path: every kernel does the same math, with the same grid and block, on another GPU; so
those units are set apart (``PathDiff.moved``), ``path_changed`` does not count them, and
the board and the ``launches_moved`` figure say how many launches run on another device (a
CI job that must also hold the placement gates on ``launches_moved``).

*Matching region* of a unit only B holds (a device A launched nothing on in that region
and step: a data-parallel replica on a second GPU): the same region and step on A's other
devices. An added launch there brings a danger rule only when A runs no launch of that
kernel in its matching region: B then runs math A did not. Matched by name, as a variant
change counts (a split-K GEMM that replaced another split-K GEMM brings its rule, one with
another grid brings none).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from .brought import unmatched
from .model import KernelChange


def _launches(unit: Any) -> Counter:
    """Every launch of ``unit`` by variant (its listed ones and, when only its first
    launches are listed one by one, its tail: fingerprint.counted)."""
    from .counted import every

    return every(unit)


def _groups(units: dict[tuple, Any], keys: set, wanted: set) -> dict[tuple, dict[int, Any]]:
    out: dict[tuple, dict[int, Any]] = {}
    for key in keys:
        device, region, step = key
        if (region, step) in wanted and key in units:
            out.setdefault((region, step), {})[device] = units[key]
    return out


def moved(ua: dict[tuple, Any], ub: dict[tuple, Any], keys: set, changed: set) -> dict[tuple, int]:
    """The (region, step) groups of the ``changed`` unit keys (of ``keys``, those compared)
    whose launches only changed device, each with how many of B's launches (per step) run
    on another device than in A: the launches a device runs more of in B, summed over
    devices. Only groups with a changed unit are counted (a unit shared by many steps is
    counted once)."""
    wanted = {key[1:] for key in changed}
    ga, gb = _groups(ua, keys, wanted), _groups(ub, keys, wanted)
    counted: dict[int, Counter] = {}

    def launches(unit: Any) -> Counter:
        if id(unit) not in counted:
            counted[id(unit)] = _launches(unit)
        return counted[id(unit)]

    out: dict[tuple, int] = {}
    for group in ga.keys() & gb.keys():
        a = {d: launches(u) for d, u in ga[group].items()}
        b = {d: launches(u) for d, u in gb[group].items()}
        if sum(a.values(), Counter()) != sum(b.values(), Counter()):
            continue  # other kernels, or as many on other grids: a change of the path
        more = sum(sum((n - a.get(d, Counter())).values()) for d, n in b.items())
        if more:  # else each device runs what it ran: another order is a path change
            out[group] = more
    return out


class OneSided:
    """The units of one side in the region and step of a unit only the other side holds:
    indexed once per comparison, so that each such unit (a replica holds one per step and
    region) looks up its own group only."""

    def __init__(self, ua: dict[tuple, Any], ub: dict[tuple, Any], keys: set) -> None:
        wanted = {key[1:] for key in keys}
        self._sides = {
            side: _groups(units, set(units), wanted) for side, units in (("a", ua), ("b", ub))
        }
        self._names: dict[tuple, set[str]] = {}
        self._pairs: dict[tuple[int, int], bool] = {}

    def matched_danger(self, key: tuple, changes: list[KernelChange]) -> list[KernelChange]:
        """``changes`` of the unit ``key`` (device, region, step) that only B holds, their
        ``danger_new`` left out on an added launch whose kernel A runs in the same region
        and step on another device (the unit's matching region)."""
        group = key[1:]
        if group not in self._names:
            units = self._sides["a"].get(group, {}).values()
            self._names[group] = {k.name for u in units for k in (*u.kernels, *u.counts)}
        return unmatched(changes, self._names[group])

    def matched_unlisted(self, key: tuple, unlisted: Any) -> Any:
        """``unlisted`` (:class:`.counted.Unlisted` of the unit ``key`` only B holds, or
        None) with the danger of its counted additions matched as :meth:`matched_danger`."""
        if unlisted is None or not unlisted.counted:
            return unlisted
        kept = self.matched_danger(key, list(unlisted.counted))
        return replace(unlisted, counted=tuple(kept))

    def replica_of(self, key: tuple, unit: Any, other: str) -> int | None:
        """The device whose unit on the ``other`` side ("a" or "b"), in the same region and
        step as the unit ``key`` only one side holds, runs ``unit``'s launches launch for
        launch (a data-parallel replica: that side runs the other's work again on another
        device); the lowest such, or None."""
        units = self._sides[other].get(key[1:], {})
        return min((d for d, u in units.items() if self._same(unit, u)), default=None)

    def _same(self, unit: Any, other: Any) -> bool:
        """Whether two units run the same launches (once per pair: a unit shared by many
        steps is one object)."""
        pair = (id(unit), id(other))
        if pair not in self._pairs:
            same = (unit.launches, unit.kernels, unit.counts)
            self._pairs[pair] = same == (other.launches, other.kernels, other.counts)
        return self._pairs[pair]


def devices_text(ua: dict[tuple, Any], ub: dict[tuple, Any]) -> str:
    """``A launches on devices 0 and 1, B on device 0`` (the devices of each side's units)."""

    def of(units: dict[tuple, Any]) -> str:
        devices = sorted({d for d, _r, _s in units})
        if len(devices) == 1:
            return f"device {devices[0]}"
        return f"devices {', '.join(map(str, devices[:-1]))} and {devices[-1]}"

    return f"A launches on {of(ua)}, B on {of(ub)}"
