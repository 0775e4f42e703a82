"""Whether two launch sequences (token series of one device, as :mod:`.align` aligns them)
are captures of one launch stream: the same work, one capture holding less of it or
another stretch of it, which is no change of the path. Either one holds a contiguous part
of the other's launches (:func:`part_of`: a prefix, a suffix or a slice), or both repeat
the same step (:func:`rotation`) and are two overlapping windows of the stream
(:func:`overlap`). A run whose path changes partway repeats A's step until then, so the
same step alone is not enough.

Bound: vectorized (polars), a few passes over the sequences per candidate position, at
most ``checks`` candidates compared in full.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .period import MIN_STEPS

if TYPE_CHECKING:
    import polars as pl


def _same(a: pl.Series, b: pl.Series) -> bool:
    return len(a) == len(b) and bool((a == b).all())


def _find_slice(short: pl.Series, long: pl.Series, checks: int = 8) -> int | None:
    """Where ``short`` sits inside ``long`` as one contiguous run (None: it does not). Its
    first tokens pick candidate offsets (one vectorized pass per token); at most ``checks``
    candidates are compared in full."""
    import polars as pl

    if len(short) == 0 or len(short) > len(long):
        return None
    span = len(long) - len(short) + 1
    window = long.head(span + 16)
    mask = pl.Series([True] * span)
    for h in range(min(8, len(short))):
        mask &= window.slice(h, span) == short[h]
    for offset in mask.arg_true().head(checks):
        if _same(long.slice(offset, len(short)), short):
            return int(offset)
    return None


def part_of(short: pl.Series, long: pl.Series) -> int | None:
    """Where ``short`` sits in ``long``: at its start or end first (steady steps all look
    alike: the end of a run is also a slice of it further up), else :func:`_find_slice`."""
    if _same(long.head(len(short)), short):
        return 0
    if _same(long.tail(len(short)), short):
        return len(long) - len(short)
    return _find_slice(short, long)


def rotation(x: list[int], y: list[int]) -> bool:
    """Whether ``y`` is ``x`` started at another of its launches (or ``x`` itself)."""
    if len(x) != len(y) or not x:
        return False
    doubled = x + x
    starts = [i for i, token in enumerate(x) if token == y[0]][:16]  # a few: cheap
    return any(doubled[i : i + len(y)] == y for i in starts)


def overlap(a: pl.Series, b: pl.Series, step: int, checks: int = 8) -> int | None:
    """How far the two sequences overlap as windows of one launch stream that repeats a
    step of ``step`` launches: the longest end of one that is the other's beginning (``a =
    X + O`` and ``b = O + Y``, or the other way round), at least ``MIN_STEPS`` steps long,
    and ``Y`` more of the same step (a capture that ended later; ``X``, what the earlier
    capture alone holds, may be the run's start-up: warm-up steps, autotuning; or a change
    in that run's first steps, which :func:`~.align.align_tokens` tells apart by the
    common prefix and suffix: the overlap must match more). Positive
    when ``a`` holds the earlier window, negative when ``b`` does, None when neither does.
    A path change partway through the run is no such overlap: after it, each side repeats
    its own step. As :func:`_find_slice`: the first tokens pick candidate overlaps,
    ``checks`` compared in full."""
    best = None
    for sign, early, late in ((1, a, b), (-1, b, a)):
        k = _end_is_start(early, late, MIN_STEPS * step, checks)
        if k is None or (best is not None and k <= abs(best)):
            continue
        # Y repeats the step: each of its launches is the one a step before it.
        if _same(late.slice(k), late.slice(k - step, len(late) - k)):
            best = sign * k
    return best


def _end_is_start(early: pl.Series, late: pl.Series, least: int, checks: int) -> int | None:
    """The longest end of ``early`` (at least ``least`` launches, shorter than both) that
    ``late`` begins with."""
    import polars as pl

    head = min(8, least)
    first = max(1, len(early) - len(late) + 1)  # an overlap as long as ``late`` is a slice
    span = len(early) - max(least, head) - first + 1
    if least < 1 or span <= 0:
        return None
    mask = pl.Series([True] * span)
    for h in range(head):
        mask &= early.slice(first + h, span) == late[h]
    for offset in (mask.arg_true() + first).head(checks):
        k = len(early) - int(offset)
        if _same(early.slice(offset, k), late.head(k)):
            return k
    return None


def startup(early: pl.Series, shared: int, motif: list[int]) -> bool:
    """Whether what the earlier capture alone holds (its first ``len(early) - shared``
    launches, before the overlap) can be the run's start-up: it does not begin with a whole
    step (``motif`` at any of its launches) unless it is all steps. A run that repeats its
    step, then launches something else, then repeats it again changed its path: a capture
    of it that starts later holds no start-up of it."""
    alone = len(early) - shared
    step = len(motif)
    if alone < step or not rotation(early.head(step).to_list(), motif):
        return True
    # all steps: each launch the one a step later (into the overlap)
    return _same(early.head(alone), early.slice(step, alone))
