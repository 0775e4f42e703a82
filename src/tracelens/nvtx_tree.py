"""The NVTX range tree (the temp table nvtx_tree), and of one chunk of threads in polars
when its ranges nest properly (every push/pop range does): the rows
``queries/_nvtx_tree.sql`` gives them, without its joins.

Per thread, a range's depth (:func:`depths`) counts the ranges open when it started; its candidate parent is the latest-starting range one level up (the ASOF
join of ``_nvtx_tree.sql``, here polars' ``join_asof``). When every candidate contains its
range and every range below the top has one, the query keeps the candidates as parents and
the depths as levels, and so does :func:`nested`; otherwise (start/end ranges that overlap,
ranges without a thread) it returns None and the query refits the chunk. On the 5M-kernel
nest trace's 250k ranges the query took ~0.8 CPU s of nvtx --gpu's tree step.

:func:`build` makes the temp table nvtx_tree, the chunks of threads of
:func:`thread_chunks` one at a time (the NVTX sweep, :func:`tracelens.nvtx.build_sweep`,
starts with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

# nvtx_tree's columns, in the order the table has them (TREE_COLUMNS)
COLUMNS = ("range_id", "global_tid", "start", "end", "parent_id", "level", "depth")


def nested(ranges: pl.DataFrame) -> pl.DataFrame | None:
    """nvtx_tree's rows (:data:`COLUMNS`) for ``ranges`` (one chunk's rows of
    ``queries/_nvtx_chunk_spans.sql`` with their depths), or None when a range's candidate
    parent does not contain it, a range below the top has none, or a range has no thread:
    then ``queries/_nvtx_tree.sql`` must build the chunk's rows."""
    import polars as pl

    if ranges["global_tid"].null_count():
        return None
    by_start = ranges.sort("start")
    above = by_start.select(
        "global_tid",
        pl.col("depth").alias("up"),
        pl.col("range_id").alias("parent_id"),
        pl.col("start").alias("parent_start"),
        pl.col("end").alias("parent_end"),
    )
    below = by_start.with_columns((pl.col("depth") - 1).alias("up"))
    del by_start
    tree = below.join_asof(
        above,
        left_on="start",
        right_on="parent_start",
        by=["global_tid", "up"],
        strategy="backward",
        check_sortedness=False,  # sorted by start: so within every (thread, depth) too
    )
    del below, above
    orphan = pl.col("parent_id").is_null() & (pl.col("depth") > 0)
    outside = pl.col("parent_id").is_not_null() & (pl.col("parent_end") < pl.col("end"))
    if tree.select((orphan | outside).any()).item():
        return None
    return tree.select(*COLUMNS[:5], pl.col("depth").alias("level"), "depth")


def depths(spans: pl.DataFrame) -> pl.DataFrame:
    """The ranges of one chunk of threads (the rows of ``queries/_nvtx_chunk_spans.sql``)
    with depth: how many ranges of the thread were open when it started. A running count over the start (+1) and end (-1) events sorted per thread: at
    one instant ends first, then starts longest first, then the ends of empty ranges. A
    sort of two events per range in polars, where DuckDB's window over them needed ~0.5 GB
    per million ranges (10M ranges on 8 threads peaked at 2.3 GB in that step)."""
    import polars as pl

    # each event's range and kind in one column: row + 1 for a start, -(row + 1) for an end
    # (a chunk's rows fit in 32 bits: it holds one thread's ranges or at most 1M)
    event = pl.int_range(1, spans.height + 1, dtype=pl.Int32)
    starts = spans.select(
        "global_tid",
        pl.col("start").alias("t"),
        pl.lit(1, pl.Int8).alias("phase"),
        (-pl.col("end")).alias("tie"),
        "range_id",
        event.alias("event"),
    )
    ends = spans.select(
        "global_tid",
        pl.col("end").alias("t"),
        pl.when(pl.col("end") == pl.col("start")).then(2).otherwise(0).cast(pl.Int8).alias("phase"),
        (-pl.col("start")).alias("tie"),
        "range_id",
        (-event).alias("event"),
    )
    order = ["global_tid", "t", "phase", "tie", "range_id"]
    events = pl.concat([starts, ends])
    # only the event column is put in that order, the sort keys are not gathered with it
    # (on 1.25M ranges a sorted copy of every column held ~0.1 GB more)
    at = events.select(pl.arg_sort_by(order, nulls_last=True)).to_series()
    in_order = pl.DataFrame({"event": events["event"].gather(at)})
    del events, at
    # every thread's events sum to zero, so one running sum restarts at each thread
    open_before = in_order.select(
        (pl.col("event") - 1).alias("row"),
        (pl.col("event").sign().cum_sum() - 1).cast(pl.Int32).alias("depth"),
    ).filter(pl.col("row") >= 0)
    depth = pl.repeat(0, spans.height, dtype=pl.Int32, eager=True).scatter(
        open_before["row"], open_before["depth"]
    )
    return spans.with_columns(depth.alias("depth"))


