"""Where util accounts the time of an ``--nvtx`` selection: the GPU projection of the
selected NVTX ranges, per device (``queries/util_projection.sql``: from the first GPU
operation launched inside a range to the end of the last, as nsys's nvtx_gpu_proj).

Why: ranges that cover a tenth of a capture, with other work between them, are a selection
whose window (the first selected operation's start to the last one's end) is mostly time
the GPU spent on work the selection left out, or on nothing the ranges asked for. Counting
it as idle (launch_bound, mostly) says the selected code starved the GPU where it did not
run at all. Inside the projection every figure is as before; outside it nothing is
counted: a device's span is the time its projection covers, and an idle gap counts only
for its part inside it (:func:`inside`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .filters import EventFilter
    from .trace import Trace

__all__ = ["covered_ns", "inside", "projection", "stretch"]


def projection(trace: Trace, where: EventFilter, t0: int, t1: int) -> pl.DataFrame | None:
    """The GPU projection of ``where``'s NVTX selection inside the window [t0, t1], per
    device: device, a, b (disjoint intervals, by device and a) and before (the projection
    time of the device's earlier intervals, ns); None when ``where`` selects no NVTX ranges
    (no --nvtx: util accounts over the whole window)."""
    import polars as pl

    label_re = where.nvtx_label_re
    if where.selection is None or label_re is None:
        return None
    trace.load_nvtx_text()
    rows = trace.query("util_projection", any_order=True, label_re=label_re, **where.params())
    clipped = rows.select(
        "device",
        a=pl.col("start_ns").clip(lower_bound=t0, upper_bound=t1),
        b=pl.col("end_ns").clip(lower_bound=t0, upper_bound=t1),
    ).sort("device", "a", "b")
    # merged per device: an interval starts an island when it starts after the latest end
    # of the device's earlier ones
    reach = pl.col("b").cum_max().over("device")
    opens = (pl.col("a") > reach.shift(1).over("device")).fill_null(True)
    merged = (
        clipped.with_columns(island=opens.cast(pl.Int64).cum_sum())
        .group_by("device", "island")
        .agg(pl.col("a").min(), pl.col("b").max())
        .sort("device", "a")
    )
    length = pl.col("b") - pl.col("a")
    return merged.select("device", "a", "b", before=(length.cum_sum() - length).over("device"))


def inside(intervals: pl.DataFrame, times: pl.Series) -> pl.Series:
    """The projection time before each of ``times`` (ns) of one device whose projection is
    ``intervals`` (a, b, before; disjoint, by a): the time of [lo, hi] inside the projection
    is ``inside(hi) - inside(lo)``."""
    import polars as pl

    if intervals.is_empty():
        return pl.Series(times.name, [0] * len(times), dtype=pl.Int64)
    row = intervals["a"].search_sorted(times, side="right").cast(pl.Int64) - 1
    found = intervals.select(pl.col("a", "b", "before").gather(row.clip(lower_bound=0)))
    return found.select(
        pl.when(row >= 0)
        .then(pl.col("before") + (pl.min_horizontal(times, pl.col("b")) - pl.col("a")))
        .otherwise(0)
        .alias(times.name)
    ).to_series()


def stretch(intervals: pl.DataFrame, lo: int, hi: int) -> int:
    """The time of [lo, hi] inside one device's projection ``intervals``, ns."""
    import polars as pl

    at = inside(intervals, pl.Series("t", [lo, hi], dtype=pl.Int64))
    return int(at[1] - at[0])


def covered_ns(intervals: pl.DataFrame) -> int:
    """The time some device's projection covers (the union over devices), ns."""
    import polars as pl

    from .util_sweep import union_ns

    once = intervals.select(pl.lit(0).alias("device"), s="a", e="b").sort("s")
    return union_ns(once)
