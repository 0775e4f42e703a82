"""Which added launches bring a determinism risk A does not run there (``danger_added``).

An added launch of a kernel a risky danger rule fires on (:func:`.edits.risky_rules`)
brings that risk only when A runs no launch of that kernel in the same place: the unit
both sides hold (its region and step; every launch of A's, listed or counted), or, for a
unit only B holds (a device A launched nothing on there), that region and step on A's
other devices (:class:`.devices.OneSided`). More launches of a kernel A already runs
there (a longer capture, one more attention call) run no math A did not: a gate on
``danger_added`` would fail on every longer capture of the same program. Matched by
name, as a variant change counts: a split-K GEMM A runs nowhere in the unit still brings
its rule. A variant change is not matched: B runs another kernel where A ran one, so that
slot sums in another order than A's did, whatever A runs elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .model import ADDED


def unmatched(changes: Sequence[Any], names: set[str]) -> list[Any]:
    """``changes`` (:class:`.model.KernelChange` or :class:`.model.CountedChange`), the
    ``danger_new`` of an added launch whose kernel's name is in ``names`` (those A runs
    there) left out."""
    return [
        replace(c, danger_new=())
        if c.kind == ADDED and c.danger_new and c.b is not None and c.b.name in names
        else c
        for c in changes
    ]


def in_unit(unit: Any, changes: list[Any], unlisted: Any) -> tuple[list[Any], Any]:
    """(``changes``, ``unlisted``: :class:`.counted.Unlisted` or None) of a unit both sides
    hold, A's being ``unit`` (a ``compare._Unit``), with :func:`unmatched` on the names of
    every launch of A's unit."""
    counted = () if unlisted is None else unlisted.counted
    if not any(c.kind == ADDED and c.danger_new for c in (*changes, *counted)):
        return changes, unlisted
    names = {k.name for k in (*unit.kernels, *unit.tail)}
    if counted:
        unlisted = replace(unlisted, counted=tuple(unmatched(counted, names)))
    return unmatched(changes, names), unlisted