# The sweeps (_nvtx_tree, _nvtx_marks) run over this many ranges at a time at most
# (threads are never split: one with more ranges is a chunk of its own), so that their sorts
# and joins need memory for one chunk, not for every range of the trace (10M ranges at once
# took 7.9 GB).
TREE_CHUNK_RANGES = 1_000_000


def thread_chunks(trace: Trace) -> list[dict]:
    """The chunks of threads the sweeps run over, as the parameters of in_thread_chunk
    (queries/_shared.sql): consecutive ranges of globalTid that together cover every thread
    (calls on threads without ranges too), each holding at most TREE_CHUNK_RANGES ranges or
    one thread; the ranges and calls without a thread go with the first."""
    counts = trace.db.execute(
        "SELECT global_tid, count(*) FROM nvtx_spans WHERE global_tid IS NOT NULL "
        "GROUP BY global_tid ORDER BY global_tid"
    ).fetchall()
    starts: list[int | None] = [None]  # the first chunk starts below every thread
    size = 0
    for tid, ranges in counts:
        if size and size + ranges > TREE_CHUNK_RANGES:
            starts.append(tid)
            size = 0
        size += ranges
    ends = [*starts[1:], None]
    return [
        {"from_tid": lo, "to_tid": hi, "null_tid": i == 0}
        for i, (lo, hi) in enumerate(zip(starts, ends, strict=True))
    ]


def build(trace: Trace, chunks: list[dict]) -> None:
    """The temp table nvtx_tree, one chunk of threads at a time: the chunk's ranges
    (``queries/_nvtx_chunk_spans.sql``) with their depths
    (:func:`depths`), then their parents and levels by :func:`nested` when they
    nest, else by ``queries/_nvtx_tree.sql``.
    Drops nvtx_spans, which only this reads."""
    from . import _resources, nvtx_sweep

    con = trace.db
    con.execute("DROP TABLE IF EXISTS nvtx_tree")
    con.execute(_tree_table(con))
    # every chunk's spans are taken out first and nvtx_spans freed, and each chunk's frame
    # is let go once its depths are made: the spans are not held whole while the tree
    # grows (10M ranges: 0.4 GB of table beside the 0.63 GB tree at the end of this step)
    query = _resources.query("_nvtx_chunk_spans")
    spans = [con.execute(query, params).pl() for params in chunks]
    con.execute("DROP TABLE nvtx_spans")
    for i in range(len(spans)):
        chunk, spans[i] = spans[i], None
        ranges = depths(chunk)
        del chunk
        # properly nested ranges (every push/pop range) need none of the query's joins
        rows = nested(ranges)
        if rows is not None:
            del ranges
            nvtx_sweep.register(con, "_nvtx_nested", rows)
            del rows
            con.execute("INSERT INTO nvtx_tree SELECT * FROM _nvtx_nested")
            con.unregister("_nvtx_nested")
            continue
        # a table, not the registered frame: DuckDB plans its ASOF self-join from the
        # table's row count (over a frame it may pick a nested loop: minutes on 400k ranges)
        con.register("_nvtx_depths", ranges)
        del ranges
        con.execute("CREATE OR REPLACE TEMP TABLE nvtx_depths AS SELECT * FROM _nvtx_depths")
        con.unregister("_nvtx_depths")
        sweep = _resources.query("_nvtx_tree")
        con.execute("INSERT INTO nvtx_tree SELECT * FROM (" + sweep + ")")
    con.execute("DROP TABLE IF EXISTS nvtx_depths")


# nvtx_tree's columns (queries/_nvtx_tree.sql says what each holds). Range ids are
# NVTX_EVENTS rowids, numbered from 1 by SQLite: 32 bits hold them unless an export has
# more than 4 billion rows or ids set by hand (then BIGINT); nesting levels fit in 32 bits.
# 40 bytes a range rather than 56: on 10M ranges the table holds 0.63 GB, not 0.79, through
# every NVTX step.
TREE_COLUMNS = (
    'range_id {id}, global_tid BIGINT, start BIGINT, "end" BIGINT, parent_id {id}, '
    "level INTEGER, depth INTEGER"
)
NARROW_RANGE_IDS = range(1 << 32)  # UINTEGER's


def _tree_table(con) -> str:
    """The CREATE of the empty nvtx_tree, its range ids as narrow as nvtx_spans' allow."""
    sql = "SELECT coalesce(min(range_id), 0), coalesce(max(range_id), 0) FROM nvtx_spans"
    low, high = con.execute(sql).fetchone()
    narrow = low in NARROW_RANGE_IDS and high in NARROW_RANGE_IDS
    columns = TREE_COLUMNS.format(id="UINTEGER" if narrow else "BIGINT")
    return f"CREATE TEMP TABLE nvtx_tree ({columns})"
