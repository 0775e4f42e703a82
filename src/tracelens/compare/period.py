"""The repeating step of a launch sequence: a motif of launches that a run repeats once per
step (a training or decode loop), found from a token both runs launch once per step (the
anchor). The alignment (``align.py``) compares periodic runs step by step, and the clues
give their impacts per step of it.

Bound: linear in the launches (vectorized, polars): one pass per candidate anchor token
(at most 16) and one comparison of each whole step with the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# A sequence is periodic when at least this many steps repeat one motif...
MIN_STEPS = 3
# ...and those steps cover at least this share of its launches.
MIN_COVERAGE = 0.6
# A step is at least this many launches (one kernel repeated is not a step).
MIN_STEP_LAUNCHES = 2


@dataclass(frozen=True)
class Period:
    """A repeating step of one sequence: ``start`` of the first step (at the anchor
    token), the step ``length`` in launches, the ``motif`` (one step's tokens), how many
    ``steps`` start (anchor launches) and how many whole steps repeat the motif exactly
    (``steady``)."""

    start: int
    length: int
    motif: list[int]
    steps: int
    steady: int


def _once_per_step(seq: pl.Series, token: int) -> int | None:
    """The step length if ``token`` recurs at one fixed distance (most of the time)."""
    where = (seq == token).arg_true()
    if len(where) < MIN_STEPS:
        return None
    gaps = where.diff().drop_nulls()
    counts = gaps.value_counts(sort=True)
    gap, n = counts.row(0)
    if n < 0.8 * len(gaps) or gap < MIN_STEP_LAUNCHES:
        return None
    return int(gap)


def find_period(seq: pl.Series, token: int) -> Period | None:
    """The repeating step of ``seq`` that starts at ``token``, if it is periodic. Each
    whole step is compared with the next one in one vectorized pass; the motif is the
    first step that equals its successor."""
    length = _once_per_step(seq, token)
    if length is None:
        return None
    where = (seq == token).arg_true()
    start = int(where[0])
    whole = (len(seq) - start) // length
    if whole < MIN_STEPS:
        return None
    body = seq.slice(start, whole * length)
    differs = body.head(len(body) - length) != body.slice(length)
    unlike_next = set((differs.arg_true() // length).unique().to_list())
    like_next = [k for k in range(whole - 1) if k not in unlike_next]
    # A run of n equal steps has n - 1 steps equal to their successor.
    steady = len(like_next) + 1 if like_next else 0
    if steady < MIN_STEPS or steady * length < MIN_COVERAGE * len(seq):
        return None
    k = like_next[0]
    motif = body.slice(k * length, length).to_list()
    # Steps counted by their anchor launches: a last step cut short by the end of the
    # capture still counts.
    return Period(start, length, motif, len(where), steady)


def token_counts(seq: pl.Series) -> dict[int, int]:
    """How often each token occurs in ``seq``."""
    return dict(seq.value_counts().iter_rows())


def anchor_token(a: pl.Series, b: pl.Series) -> int | None:
    """A token both sequences launch once per step (the rarest such), to phase their steps
    alike; None when there is none. One whose steps span most of both sequences
    (``MIN_COVERAGE``) comes first: a kernel that a run stops launching partway (its path
    changed) is once per step in only some of its steps, and counted them as its steps."""
    same = a is b  # a sequence with itself: counted and checked once
    ca = token_counts(a)
    cb = ca if same else token_counts(b)
    both = [t for t in ca if ca[t] >= MIN_STEPS and cb.get(t, 0) >= MIN_STEPS]
    partial = None  # the rarest token once per step over part of a sequence only
    for token in sorted(both, key=lambda t: (ca[t] + cb[t], t))[:16]:
        step_a = _once_per_step(a, token)
        step_b = step_a if same else _once_per_step(b, token)
        if not (step_a and step_b):
            continue
        if _spans(a, ca[token], step_a) and _spans(b, cb[token], step_b):
            return int(token)
        partial = int(token) if partial is None else partial
    return partial


def _spans(seq: pl.Series, count: int, length: int) -> bool:
    """Whether ``count`` steps of ``length`` launches span most of ``seq``."""
    return count * length >= MIN_COVERAGE * len(seq)
