"""The launch sequence of a process that launches from several host threads, put in an
order the host scheduler does not make, for the period step search
(:func:`tracelens.steps_period._process_period`).

CUPTI numbers the calls of all of a process's threads in one sequence, as the scheduler ran
them: PyTorch DDP's communication thread calls its collective after the compute thread's c
in most iterations and after the next iteration's a in some, and in that order a step of
a, b, c, AllReduce reads a, b, c, a and then AllReduce, b, c, AllReduce. Of 12 iterations,
one such cut the steps wrong and two left no step at all, where the same program run again
had its 12: two runs of one program disagreed on their steps.

Each thread's own sequence is its program's order. So where the search on host order gave
no steps or steps off their motif, the device's busiest thread (most launches there) is
searched alone; its steps are blocks of host order (a step from its first launch of the
step to its first of the next), each other thread's launches are shared out to those
blocks by their own sequence, by the fingerprint's rule
(:func:`tracelens.fingerprint.threadsteps.thread_blocks`: a thread launching ``q`` a step
takes ``q`` at a time; one that launches unsteadily, a logger, keeps the host's blocks),
and a launch put in another block than host order's is moved to it: to the end of an
earlier block, or after the first launch of a later one. The host-order search is then run
again on that order, and its steps kept when they are as many (a late call breaks steps and
adds none) and more of them are exactly the motif. Where no launch moves, nothing changes.

Only then are the calls' threads read (:func:`tracelens.fingerprint.threads.thread_calls`,
0.47 CPU s of the bench trace's 5M calls), and, where some process made calls from two
threads, the launches' processes and correlation ids when the sequence lacks them (read
without the process, or handed over in order without either: read again, and used where
their tokens are the sequence's; the fingerprint hands over its correlation ids). A device whose launches
repeat no kernel at a steady spacing (no candidate period: the bench trace's) or whose
steps are each the motif asks nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from .steps_period import DevicePeriod
    from .steps_sequence import LaunchSequence
    from .trace import Trace

_TID_BITS = 0xFFFFFF


def exact_steps(found: DevicePeriod | None) -> int:
    """How many of ``found``'s steps launch exactly its motif, in its order."""
    import polars as pl

    if found is None or found.steps.is_empty():
        return 0
    if found.anchored is not None:
        return found.anchored.exact
    per = found.steps.group_by("step", maintain_order=True).agg(pl.col("token"))
    motif = list(found.motif)
    return sum(1 for tokens in per["token"].to_list() if tokens == motif)


def threaded_period(sequence, threads: LaunchThreads, offset: int, count: int, run):
    """The period steps of launches [offset, offset + count) of ``sequence`` (one device's,
    or one process's there): ``run(sequence, offset, count, seen)``'s
    (:func:`tracelens.steps_period.device_period`), or, where those gave no steps or steps
    off their motif and the launches had a candidate period, those of the order that puts
    each thread's launches in the steps of its own sequence, when they are as many and more
    of them are exactly the motif (see the module docstring)."""
    seen: dict[str, int] = {}
    found = run(sequence, offset, count, seen)
    if not seen.get("candidates"):
        return found
    exact = exact_steps(found)
    if found is not None and exact == _count(found):
        return found
    groups = threads.groups(offset, count)
    if groups is None or groups.n_unique() < 2:
        return found
    # the busiest thread: most launches here, then the lowest process and rank
    groups = groups.alias("g")
    counts = groups.value_counts(name="n").sort(["n", "g"], descending=[True, False])
    busiest = (groups == counts["g"][0]).arg_true()
    alone = run(sequence.reordered(offset, count, busiest), offset, busiest.len(), None)
    if alone is None or alone.steps.is_empty():
        return found
    order = thread_order(groups, alone, busiest)
    if order is None:
        return found
    again = run(sequence.reordered(offset, count, order), offset, count, None)
    # a call the scheduler put late breaks steps and adds none: the threads' order is
    # kept when it loses no step (the moved launches' GPU times are the late run's, and
    # can phase it otherwise) and more of its steps are the motif
    if exact_steps(again) <= exact or _count(again) < _count(found):
        return found
    return again


def _count(found: DevicePeriod | None) -> int:
    return 0 if found is None else found.steps["step"].n_unique()


