"""Period steps started at a given kernel of their motif (the diff's common phase).

``tracelens steps`` phases a device's period steps at the motif's launch with the longest
idle time before it (:func:`tracelens.steps_period.device_period`). Two runs of one program
can phase alike-looking steps on different kernels (one run's slower kernel ate the host's
wait before the other's boundary), and their step durations then hold different parts of
the wait between steps. The diff asks for the same steps started at one kernel both motifs
launch once (:func:`tracelens.steps.find_steps`' ``phase``): :func:`rephase` moves the
found steps' starts to that kernel's launch in each step, nothing else (same period, same
motif up to rotation, warm-up peeled after).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from .steps_motif import Anchored
    from .trace import Trace


def phase_tokens(trace: Trace, phase: str | None) -> frozenset[int]:
    """The name ids of the kernel named ``phase`` (none without one)."""
    if phase is None:
        return frozenset()
    names = trace.query_rows("util_kernel_names").data
    return frozenset(i for i, name in names if name == phase)


def rephase(
    ids: pl.Series,
    found: tuple[list[int], int, tuple[int, ...], Anchored | None],
    stretch: tuple[int, int] | None,
    tokens: frozenset[int],
    conf: dict[str, Any],
) -> tuple[list[int], int, tuple[int, ...], Anchored | None]:
    """``found`` (starts, end, motif, anchored: one device's steps as the search found
    them) started at the launch of the kernel ``tokens`` name (its ids: one name may have
    several) in each step, when the motif launches it exactly once; else ``found``
    unchanged. ``stretch``: the exact period's periodic stretch [a, b) when the steps are
    of that period (``anchored`` None): the steps start at the token's first position in
    it and are the whole periods from there; a motif with optional launches
    (``anchored``) is searched again with the token as its anchor
    (:func:`tracelens.steps_motif._segments`), in the same launch order (in order or any)."""
    from .steps_motif import _segments

    starts, end, motif, anchored = found
    at = [i for i, t in enumerate(motif) if t in tokens]
    if len(at) != 1 or at[0] == 0:
        return found
    any_order = anchored is not None and anchored.any_order
    again = _segments(ids, motif[at[0]], conf, any_order)
    if again is not None:
        return again.starts, again.end, again.motif, again
    if anchored is not None or stretch is None:
        return found
    p = len(motif)
    a, b = stretch
    first = a + (starts[0] - a + at[0]) % p
    count = (b - first) // p
    if count < conf["min_repeats"]:
        return found
    moved = list(range(first, first + count * p, p))
    return moved, first + count * p, tuple(ids.slice(first, p).to_list()), None
