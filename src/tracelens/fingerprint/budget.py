"""The alignment work one comparison of two fingerprints may do in all
(``fingerprint.toml``, ``limits.alignment_steps``).

An edit script gives up past ``edits._EDITS_MAX`` edits after about 1 CPU s, and difflib
then aligns the unit for about as long again (two orders of the same 4,096 launches): a
pair of runs whose regions all hold the same kernels in another order took that per region.
:func:`tracelens.fingerprint.compare.compare` runs under one :class:`Budget`; the edit
script spends a step per slot of each diagonal it extends and difflib one per
``DIFFLIB_PAIRS`` launch pairs it may compare. A region whose alignment would overspend it is
compared by its variant counts instead (:func:`by_counts`), and the board says so: it claims
no alignment it did not do. Outside ``compare`` (the sequences aligned alone) nothing is
counted.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

_LIMITS = Path(__file__).with_name("fingerprint.toml")
# Launch pairs difflib may compare per step of the budget: its match of two orders of the
# same 4,096 launches (16.8M pairs) took about as long as the edit script's 500k steps
# before giving up on them (~1 CPU s each).
DIFFLIB_PAIRS = 32


class OverBudget(Exception):
    """The comparison's alignment budget would be overspent."""


@dataclass
class Budget:
    """What is left of a comparison's alignment steps, and how many regions were compared
    by their counts because it ran out."""

    left: int
    counted: int = 0

    def spend(self, steps: int) -> None:
        if steps > self.left:
            self.left = 0
            raise OverBudget
        self.left -= steps


_CURRENT: ContextVar[Budget | None] = ContextVar("fingerprint_alignment_budget", default=None)


@functools.cache
def alignment_steps() -> int:
    """fingerprint.toml's limits.alignment_steps."""
    limits = tomllib.loads(_LIMITS.read_text(encoding="utf-8"))["limits"]
    return int(limits["alignment_steps"])


@contextmanager
def budgeted(steps: int | None = None) -> Iterator[Budget]:
    """One comparison's budget (``steps``; None: fingerprint.toml's), spent by the
    alignments made inside the block."""
    budget = Budget(alignment_steps() if steps is None else steps)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def spend(steps: int) -> None:
    """Spend ``steps`` of the current comparison's budget (none outside one); OverBudget
    when they are not left."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.spend(steps)


def by_counts(a, b) -> str:
    """What a region compared by its variant counts (two ``compare._Unit``) says: the
    launches, and how many variants run more or less often (or none: another order)."""
    from .counted import every

    ca, cb = every(a), every(b)
    more = [cb.get(k, 0) - ca.get(k, 0) for k in {*ca, *cb}]
    grew, shrank = sum(1 for n in more if n > 0), sum(1 for n in more if n < 0)
    counts = (
        f"{grew} variants run more often, {shrank} less often"
        if grew or shrank
        else "the same variants as often, in another order"
    )
    return (
        f"{a.launches:,} → {b.launches:,} launches, not aligned launch by launch (the "
        f"comparison's alignment budget ran out); {counts}"
    )


def note(counted: int) -> str:
    """The board's sentence on the regions the budget left to their counts."""
    regions = f"{counted:,} region{'' if counted == 1 else 's'}"
    return (
        f"the alignment budget (fingerprint.toml limits.alignment_steps) ran out: {regions} "
        "compared by variant counts only, not launch by launch"
    )