class LaunchThreads:
    """The launching host thread of each launch of a :class:`LaunchSequence`, read once
    when first asked: the calls of the threads that are not their process's busiest
    (:func:`tracelens.fingerprint.threads.thread_calls`), found by (process, correlation
    id); a launch whose call is not among them is its process's busiest thread's."""

    def __init__(self, trace: Trace, params: dict[str, Any], sequence: LaunchSequence) -> None:
        self.trace, self.params, self.sequence = trace, params, sequence
        self._calls: pl.DataFrame | None = None
        self._read = False
        self._keyed: LaunchSequence | None = None

    def groups(self, offset: int, count: int) -> pl.Series | None:
        """(process << 32 | thread rank) of launches [offset, offset + count) in order;
        None when their calls were not traced, or every process launched from one thread."""
        import polars as pl

        if not self._read:
            from .fingerprint.threads import thread_calls

            self._read = True
            self._calls = thread_calls(self.trace)
        keyed = None if self._calls is None else self._keyed_sequence(offset, count)
        if keyed is None:
            return None
        pids = keyed.column("pid", offset, count).cast(pl.Int64)
        launched = keyed.column("correlation_id", offset, count).cast(pl.Int64)
        if pids.null_count() or launched.null_count():
            return None
        # a pid column holds the OS pid (pid_of) or, handed over, the globalPid (pid << 24)
        pid = pl.when(pids >= 2**24).then((pids // 2**24) & _TID_BITS).otherwise(pids)
        process = pl.select(pid).to_series()
        calls = self._calls
        called = calls.select(
            ((pl.col("global_pid") // 2**24) & _TID_BITS) * 2**32 | pl.col("correlation_id")
        ).to_series()
        rank = (process * 2**32 | launched).replace_strict(
            called, calls["thread"].cast(pl.Int64), default=0, return_dtype=pl.Int64
        )
        return process * 2**32 + rank

    def _keyed_sequence(self, offset: int, count: int) -> LaunchSequence | None:
        """The sequence with each launch's process and correlation id: this one, or (read
        without the process, one per device, or handed over without either) the trace's
        launches read again with both, used where they are
        the same launches in the same order (their tokens are)."""
        from .steps_sequence import LaunchSequence

        if {"pid", "correlation_id"} <= set(self.sequence.rows.columns):
            return self.sequence
        if self._keyed is None:
            self._keyed = LaunchSequence.read(self.trace, self.params, pids=True)
        keyed = self._keyed
        if keyed.rows.height != self.sequence.rows.height:
            return None
        same = keyed.tokens(offset, count).equals(self.sequence.tokens(offset, count))
        return keyed if same else None


def thread_order(
    groups: pl.Series, busiest_steps: DevicePeriod, busiest: pl.Series
) -> pl.Series | None:
    """The positions [0, n) of a device's launches (``groups``: each one's thread,
    :meth:`LaunchThreads.groups`) in the order that puts each other thread's launches in
    the step of its own sequence (see the module docstring); ``busiest_steps``: the steps of
    the busiest thread's launches alone, at positions ``busiest`` of the n. None when no
    launch moves."""
    import polars as pl

    from .fingerprint.threadsteps import thread_blocks

    n = groups.len()
    steps = busiest_steps.steps["step"]
    first = busiest_steps.before
    new = (steps != steps.shift(1)).fill_null(True).arg_true().cast(pl.Int64) + first
    end = first + steps.len()
    starts = busiest.gather(new).cast(pl.Int64)
    stop = int(busiest[end]) if end < busiest.len() else n
    blocks = starts.len()
    position = pl.int_range(n, dtype=pl.Int64, eager=True)
    inside = (position >= starts[0]) & (position < stop)
    host = pl.select(
        pl.when(inside).then(starts.search_sorted(position, side="right").cast(pl.Int64) - 1)
    ).to_series()
    # the busiest thread's launches are in the blocks its steps make; the rule shares out
    # the others' (it would split the busiest's too, a step holding an extra launch or not)
    mine = pl.select(
        pl.when(groups == groups.gather(busiest.head(1)))
        .then(host)
        .otherwise(thread_blocks(groups, host, blocks))
    ).to_series()
    moved = mine.is_not_null() & mine.ne_missing(host)
    if not moved.any():
        return None
    # a moved launch goes to the end of an earlier block (just before the next block's
    # first launch) or after the first launch of a later one: keys 2 * position, +-1
    bounds = pl.concat([starts, pl.Series([stop], dtype=pl.Int64)])
    after_steps = host.is_null() & (position >= stop)
    back = moved & (after_steps | (mine < host).fill_null(False))
    target = pl.select(
        pl.when(back)
        .then(2 * bounds.gather(mine.fill_null(0) + 1) - 1)
        .when(moved)
        .then(2 * bounds.gather(mine.fill_null(0)) + 1)
        .otherwise(2 * position)
    ).to_series()
    return pl.DataFrame({"key": target, "pos": position}).sort("key", "pos")["pos"]
