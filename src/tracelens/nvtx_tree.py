"""The NVTX range tree of one chunk of threads in polars, when its ranges nest properly (every
push/pop range does): the rows ``queries/_nvtx_tree.sql`` gives them, without its joins.

Per thread, a range's depth (:func:`tracelens.nvtx_sweep.depths`) counts the ranges open
when it started; its candidate parent is the latest-starting range one level up (the ASOF
join of ``_nvtx_tree.sql``, here polars' ``join_asof``). When every candidate contains its
range and every range below the top has one, the query keeps the candidates as parents and
the depths as levels, and so does :func:`nested`; otherwise (start/end ranges that overlap,
ranges without a thread) it returns None and the query refits the chunk. On the 5M-kernel
nest trace's 250k ranges the query took ~0.8 CPU s of nvtx --gpu's tree step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# nvtx_tree's columns, in the order the table has them (nvtx.TREE_COLUMNS)
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
