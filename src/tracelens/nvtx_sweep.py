"""Each CUDA API call's and GPU operation's innermost NVTX range, as a sweep per thread in
vectorized polars: the relations ``nvtx_call_ranges`` and ``nvtx_op_ranges`` the NVTX
queries read (see ``queries/_nvtx_calls.sql``, ``_nvtx_marks.sql``, ``_nvtx_op_ranges.sql``
for their columns).

Per thread, the ranges' start and end marks are sorted once (``_nvtx_marks``: from each
mark on, the innermost open range); every call finds the last mark at or before its start
by a binary search over (thread, time) keys, so the calls need no sort, and no range is
ever compared with a call. Calls and operations meet through a table indexed by (process,
correlationId) when the ids are dense (they are numbered from 1 per process), not a hash
join of millions with millions; a polars join otherwise. On the 5M-kernel benchmark the
DuckDB version of these steps (a hash aggregate per correlationId, an ASOF join, two hash
joins) took 6.5 CPU s of nvtx --gpu's 10.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

from . import _resources
from ._fetch import unordered_frame

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import polars as pl

    from .trace import Trace
    from .trace.prefetch import Prefetch

# The (process, correlationId) index is a list of slots, one per id between the smallest
# and the largest of each process: used while it has at most this many slots per call (and
# a floor for small traces), else the calls and operations are joined by hashing.
DENSE_SLOTS_PER_CALL = 4
DENSE_SLOTS_FLOOR = 1 << 20
# (thread rank, time key) pairs are searched as one integer: rank * span + key < 2**62
KEY_LIMIT = 1 << 62


def prefetch(trace: Trace, *, with_ops: bool) -> Prefetch | None:
    """The calls and operations :func:`attribute` reads, started now on a second database
    (:mod:`tracelens.trace.prefetch`) when the export is read directly on several threads;
    None otherwise (they are read when needed)."""
    from .trace.prefetch import Prefetch

    if not Prefetch.worthwhile(trace):
        return None
    ops = "_nvtx_op_ranges" if with_ops else "_nvtx_op_spans"
    return Prefetch(trace, {"calls": ("_nvtx_calls", False), "ops": (ops, True)})


def attribute(
    trace: Trace, chunks: list[dict], *, with_ops: bool = False, reads: Prefetch | None = None
) -> None:
    """Register ``nvtx_call_ranges`` (each call, one per process and correlationId, with
    its innermost range), ``nvtx_range_ops`` (per range, the operations whose call it holds
    innermost) and ``nvtx_overlap_calls`` (the calls of operations launched on threads whose
    ranges overlap) on the trace's DuckDB connection; with ``with_ops``, also
    :func:`add_op_ranges`'s relations from the same read of the operations. ``nvtx_tree``
    must be built; ``chunks`` are the thread chunks of :func:`tracelens.nvtx_tree.thread_chunks`
    (one chunk's marks at a time). ``reads``: the calls and operations, read already or
    being read (:func:`prefetch`); None: read them here."""
    import polars as pl

    con = trace.db
    with _explained(trace):
        calls = _calls(con, reads)
    slots = _Slots(calls)
    calls = calls.filter(slots.first_calls(calls, lambda rows: _call_classes(con, rows)))
    found = pl.DataFrame(schema={"range_id": pl.Int64, "range_end": pl.Int64}).clear(calls.height)
    for params in chunks:
        marks = con.execute(_resources.query("_nvtx_marks"), params).pl()
        hit = _innermost(calls, marks)
        found = found.select(pl.coalesce(found[c], hit[c]).alias(c) for c in found.columns)
    overlapping = _overlapping_threads(con)
    range_id = _refit(con, calls, found, overlapping)
    del found  # freed before the operations are read, as every frame no longer needed
    call_ranges = calls.select("global_pid", "correlation_id", "global_tid").with_columns(
        range_id.alias("range_id")
    )
    # the projection needs of each operation its call and its span only: the other columns
    # (kind, device, kernel names) are read when asked for (2.1 CPU s for the 5M kernels of
    # the benchmark, the four columns 1.1)
    query = "_nvtx_op_ranges" if with_ops else "_nvtx_op_spans"
    with _explained(trace):
        ops = reads.take("ops") if reads is not None else _operations(con, query)
    ops, call = _with_calls(ops, call_ranges, slots)
    register(con, "nvtx_call_ranges", call_ranges)
    on_overlapping = ops["global_tid"].is_in(overlapping).fill_null(False)
    _range_ops(con, ops, call, call_ranges.height, ~on_overlapping)
    register(con, "nvtx_overlap_calls", _overlap_calls(ops, call, calls, on_overlapping))
    if with_ops:
        _register_op_ranges(con, ops, on_overlapping)


@contextmanager
def _explained(trace: Trace) -> Iterator[None]:
    """The two big reads (here or prefetched) go to DuckDB directly, not through
    ``Trace.query``: a DuckDB error the export's content caused (a damaged page: 'database
    disk image is malformed') is raised as its one TraceError line, as every query's is."""
    import duckdb

    try:
        yield
    except duckdb.Error as exc:
        raise trace._explain(exc) or exc from None


def _calls(con, reads: Prefetch | None = None) -> pl.DataFrame:
    """The rows of ``queries/_nvtx_calls.sql`` with global_pid first (pid_of's bits)."""
    import polars as pl

    if reads is not None:
        calls = reads.take("calls")
    else:
        calls = unordered_frame(con, _resources.query("_nvtx_calls"))
    thread_bits = pl.col("global_tid") & 16777215  # tid_of (_shared.sql), bit for bit
    return calls.select((pl.col("global_tid") - thread_bits).alias("global_pid"), pl.all())


def _operations(con, query: str) -> pl.DataFrame:
    """The GPU operations (``queries/<query>.sql``) in any order (:mod:`tracelens._fetch`):
    each is looked up by its call, and of the operations of one call any one is counted.
    Each column in one chunk, so that the frame the sweep registers (with two columns it
    gathered) is handed to Arrow without first copying every column into one chunk layout:
    the 5M operations of the NVTX bench trace peaked at 1.21-1.39 GB read in chunks, 1.12
    GB so (as read in order, one batch, before)."""
    return unordered_frame(con, _resources.query(query), contiguous=True)


def _call_classes(con, calls: pl.DataFrame) -> pl.Series:
    """The eventClass of each row of ``calls`` (rows of :func:`_calls`), looked up by
    thread, correlationId, start and end (``queries/_nvtx_call_classes.sql``): the calls are
    read in any order, so not by position. Two records equal in all four with different
    classes get the smaller: the sweep keeps one of them, and either gives the same range."""
    import polars as pl

    keys = ["global_tid", "correlation_id", "start", "end"]
    classes = con.execute(_resources.query("_nvtx_call_classes")).pl()
    lookup = classes.group_by(keys).agg(pl.col("event_class").min())
    found = calls.select(keys).join(
        lookup, on=keys, how="left", maintain_order="left", nulls_equal=True
    )
    return found["event_class"]


def add_op_ranges(trace: Trace) -> None:
    """Register ``nvtx_op_ranges`` (each GPU operation, every column of
    ``queries/_nvtx_op_ranges.sql``, with its call's thread and range) and
    ``nvtx_overlap_ops`` (those launched on threads whose ranges overlap) from the
    operations and ``nvtx_call_ranges``, for a sweep :func:`attribute` built without them."""
    con = trace.db
    call_ranges = con.execute(
        "SELECT global_pid, correlation_id, global_tid, range_id FROM nvtx_call_ranges"
    ).pl()
    slots = _Slots(call_ranges)
    ops = _operations(con, "_nvtx_op_ranges")
    ops, _call = _with_calls(ops, call_ranges, slots)
    on_overlapping = ops["global_tid"].is_in(_overlapping_threads(con)).fill_null(False)
    _register_op_ranges(con, ops, on_overlapping)


def drop_op_ranges(con) -> None:
    """Unregister what :func:`add_op_ranges` registers, freeing the operations' columns."""
    for name in ("nvtx_op_ranges", "nvtx_overlap_ops"):
        con.unregister(name)


def _overlapping_threads(con) -> list[int]:
    return con.execute(_resources.query("_nvtx_overlapping_threads")).pl()["global_tid"].to_list()


def _register_op_ranges(con, ops: pl.DataFrame, on_overlapping: pl.Series) -> None:
    register(con, "nvtx_op_ranges", ops)
    # their operations apart (usually none): a query joining the 5M-row nvtx_op_ranges
    # with the holders had DuckDB, which takes a registered relation for about one row,
    # build its hash table on all the operations (0.8 CPU s on the 5M-kernel nest trace)
    register(con, "nvtx_overlap_ops", ops.filter(on_overlapping))


def register(con, name: str, frame: pl.DataFrame) -> None:
    """``frame`` as the relation ``name`` on ``con``, handed over as Arrow with polars'
    own string layout (string views, which DuckDB reads): registering the polars frame
    converted the 5M-row frames' text (0.33 CPU s for 5M 'kernel' kinds, 0.05 this way)."""
    import polars as pl

    con.register(name, frame.to_arrow(compat_level=pl.CompatLevel.newest()))


def _with_calls(
    ops: pl.DataFrame, call_ranges: pl.DataFrame, slots: _Slots
) -> tuple[pl.DataFrame, pl.Series]:
    """``ops`` with their launching call's thread and range (null: no call recorded), and
    the index of that call in ``call_ranges`` (null: none)."""
    import polars as pl

    key = {"globalPid": "global_pid", "correlationId": "correlation_id"}
    if not slots.dense:
        calls = call_ranges.rename({v: k for k, v in key.items()}).with_row_index("call")
        joined = ops.join(calls, on=list(key), how="left", maintain_order="left")
        return joined.drop("call"), joined["call"].cast(pl.Int64)
    table = slots.call_rows
    if table is None:
        slot = slots.slot(call_ranges)
        known = slot.is_not_null()
        rows = pl.int_range(0, call_ranges.height, dtype=pl.Int64, eager=True)
        table = pl.repeat(None, slots.size, dtype=pl.Int64, eager=True)
        table = table.scatter(slot.filter(known), rows.filter(known))
    call = table.gather(slots.slot(ops, *key))
    ops = ops.with_columns(
        call_ranges["global_tid"].gather(call).alias("global_tid"),
        call_ranges["range_id"].gather(call).alias("range_id"),
    )
    return ops, call


def _overlap_calls(
    ops: pl.DataFrame, call: pl.Series, calls: pl.DataFrame, mine: pl.Series
) -> pl.DataFrame:
    """The calls of the operations ``mine`` (those launched on threads whose ranges
    overlap), one row each: global_pid, correlation_id, global_tid, start, "end" (the call),
    first_ns and last_ns (its operations' earliest start and latest end). There a range
    holds every call that lies inside it (nsys's rule), not just those of its innermost
    descendants, so queries/_nvtx_overlap_holders.sql joins them with the ranges."""
    import polars as pl

    launched = (
        ops.select("start", "end")
        .with_columns(call.alias("call"))
        .filter(mine & call.is_not_null())
    )
    per_call = launched.group_by("call").agg(
        pl.col("start").min().alias("first_ns"), pl.col("end").max().alias("last_ns")
    )
    index = per_call["call"]
    return pl.DataFrame(
        {
            "global_pid": calls["global_pid"].gather(index),
            "correlation_id": calls["correlation_id"].gather(index),
            "global_tid": calls["global_tid"].gather(index),
            "start": calls["start"].gather(index),
            "end": calls["end"].gather(index),
            "first_ns": per_call["first_ns"],
            "last_ns": per_call["last_ns"],
        }
    )


def _range_ops(con, ops: pl.DataFrame, call: pl.Series, calls: int, mine: pl.Series) -> None:
    """Create nvtx_range_ops (``queries/_nvtx_range_ops.sql``): per range, the operations
    ``mine`` whose launching call it holds innermost. Of each call one operation is
    counted, chosen through a table of calls rather than a hash of (process,
    correlationId) pairs."""
    import polars as pl

    rows = pl.int_range(0, ops.height, dtype=pl.Int64, eager=True)
    has_call = call.is_not_null()
    chosen = pl.repeat(-1, calls, dtype=pl.Int64, eager=True)
    chosen = chosen.scatter(call.filter(has_call), rows.filter(has_call))
    counted = (chosen.gather(call) == rows).fill_null(False)
    del rows, chosen
    # the operations not ``mine`` hold the null range, which the query leaves out: no
    # filtered copy of the operations (0.13 GB of 5M) is made for the aggregate
    range_id = ops["range_id"]
    if not mine.all():
        range_id = pl.select(pl.when(mine).then(range_id)).to_series()
    held = pl.DataFrame(
        {"range_id": range_id, "start": ops["start"], "end": ops["end"], "counted": counted}
    )
    register(con, "nvtx_op_holds", held)
    del held
    try:
        con.execute(_resources.query("_nvtx_range_ops"))
    finally:
        con.unregister("nvtx_op_holds")


class _Slots:
    """Each (process, correlationId) as one integer slot, when the ids are dense enough for
    a table of slots; ``dense`` False otherwise (callers then join by hashing)."""

    def __init__(self, calls: pl.DataFrame) -> None:
        import polars as pl

        pids = calls["global_pid"].drop_nulls().unique().sort()
        self.pids = pids
        lo, hi = calls["correlation_id"].min(), calls["correlation_id"].max()
        self.lo = lo or 0
        self.width = (hi - lo + 1) if hi is not None else 0
        size = self.width * pids.len()
        self.dense = size <= max(DENSE_SLOTS_PER_CALL * calls.height, DENSE_SLOTS_FLOOR)
        self.size = size
        # each slot's row in the calls (null: none), when first_calls kept every call: then
        # _with_calls needs no second table (0.15 CPU s on 5M calls)
        self.call_rows: pl.Series | None = None
        self._pl = pl

    def slot(self, frame: pl.DataFrame, pid: str = "global_pid", cid: str = "correlation_id"):
        """The slot of each row (null: a process or id the calls do not have)."""
        pl = self._pl
        gpid, corr = frame[pid], frame[cid]
        if self.pids.is_empty():
            return pl.repeat(None, frame.height, dtype=pl.Int64, eager=True)
        in_range = (corr >= self.lo) & (corr < self.lo + self.width)
        if self.pids.len() == 1:
            # one process (the usual case): no search for the process's rank
            known = (gpid == self.pids[0]) & in_range
            return pl.select(pl.when(known).then(corr - self.lo)).to_series()
        slot = _ranks(gpid, self.pids) * self.width + (corr - self.lo)
        return pl.select(pl.when(in_range).then(slot)).to_series()

    def first_calls(
        self, calls: pl.DataFrame, classes: Callable[[pl.DataFrame], pl.Series]
    ) -> pl.Series:
        """Which rows of ``calls`` (the frame the slots were made from) to keep: one per
        (process, correlationId), runtime before driver record (eventClass: ``classes(rows)``
        looks it up for the rows given, called only when two rows share a key), then the earlier
        (nsys's RangeId projection takes the call an operation's correlationId names; two
        records of one call are one call)."""
        pl = self._pl
        # the frame is not kept: the caller replaces it by the rows kept, and a reference
        # here would hold every call twice through the sweep (0.24 GB on 5M calls)
        calls = calls.with_row_index("row")
        key = ["global_pid", "correlation_id"]
        # rows equal in every key the sort reads are the same call to the sweep, so the
        # order they were read in (any: _calls) cannot change which range a call gets
        order = ["event_class", "start", "end", "global_tid", "row"]
        if not self.dense:
            calls = calls.with_columns(classes(calls).alias("event_class"))
            first = calls.sort([*key, *order]).unique(key, keep="first")
            keep = pl.repeat(False, calls.height, eager=True)
            return keep.scatter(first["row"], True)
        slot = self.slot(calls)
        table = pl.repeat(None, self.size, dtype=pl.Int64, eager=True)
        known = slot.is_not_null()
        rows = calls["row"].cast(pl.Int64)
        table = table.scatter(slot.filter(known), rows.filter(known))
        # an arbitrary row of each slot won; where a slot has several, choose properly
        lost = known & (table.gather(slot.fill_null(0)) != rows)
        if not lost.any():
            self.call_rows = table
            return pl.repeat(True, calls.height, eager=True)
        shared = slot.filter(lost).unique()
        tied = calls.with_columns(slot.alias("slot")).filter(pl.col("slot").is_in(shared.to_list()))
        tied = tied.with_columns(classes(tied).alias("event_class"))
        first = tied.sort(["slot", *order]).unique("slot", keep="first")
        table = table.scatter(first["slot"], first["row"].cast(pl.Int64))
        return ~known | (table.gather(slot.fill_null(0)) == rows)


def _innermost(calls: pl.DataFrame, marks: pl.DataFrame) -> pl.DataFrame:
    """Each call's innermost range by ``marks`` (one chunk's threads), range_id and
    range_end (null for calls on other threads, before any range, or between ranges): the
    range of the last mark of the call's thread at or before its start (key start * 4 + 3,
    after every mark at that instant). A candidate that ends before the call does is kept
    here; :func:`_refit` replaces it."""
    import polars as pl

    if marks.is_empty() or calls["start"].null_count() == calls.height:
        return pl.DataFrame(schema={"range_id": pl.Int64, "range_end": pl.Int64}).clear(
            calls.height
        )
    tids = marks["global_tid"].unique(maintain_order=True)
    call_key = calls["start"] * 4 + 3
    lo = min(marks["key"].min(), call_key.min())
    span = max(marks["key"].max(), call_key.max()) - lo + 1
    if tids.len() * span >= KEY_LIMIT:
        return _innermost_per_thread(calls, marks, tids)
    mark_rank = tids.search_sorted(marks["global_tid"]).cast(pl.Int64)
    mark_keys = mark_rank * span + (marks["key"] - lo)
    rank = _ranks(calls["global_tid"], tids)
    keys = rank * span + (call_key - lo)  # null: on none of the threads, or no start
    at = mark_keys.search_sorted(keys.fill_null(0), side="right").cast(pl.Int64) - 1
    found = keys.is_not_null() & (at >= 0) & (mark_rank.gather(at.clip(0, None)) == rank)
    index = pl.select(pl.when(found).then(at)).to_series()
    return pl.DataFrame(
        {"range_id": marks["open_id"].gather(index), "range_end": marks["open_end"].gather(index)}
    )


# Up to this many distinct keys, :func:`_ranks` compares each value with every key; above,
# it searches the sorted keys.
RANK_BY_COMPARISON = 16


def _ranks(values: pl.Series, keys: pl.Series) -> pl.Series:
    """Each value's position among ``keys`` (sorted, distinct), null where it is none of
    them (or null). The few processes or threads of a trace are compared one by one: on
    the 5M calls of the nest trace (4 processes, 8 threads) 0.04-0.05 CPU s a lookup where
    a binary search and the check of what it found took 0.09-0.14."""
    import polars as pl

    if keys.is_empty():
        return pl.repeat(None, values.len(), dtype=pl.Int64, eager=True)
    if keys.len() <= RANK_BY_COMPARISON:
        rank = pl.when(pl.col("v") == keys[0]).then(0)
        for i in range(1, keys.len()):
            rank = rank.when(pl.col("v") == keys[i]).then(i)
        return pl.DataFrame({"v": values}).select(rank.cast(pl.Int64)).to_series()
    at = keys.search_sorted(values.fill_null(0)).cast(pl.Int64).clip(0, keys.len() - 1)
    found = values.is_not_null() & (keys.gather(at) == values)
    return pl.select(pl.when(found).then(at)).to_series()


def _innermost_per_thread(calls: pl.DataFrame, marks: pl.DataFrame, tids: pl.Series):
    """:func:`_innermost` one thread at a time, where (thread, time) keys would overflow."""
    import polars as pl

    indexed = calls.with_row_index("row")
    found = []
    for tid in tids:
        mine = marks.filter(pl.col("global_tid") == tid)
        these = indexed.filter(pl.col("global_tid") == tid)
        at = mine["key"].search_sorted(these["start"] * 4 + 3, side="right").cast(pl.Int64) - 1
        index = pl.select(pl.when(at >= 0).then(at)).to_series()
        found.append(
            pl.DataFrame(
                {
                    "row": these["row"],
                    "range_id": mine["open_id"].gather(index),
                    "range_end": mine["open_end"].gather(index),
                }
            )
        )
    hits = pl.concat(found)
    return indexed.select("row").join(hits, on="row", how="left").drop("row")


def _refit(con, calls: pl.DataFrame, found: pl.DataFrame, overlapping: list[int]) -> pl.Series:
    """The calls' ranges: ``found`` (the sweep's candidates), its misfits replaced by their
    tightest container (``queries/_nvtx_call_refit.sql``): calls whose candidate ends
    before the call does, and calls with no candidate on a thread whose ranges overlap
    (start/end ranges: the marks then say only which range opened last)."""

    misfit = (found["range_end"] < calls["end"]).fill_null(False) | (
        found["range_id"].is_null() & calls["global_tid"].is_in(overlapping).fill_null(False)
    )
    range_id = found["range_id"]
    if not misfit.any():
        return range_id
    probes = calls.with_row_index("call").filter(misfit)
    con.register("nvtx_misfit_calls", probes.select("call", "global_tid", "start", "end"))
    try:
        fitted = con.execute(_resources.query("_nvtx_call_refit")).pl()
    finally:
        con.unregister("nvtx_misfit_calls")
    refit = probes.select("call").join(fitted, on="call", how="left", maintain_order="left")
    return range_id.scatter(probes["call"], refit["range_id"])
