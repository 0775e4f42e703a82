"""The timeline's time bins (``queries/activity_bins.sql``'s rows) computed in polars from
the GPU work the report has already read (:mod:`.sharedread`), sorted and in memory: the
query scans the registered relation in DuckDB at about 1 CPU s on 5M operations, cached
or not; vectorized polars over the same columns costs a fraction of that. The arithmetic
is the query's, operation for operation (the same IEEE double expressions), so each
event's share of a bin is the same number; only the order of the sums differs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..activity import KernelCategories

KERNEL, MEMCPY, MEMSET = 0, 1, 2  # kinds of queries/work_in_order.sql that the bins draw
# Name ids up to this many are looked up in a table indexed by id (4 bytes each: 16 MB at
# most); above, and for negative ids, they are matched one by one (replace_strict).
LOOKUP_IDS = 1 << 22


def work_bins(
    work: pa.Table | pl.DataFrame,
    t0: int,
    t1: int,
    bins: int,
    categories: KernelCategories,
    name_kind: str,
) -> pl.DataFrame:
    """:func:`tracelens.activity.activity_bins` of ``work`` (work_in_order.sql's columns):
    device, stream, bin, category, busy_ns, events, in its order."""
    import polars as pl

    from ..filters import in_window

    frame = work if isinstance(work, pl.DataFrame) else pl.from_arrow(work, rechunk=False)
    kind, start, end = pl.col("kind"), pl.col("start_ns"), pl.col("end_ns")
    name_id = "short_id" if name_kind == "short" else "name_id"
    # Categories as small integers while the millions of rows are binned, named after.
    names = sorted({*categories.categories, "other", "memcpy", "memset"})
    code = {name: i for i, name in enumerate(names)}
    category = (
        pl.when(kind == KERNEL)
        .then(
            _kernel_codes(
                frame,
                name_id,
                categories.name_ids,
                [code[c] for c in categories.categories],
                code["other"],
            ).fill_null(code["other"])
        )
        .when(kind == MEMCPY)
        .then(pl.lit(code["memcpy"], pl.Int32))
        .otherwise(pl.lit(code["memset"], pl.Int32))
    )
    bw = (t1 - t0) / bins  # as the query's ($t1 - $t0)::DOUBLE / $bins
    s = pl.max_horizontal(start, pl.lit(t0))
    e = pl.min_horizontal(pl.max_horizontal(end, start), pl.lit(t1))
    events = (
        frame.lazy()
        .filter(kind.is_in((KERNEL, MEMCPY, MEMSET)) & in_window(start, end, t0, t1))
        .select(
            "device",
            "stream",
            category.alias("category"),
            s.alias("s"),
            e.alias("e"),
            (start >= t0).alias("starts_here"),
        )
        .with_columns(
            b0=_bin_of(pl.col("s"), t0, bw, bins),
            b1=_bin_of(pl.max_horizontal(pl.col("e") - 1, pl.col("s")), t0, bw, bins),
        )
    )
    one = events.filter(pl.col("b0") == pl.col("b1")).with_columns(bin=pl.col("b0"))
    # The few events that cover several bins, once per bin.
    several = (
        events.filter(pl.col("b0") != pl.col("b1"))
        .with_columns(bin=pl.int_ranges(pl.col("b0"), pl.col("b1") + 1))
        .explode("bin")
    )
    lo = t0 + pl.col("bin").cast(pl.Float64) * bw
    hi = t0 + (pl.col("bin") + 1).cast(pl.Float64) * bw
    share = (
        pl.min_horizontal(pl.col("e").cast(pl.Float64), hi)
        - pl.max_horizontal(pl.col("s").cast(pl.Float64), lo)
    ).clip(lower_bound=0.0)
    return (
        pl.concat([one, several])
        .group_by("device", "stream", "bin", "category")
        .agg(
            busy_ns=share.sum(),
            events=((pl.col("bin") == pl.col("b0")) & pl.col("starts_here")).sum().cast(pl.Int64),
        )
        .with_columns(category=pl.col("category").replace_strict(range(len(names)), names))
        .sort("device", "stream", "bin", "category", nulls_last=True)
        .collect()
    )


def _kernel_codes(
    frame: pl.DataFrame, column: str, ids: list[int], codes: list[int], other: int
) -> pl.Expr:
    """The category code of each row's name id in ``column`` (``codes[i]`` for ``ids[i]``,
    else ``other``; NULL for a NULL id): gathered from a table indexed by id when the ids
    are small non-negative integers, as StringIds ids are (5M kernels: ~0.03 CPU s against
    ~0.16 for replace_strict's match of every row)."""
    import polars as pl

    low, high = frame.select(low=pl.col(column).min(), high=pl.col(column).max()).row(0)
    top = max([high if high is not None else -1, *ids]) + 1
    if (low is not None and low < 0) or any(i < 0 for i in ids) or top > LOOKUP_IDS:
        return pl.col(column).replace_strict(ids, codes, default=other, return_dtype=pl.Int32)
    table = pl.repeat(other, top, dtype=pl.Int32, eager=True).scatter(ids, codes)
    return pl.lit(table).gather(pl.col(column))


def _bin_of(t: pl.Expr, t0: int, bw: float, bins: int) -> pl.Expr:
    """least(floor((t - $t0) / bw), $bins - 1)::BIGINT, as the query computes it."""
    import polars as pl

    return ((t - t0).cast(pl.Float64) / bw).floor().clip(upper_bound=bins - 1).cast(pl.Int64)
