"""The CUDA runtime API calls util reads, from one read of them (``queries/util_calls.sql``):
the start of the call that launched each GPU operation that ends an idle gap, the
synchronizing calls, and the span of the calls.

Why not a join in the read of the GPU work: each operation's launching call is needed only
where the operation ends an idle gap (util's idle causes), yet a LEFT JOIN of every
operation to the API calls built a hash table of every call (5M on the 5M-kernel
benchmark: about half of ``util``'s CPU time). Here the calls are indexed once by
(process, correlation id), the match of ``launched_by`` in ``queries/_shared.sql``, and the
gap-ending operations look their call up by position: CUPTI numbers correlation ids from 1
per process, so a table with one slot per (process, id) between the smallest and the
largest id is dense (~0.1 CPU s for 5M calls, against ~0.8 for DuckDB's hash join). Sparse
ids fall back to a hash join of the looked-up operations alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = [
    "HostCalls",
    "calls_in_columns",
    "LaunchIndex",
    "pid_of",
    "read_call_figures",
    "read_calls",
    "read_launch_calls",
    "window_figures",
]

# The columns of the API calls util_calls.sql reads.
_CALL_COLUMNS = {"globalTid", "correlationId", "start", "end", "nameId"}
# A slot table larger than this many slots per call (or than the floor) is sparse: hash.
_SLOTS_PER_CALL = 4
_SLOTS_FLOOR = 1 << 20
# Up to this many processes, a row's process is found by comparing it with each.
_FEW_PIDS = 16


class LaunchIndex:
    """The start and the thread (globalTid) of the API call of each (pid, correlation id):
    the earliest, should two calls share one (the join it replaces matched both; util's
    idle causes take the earliest launch of the operations that end a gap; of calls that
    start together, the smallest thread)."""

    def __init__(self, calls: pl.DataFrame) -> None:
        """``calls``: global_tid, correlation_id, start (nulls allowed: they match nothing);
        the process of each is pid_of(global_tid)."""
        import polars as pl

        calls = calls.drop_nulls(["global_tid", "correlation_id"]).with_columns(
            pid=pid_of(pl.col("global_tid"))
        )
        self._pids = calls["pid"].unique().sort()
        lo, hi = calls["correlation_id"].min(), calls["correlation_id"].max()
        self._lo = lo or 0
        self._width = 0 if hi is None else hi - lo + 1
        size = self._width * self._pids.len()
        self._starts: pl.Series | None = None
        self._tids: pl.Series | None = None
        self._by_key: pl.DataFrame | None = None
        if size <= max(_SLOTS_PER_CALL * calls.height, _SLOTS_FLOOR):
            self._starts, self._tids = self._table(calls, size)
        else:
            key = ["pid", "correlation_id"]
            self._by_key = (
                calls.sort("start", "global_tid")
                .group_by(key)
                .agg(pl.col("start").first(), pl.col("global_tid").first())
            )

    def _table(self, calls: pl.DataFrame, size: int) -> tuple[pl.Series, pl.Series]:
        """The slot tables: each slot's earliest call start and that call's thread (null:
        no call)."""
        import polars as pl

        slot = self._slots(calls)
        start, tid = calls["start"], calls["global_tid"]
        table = pl.repeat(None, size, dtype=pl.Int64, eager=True).scatter(slot, start)
        tids = pl.repeat(None, size, dtype=pl.Int64, eager=True).scatter(slot, tid)
        if size - table.null_count() == slot.len() - slot.null_count():
            return table, tids  # each call has a slot of its own (as CUPTI numbers them)
        # One arbitrary call of each shared slot won: take the earliest (then the smallest
        # thread), whatever order the calls came in.
        shared = slot.is_duplicated() & slot.is_not_null()
        earliest = (
            pl.DataFrame({"slot": slot, "start": start, "tid": tid})
            .filter(shared)
            .sort("start", "tid")
            .group_by("slot")
            .first()
        )
        table = table.scatter(earliest["slot"], earliest["start"])
        return table, tids.scatter(earliest["slot"], earliest["tid"])

    def _slots(self, frame: pl.DataFrame) -> pl.Series:
        """The slot of each row of ``frame`` (pid, correlation_id); null when the calls have
        no such process or the id lies outside theirs."""
        import polars as pl

        pid, cid = pl.col("pid"), pl.col("correlation_id")
        n = self._pids.len()
        if n == 0:
            return pl.repeat(None, frame.height, dtype=pl.Int64, eager=True)
        offset = cid - self._lo
        known = (offset >= 0) & (offset < self._width)
        if n == 1:  # one process (the usual case): no search for its rank
            known, slot = known & (pid == self._pids[0]), offset
        elif n <= _FEW_PIDS:  # the process's rank among the calls' (null: none of theirs)
            # a comparison per process: ~5x cheaper than replace_strict's hash join of every
            # row looked up (~4M on the 5M-kernel benchmark: 4 processes, a million idle
            # gaps each)
            rank = pl.lit(None, pl.Int64)
            for k, value in enumerate(self._pids.to_list()):
                rank = pl.when(pid == value).then(pl.lit(k, pl.Int64)).otherwise(rank)
        else:
            rank = pid.replace_strict(self._pids, range(n), default=None, return_dtype=pl.Int64)
        if n > 1:
            slot = rank * self._width + offset
        return frame.select(pl.when(known).then(slot).alias("slot")).to_series()

    def launch_starts(self, ops: pl.DataFrame) -> pl.Series:
        """The start of the call that launched each row of ``ops`` (pid, correlation_id),
        in row order; null where the export has no such call."""
        return self.launches(ops)["launch_start"]

    def launches(self, ops: pl.DataFrame) -> pl.DataFrame:
        """``launch_start`` and ``launch_tid``: the start and the thread (globalTid) of the
        call that launched each row of ``ops`` (pid, correlation_id), in row order; null
        where the export has no such call."""
        import polars as pl

        if self._starts is not None and self._tids is not None:
            slot = self._slots(ops)
            return pl.DataFrame(
                [
                    self._starts.gather(slot).alias("launch_start"),
                    self._tids.gather(slot).alias("launch_tid"),
                ]
            )
        found = ops.select("pid", "correlation_id").join(
            self._by_key, on=["pid", "correlation_id"], how="left", maintain_order="left"
        )
        return found.select(
            pl.col("start").cast(pl.Int64).alias("launch_start"),
            pl.col("global_tid").cast(pl.Int64).alias("launch_tid"),
        )


def pid_of(global_tid: pl.Expr) -> pl.Expr:
    """The operating-system pid of an nsys globalTid/globalPid (bits 24-47: pid_of in
    ``queries/_shared.sql``)."""
    return (global_tid // (1 << 24)) % (1 << 24)


@dataclass(frozen=True)
class HostCalls:
    """What util reads of the CUDA API calls (see the module docstring). ``launches``:
    the launching calls by (pid, correlation id) (None: the GPU work has each launch's start,
    :func:`read_call_figures`); ``syncs``: global_tid, start, end of the calls
    that block their thread until GPU work is done, by end; ``first_ns``/``last_ns``: the
    earliest start and latest end of any call (None without calls); ``in_window``: the
    figures of the calls in a time window (:func:`window_figures`), when asked for."""

    launches: LaunchIndex | None
    syncs: pl.DataFrame
    first_ns: int | None
    last_ns: int | None
    in_window: dict[str, int | None] | None = None


def read_calls(
    trace: Trace, sync_regex: str, window: tuple[int | None, int | None] | None = None
) -> HostCalls:
    """The CUDA API calls of ``trace`` as util reads them, in one read; ``sync_regex``: the
    full-match regex of the synchronizing API names (``util.sync_api_regex``); ``window``:
    (start_ns, end_ns, None: open) whose :func:`window_figures` to keep on ``in_window``."""
    import polars as pl

    calls = trace.query("util_calls", any_order=True, sync_regex=sync_regex)
    first, last = calls.select(pl.col("start").min(), pl.col("end").max()).row(0)
    in_window = None
    if window is not None:
        in_window = window_figures(calls, *window, every=(calls.height, first, last))
    syncs = (
        calls.filter(pl.col("sync").fill_null(False))
        .select("global_tid", "start", "end")
        .sort("global_tid", "end", "start")
    )
    launches = LaunchIndex(calls.select("global_tid", "correlation_id", "start"))
    return HostCalls(launches, syncs, first, last, in_window)


def read_call_figures(trace: Trace, sync_regex: str) -> HostCalls:
    """:func:`read_calls` without the launching calls (``launches`` None), for GPU work that
    holds the start of each operation's launching call (util's work kept in a cache entry):
    the synchronizing calls and the count and span of the calls, from
    ``queries/util_call_figures.sql``, not a read of every call (on the 5M-kernel benchmark,
    cached: ~0.45 CPU s and ~330 MB less). ``in_window``: the figures of every call (the
    window of a whole-trace read is open)."""

    rows = trace.query("util_call_figures", sync_regex=sync_regex)
    count, first, last = rows.select("calls", "first_ns", "last_ns").row(0)
    syncs = rows.filter("sync").select("global_tid", "start", "end")
    syncs = syncs.sort("global_tid", "end", "start")
    figures = {"runtime_calls": count, "first_ns": first, "last_ns": last}
    return HostCalls(None, syncs, first, last, figures)


def read_launch_calls(trace: Trace, sync_regex: str) -> HostCalls:
    """:func:`read_calls` with its window open, from two reads that each take fewer columns:
    the launching calls (``queries/util_launch_calls.sql``: thread, correlation id and
    start) and :func:`read_call_figures`' synchronizing calls and count and span of every
    call. For a trace read from Parquet, where a column not read is not decoded (the
    5M-kernel benchmark, cached: ~0.12 CPU s less than util_calls.sql); read directly,
    :func:`read_calls` is cheaper (DuckDB's SQLite scanner converts every row once per
    scan, so the two scans cost more than the columns saved)."""
    figures = read_call_figures(trace, sync_regex)
    launches = LaunchIndex(trace.query("util_launch_calls"))
    return HostCalls(launches, figures.syncs, figures.first_ns, figures.last_ns, figures.in_window)


def calls_in_columns(trace: Trace) -> bool:
    """Whether ``trace`` reads its API calls from Parquet with each column util_calls.sql
    reads, where :func:`read_launch_calls` is the cheaper read: a parquetdir input, or a
    cache entry that holds those columns. An entry without them would copy the calls on
    the first of its two reads and again, whole, on the second
    (:mod:`tracelens.trace.lazy`), where :func:`read_calls` copies them once."""
    trace.db  # noqa: B018  (opening the connection sets up the trace's cache, if any)
    lazy = trace._lazy
    if lazy is None:
        return trace.parquet_dir is not None
    cached = lazy.columns.get("CUPTI_ACTIVITY_KIND_RUNTIME", ())
    return not lazy.off and _CALL_COLUMNS <= set(cached)


def window_figures(
    calls: pl.DataFrame,
    start_ns: int | None,
    end_ns: int | None,
    every: tuple[int, int | None, int | None],
) -> dict[str, int | None]:
    """runtime_calls, first_ns (earliest start) and last_ns (latest end) of the rows of
    ``calls`` (start, end) in the window [start_ns, end_ns) (None: open; nsys's rule,
    :func:`tracelens.filters.in_window`), as ``trace_totals.sql`` counts the API calls
    without a selection (a null time fails a bound); ``every``: those figures of all the
    rows, which an open window keeps."""
    import polars as pl

    from .filters import in_window

    if start_ns is None and end_ns is None:
        count, first, last = every
    else:
        kept = in_window(pl.col("start"), pl.col("end"), start_ns, end_ns)
        count, first, last = (
            calls.lazy()
            .filter(kept)
            .select(pl.len(), pl.col("start").min(), pl.col("end").max())
            .collect()
            .row(0)
        )
    return {"runtime_calls": count, "first_ns": first, "last_ns": last}
