"""Where period steps start: the motif position a device's steps start at, and the same
steps started at a given kernel of their motif (the diff's common phase).

:func:`period_phase`: a step boundary is where the host synced, logged or prepared the next
batch, so the GPU idles before the step's first launch, waiting for it. In a GPU-bound loop
the host runs ahead and the GPU's queue never drains: it idles a few microseconds before
every launch alike, and the longest of these is noise (a CUDA-graph decode loop of 10
iterations, 4 launches each, gave 9 steps started at the replay, 3.5 us of idle time before
it against 2.6 us before the iteration's first copy). The host's pause before the launch
call (400-700 us there, against 1-60 us before the others) then tells.

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

from collections.abc import Callable
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


def period_phase(
    idle: pl.Series, a: int, b: int, p: int, conf: dict[str, Any], host: Callable[..., Any]
) -> tuple[int, float, bool]:
    """(the motif position [0, p) the steps of the periodic stretch [a, b) start at, the mean
    GPU idle time before its launches in ns, whether the host's pauses chose it): the position with the longest mean GPU idle
    time before it, unless that does not stand out (:func:`_stands_out`) and the host's
    pause before each launch call does, in the stretch's first ``phase_sample_steps``
    periods (``host(lo, hi)``: :class:`HostPauses` of launches [lo, hi), or None): then the
    position the host paused longest before."""
    by_gpu = _by_position(idle, a, b, p)
    phase, by_host = by_gpu[0][0], False
    if not _stands_out(by_gpu, conf["phase_idle_over_next"]):
        hi = min(b, a + p * conf["phase_sample_steps"])
        gaps = host(a, hi)
        host_ranked = None if gaps is None else _by_position(gaps, 0, hi - a, p)
        if host_ranked is not None and _stands_out(host_ranked, conf["phase_idle_over_next"]):
            phase, by_host = host_ranked[0][0], True
    mean = {r[0]: r[1] for r in by_gpu}[phase]
    return phase, float(mean) if mean is not None else float("nan"), by_host


def _by_position(values: pl.Series, a: int, b: int, p: int) -> list[tuple[int, Any, Any]]:
    """(motif position, mean, median of ``values`` at it over [a, b)), the longest mean
    first (nulls last), positions in order among equal means."""
    import polars as pl

    value = pl.col("value")
    return (
        pl.DataFrame({"value": values.slice(a, b - a)})
        .with_columns(phase=pl.int_range(0, b - a, dtype=pl.Int64) % p)
        .group_by("phase")
        .agg(value.mean().alias("mean"), value.median().alias("median"))
        .sort("mean", "phase", descending=[True, False], nulls_last=True)
        .rows()
    )


def _stands_out(ranked: list[tuple[int, Any, Any]], ratio: float) -> bool:
    """Whether the first position of ``ranked`` (:func:`_by_position`) has both the
    longest mean and the longest median, each more than 0 and at least ``ratio`` times any
    other position's: a boundary waits at every step (one long stall, such as the
    capture's first launch waiting for its inputs, lifts a mean, not a median), and waits
    clearly longer (the medians of a half-idle mix, two processes' launches on one device,
    can be noise)."""
    first, mean, median = ranked[0]
    if not mean or not median or mean <= 0 or median <= 0:
        return False
    others = ranked[1:]
    return all(
        (m is None or mean >= ratio * m) and (d is None or median >= ratio * d)
        for _, m, d in others
    )


class HostGaps:
    """The host's pause before the launch call of each launch in a sample of a device's
    launches (``queries/steps_host_gaps.sql`` for the event filter ``params`` and the
    sample's time window: :meth:`calls`; :class:`HostPauses` reads one device's once)."""

    def __init__(self, trace: Trace, params: dict[str, Any]) -> None:
        self.trace, self.params = trace, params

    def calls(self, device: int, seq: pl.DataFrame, lo: int, hi: int) -> pl.DataFrame | None:
        """Per launch [lo, hi) of ``seq`` (``device``'s launches in launch order, with their
        correlation_id), in order: correlation_id and gap_ns, the host's pause before its
        launch call, ns (the kernels of one CUDA graph launch share a call and its gap:
        :func:`first_of_call`), null where another thread than the busiest launched
        (:func:`_busiest_thread_only`). None when ``seq`` has no correlation ids, no call was
        traced, or two processes launched there (their correlation ids collide)."""
        if "correlation_id" not in seq.columns or hi <= lo:
            return None
        sample = seq.slice(lo, hi - lo)
        window = {
            "device": device,
            "start_ns": int(sample["start_ns"].min()),
            "end_ns": int(sample["start_ns"].max()) + 1,
        }
        calls = self.trace.query("steps_host_gaps", **{**self.params, **window})
        # each call's first row (a driver call inside it comes after)
        gaps = calls.unique(["pid", "correlation_id"], keep="first", maintain_order=True)
        if gaps.height == 0 or gaps["correlation_id"].is_duplicated().any():
            return None
        joined = sample.select("correlation_id").join(
            gaps.select("correlation_id", "tid", "gap_ns"),
            on="correlation_id",
            how="left",
            maintain_order="left",
        )
        return _busiest_thread_only(joined)


def _busiest_thread_only(joined: pl.DataFrame) -> pl.DataFrame:
    """``joined`` (correlation_id, tid, gap_ns per launch) as correlation_id and gap_ns,
    gap_ns kept for the launches of the thread that made most of them (then the lowest
    tid), null for the others'. A pause is measured on its own thread: a side thread that
    calls once an iteration (DDP's communication thread, its collective) always paused
    longest, a whole iteration, and phased the steps at its call where the program paused
    before its first launch (test_hostgaps: 23 steps from the collective in a run, 24 from
    a in the same program's run with a late collective). The busiest thread is the loop's
    (as :func:`tracelens.steps_threads.threaded_period` takes it); the pause before its
    iteration's first launch is the program's, whatever the side threads did in it."""
    import polars as pl

    tids = joined["tid"].drop_nulls()
    if tids.n_unique() <= 1:
        return joined.select("correlation_id", "gap_ns")
    counts = tids.value_counts(name="n").sort(["n", "tid"], descending=[True, False])
    busiest = counts["tid"][0]
    kept = pl.when(pl.col("tid") == busiest).then(pl.col("gap_ns"))
    return joined.select("correlation_id", kept.alias("gap_ns"))


def first_of_call(calls: pl.DataFrame) -> pl.Series:
    """gap_ns of :meth:`HostGaps.calls`' rows where only the first launch of a call holds
    it (the kernels of one CUDA graph launch share a call), the others 0."""
    import polars as pl

    cid = pl.col("correlation_id")
    return calls.select(
        pl.when(cid.is_first_distinct()).then(pl.col("gap_ns")).otherwise(0)
    ).to_series()


class HostPauses:
    """One device's host pauses (:meth:`HostGaps.calls`) read once, for launches
    [0, ``reach``) or as far as asked, and sliced per ask: the exact period's phase
    (:func:`period_phase`, launches [a, hi) of its stretch) and then a shorter motif's
    anchors (:func:`tracelens.steps_motif.anchored_steps`, launches [0, sample)) asked for
    two windows of one device, each a scan of the calls and launches (2.5 CPU s direct on
    the 5M-kernel trace, whatever the window's size). ``read(lo, hi)``: the rows."""

    def __init__(self, read: Callable[[int, int], pl.DataFrame | None], reach: int) -> None:
        self.read, self.reach = read, reach
        self.rows: pl.DataFrame | None = None
        self.end = 0

    @classmethod
    def of(cls, read, n: int, p: int, periods, stretch, conf: dict[str, Any]) -> HostPauses:
        """For a device of ``n`` launches, exact period ``p`` over ``stretch`` ([a, b) or
        None) and candidate ``periods``: read as far as either window may ask (the
        stretch's first ``phase_sample_steps`` periods, and as many of the longest
        candidate's from the first launch)."""
        k = conf["phase_sample_steps"]
        reach = min(n, max(p, *periods) * k)
        if stretch is not None:
            reach = max(reach, min(stretch[1], stretch[0] + p * k))
        return cls(read, reach)

    def __call__(self, lo: int, hi: int) -> pl.Series | None:
        """:func:`first_of_call` of launches [lo, hi), or None (:meth:`HostGaps.calls`)."""
        if hi <= lo:
            return None
        if hi > self.end:
            self.end = max(hi, self.reach)
            self.rows = self.read(0, self.end)
        if self.rows is None:
            return None
        return first_of_call(self.rows.slice(lo, hi - lo))
