"""Kernels per NVTX range group (``nsys stats`` nvtx_kern_sum) from the sweep's innermost
ranges: each kernel is paired with every range holding its launch, the statistics are
taken per (group, launching thread, kernel name), rounded, named and sorted (by the ranks
``queries/nvtx_kernel_names.sql`` gives the names, not by the text of 4M rows: on the
5M-kernel benchmark, whose PyTorch labels are unique per op, a DuckDB ORDER BY of the named
rows took 3.3 CPU s and 1 GB).

No kernel meets a range in a join of intervals: the sweep (:mod:`tracelens.nvtx_sweep`)
gave each kernel its innermost range, ``queries/_nvtx_kernel_holders.sql`` lists the ranges
holding each innermost range once, and the kernels meet that list by their range_id. The
pairs (kernels x nesting depth: 15M on the 5M-kernel benchmark) are made and aggregated a
batch of groups at a time in polars, so that memory holds one batch; a DuckDB aggregate of
all of them with a median and a DISTINCT per group (4M groups there, PyTorch labels being
unique per op) took 40-150 CPU s and 7-15 GB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _resources, nvtx_sweep

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

# (kernel, holding range) pairs aggregated at once at most (a group is never split: one
# with more pairs is a batch of its own)
PAIRS_PER_BATCH = 1_000_000
KEYS = ["gid", "global_tid", "name_id"]


COLUMNS = ("range", "style", "pid", "tid", "ranges", "kernels", "total_ns", "avg_ns", "med_ns",
           "min_ns", "max_ns", "stddev_ns", "name")  # fmt: skip


def summary(trace: Trace, *, group: str, name: str, top: int | None = None) -> pl.DataFrame:
    """The rows of :func:`tracelens.nvtx.kernels_by_range`: :func:`register_stats`, rounded
    as DuckDB's round() does (half away from zero), named and ordered from
    ``queries/nvtx_kernel_names.sql`` (by range, pid, tid, total time largest first, kernel
    name; ranks, not text, are sorted); the first ``top`` rows of that order (None: all),
    only those named (4M named rows of the nest trace held 0.3 GB)."""
    import polars as pl

    stats = register_stats(trace, group=group, name=name)
    names = trace.query("nvtx_kernel_names")
    groups = names.filter(pl.col("gid").is_not_null())
    kernels = names.filter(pl.col("name_id").is_not_null())
    group_at = _positions(groups["gid"], stats["gid"])
    name_at = _positions(kernels["name_id"], stats["name_id"])

    def rounded(value: pl.Expr) -> pl.Expr:
        return value.round(1, mode="half_away_from_zero")

    pid = stats["global_tid"] // (1 << 24) % (1 << 24)  # pid_of and tid_of (_shared.sql)
    tid = stats["global_tid"] % (1 << 24)
    range_rank = groups["range_rank"].gather(group_at)
    name_rank = kernels["name_rank"].gather(name_at)
    order = _order(range_rank, pid * (1 << 24) + tid, stats["total_ns"], name_rank, top)
    group_at, name_at = group_at.gather(order), name_at.gather(order)
    # each column gathered into the output as it is made: no reordered copy of every stats
    # column first (0.35 GB on the 4M rows of the nest trace)
    in_order = {c: pl.col(c).gather(order) for c in stats.columns}
    return stats.select(
        groups["range"].gather(group_at).alias("range"),
        groups["style"].gather(group_at).alias("style"),
        pid.gather(order).alias("pid"),
        tid.gather(order).alias("tid"),
        in_order["ranges"],
        in_order["kernels"],
        in_order["total_ns"],
        rounded(in_order["total_ns"] / in_order["pairs"]).alias("avg_ns"),
        rounded(in_order["med_ns"]),
        in_order["min_ns"],
        in_order["max_ns"],
        rounded(in_order["stddev_ns"].fill_null(0.0)),
        kernels["name"].gather(name_at).alias("name"),
    )


def _order(
    range_rank: pl.Series,
    thread: pl.Series,
    total: pl.Series,
    name_rank: pl.Series,
    top: int | None = None,
) -> pl.Series:
    """The row order of ORDER BY range_rank, thread, total DESC, name_rank (NULLS LAST, as
    DuckDB's default), its first ``top`` rows (None: all): three stable sorts from the last
    key, the first two keys packed in one integer (one sort by the four keys of 4M rows took
    5.8 CPU s, these 1.1). With ``top``, only the rows whose first key is among the ``top``
    smallest are sorted (the rest cannot come first)."""
    import polars as pl

    thread_rank = thread.rank("dense").cast(pl.Int64)
    threads = (thread_rank.max() or 0) + 1
    ranges = (range_rank.max() or 0) + 1
    first = range_rank.fill_null(ranges) * (threads + 1) + thread_rank.fill_null(threads)
    keys = pl.DataFrame({"first": first, "total": total, "name": name_rank}).with_row_index()
    if top is not None and keys.height > top:
        # the filter keeps the rows' order, so the stable sorts break ties as on every row
        keys = keys.filter(pl.col("first") <= first.bottom_k(top).max())
    keys = keys.sort("name", nulls_last=True, maintain_order=True)
    keys = keys.sort("total", descending=True, nulls_last=True, maintain_order=True)
    order = keys.sort("first", maintain_order=True)["index"]
    return order if top is None else order.head(top)


def register_stats(trace: Trace, *, group: str, name: str) -> pl.DataFrame:
    """Per (range group, launching thread, kernel name), over the (kernel, holding range)
    pairs of ``group`` ('name', 'path', 'torch') and kernel names ``name`` ('demangled',
    'short'): gid (nvtx_range_groups; null: outside every range), global_tid, name_id,
    ranges, kernels, pairs, total_ns, med_ns, min_ns, max_ns, stddev_ns (see
    :func:`_stats`); also registered as ``nvtx_kernel_stats``, beside the temp tables
    nvtx_range_groups and nvtx_kernel_holders. Builds the sweep with the operations'
    columns (:func:`tracelens.nvtx.build_sweep`) where that is not done yet."""
    import polars as pl

    from .nvtx import build_sweep

    build_sweep(trace, with_ops=True)
    con = trace.db
    con.execute(_resources.query("_nvtx_range_groups"), {"group_by": group})
    con.execute(_resources.query("_nvtx_kernel_holders"))
    holders = con.execute("SELECT range_id, holder_id, gid, first FROM nvtx_kernel_holders").pl()
    kernels = con.execute(_resources.query("_nvtx_kernel_launches"), {"name_kind": name}).pl()
    overlap = con.execute(_resources.query("_nvtx_kernel_overlap_pairs"), {"name_kind": name}).pl()
    # every column of every operation, read now: freed for the pairs (0.4 GB on the 5M
    # operations of the nest trace); build_sweep(with_ops=True) reads them again if asked
    nvtx_sweep.drop_op_ranges(con)
    # kernels in no listed range (none, or none the holders know) form the NULL group
    listed = holders.select("range_id").unique()
    loose = kernels.join(listed, on="range_id", how="anti").select(
        pl.lit(None, pl.Int64).alias("gid"),
        "global_tid",
        "name_id",
        "dur_ns",
        pl.lit(None, pl.Int64).alias("holder_id"),
        pl.lit(True).alias("first"),
    )
    kernels = kernels.join(listed, on="range_id", how="semi")
    # no group spans two parts: the groups are per thread, and a thread's kernels are all
    # overlapping-thread pairs or all holders' pairs; the batches split by group
    parts = [_stats(pl.concat([loose, _as_pairs(overlap)], how="vertical_relaxed"))]
    for batch in _batches(kernels, holders):
        parts.append(_stats(kernels.join(batch, on="range_id", how="inner")))
    stats = pl.concat(parts, how="vertical_relaxed", rechunk=False)
    nvtx_sweep.register(con, "nvtx_kernel_stats", stats)
    return stats


def _as_pairs(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select("gid", "global_tid", "name_id", "dur_ns", "holder_id", "first")


def _batches(kernels: pl.DataFrame, holders: pl.DataFrame) -> list[pl.DataFrame]:
    """``holders`` split by group into batches whose pairs with ``kernels`` number at most
    PAIRS_PER_BATCH (a bigger group alone), from the kernels per innermost range."""
    import polars as pl

    per_range = kernels.group_by("range_id").len("kernels")
    per_group = (
        holders.join(per_range, on="range_id", how="inner")
        .group_by("gid")
        .agg(pl.col("kernels").sum())
        .sort("gid")
    )
    batch = []
    size = 0
    current = 0
    for pairs in per_group["kernels"]:
        if size and size + pairs > PAIRS_PER_BATCH:
            current += 1
            size = 0
        size += pairs
        batch.append(current)
    numbered = per_group.select("gid").with_columns(pl.Series("batch", batch, pl.Int64))
    tagged = holders.join(numbered, on="gid", how="inner")
    return [part.drop("batch") for part in tagged.partition_by("batch", maintain_order=True)]


def _stats(pairs: pl.DataFrame) -> pl.DataFrame:
    """Per (gid, global_tid, name_id) of ``pairs`` (gid, global_tid, name_id, dur_ns,
    holder_id, first): ranges (distinct holders), kernels (pairs marked first), pairs,
    total_ns, med_ns, min_ns, max_ns, stddev_ns (n - 1; null for one pair)."""
    import polars as pl

    dur = pl.col("dur_ns")
    return pairs.group_by(KEYS).agg(
        pl.col("holder_id").drop_nulls().n_unique().cast(pl.Int64).alias("ranges"),
        pl.col("first").sum().cast(pl.Int64).alias("kernels"),
        pl.len().cast(pl.Int64).alias("pairs"),
        dur.sum().alias("total_ns"),
        dur.median().alias("med_ns"),
        dur.min().alias("min_ns"),
        dur.max().alias("max_ns"),
        dur.std(ddof=1).alias("stddev_ns"),
    )


def _positions(keys: pl.Series, wanted: pl.Series) -> pl.Series:
    """Where each of ``wanted`` is in the sorted unique ``keys`` (null: not there)."""
    import polars as pl

    if keys.is_empty():
        return pl.repeat(None, wanted.len(), dtype=pl.Int64, eager=True)
    at = keys.search_sorted(wanted.fill_null(keys[0])).cast(pl.Int64)
    inside = at.clip(0, keys.len() - 1)
    found = wanted.is_not_null() & (at < keys.len()) & (keys.gather(inside) == wanted)
    return pl.select(pl.when(found).then(inside)).to_series()
