"""What the timeline reads of the GPU work the page read once (:func:`.sharedread.for_duckdb`'s
table: kind, device, stream, start_ns, end_ns, name_id, short_id), in polars, instead of the
trace: its kernels' name ids, its span and size (a selection's), whether a window holds too
many operations to draw, and its time bins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import activity

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..trace import Trace


def more_than(work: pa.Table | None, w0: int, w1: int, limit: int) -> bool:
    """Whether ``work`` (None: not read) holds more than ``limit`` kernels, memcpys and
    memsets in the window [w0, w1), as :func:`tracelens.activity.gpu_operations` selects
    them: then the detail window is binned without reading its operations (on the 5M-kernel
    trace, read directly: ~0.9 CPU s)."""
    if work is None:
        return False
    import polars as pl

    from ..filters import in_window

    frame = pl.from_arrow(work, rechunk=False).lazy()
    window = (pl.col("kind") <= 2) & in_window(pl.col("start_ns"), pl.col("end_ns"), w0, w1)
    return frame.filter(window).select(pl.len()).collect().item() > limit


def read_bins(
    trace: Trace,
    t0: int,
    t1: int,
    bins: int,
    name_kind: str,
    cats: activity.KernelCategories,
    work: pa.Table | None,
) -> pl.DataFrame:
    """:func:`tracelens.activity.activity_bins`: from the GPU work already read, in polars
    (:func:`.bins.work_bins`, the same rows), else read from the trace."""
    if work is None:
        return activity.activity_bins(trace, t0, t1, bins, name=name_kind, categories=cats)
    from .bins import work_bins

    return work_bins(work, t0, t1, bins, cats, name_kind)


def work_span(work: pa.Table) -> tuple[int, int] | None:
    """:func:`tracelens.activity.gpu_span` of the kernels, memcpys and memsets in ``work``
    (a selection's): their first start and last end (at least 1 µs); None without any."""
    import polars as pl

    ops = pl.from_arrow(work, rechunk=False).lazy().filter(pl.col("kind") <= 2)
    t0, t1 = ops.select(pl.col("start_ns").min(), pl.col("end_ns").max()).collect().row(0)
    if t0 is None:
        return None
    return (t0, t1) if t1 > t0 else (t0, t0 + 1000)


def operation_count(work: pa.Table) -> int:
    """The kernels, memcpys and memsets in ``work``."""
    import polars as pl

    ops = pl.from_arrow(work, rechunk=False).lazy().filter(pl.col("kind") <= 2)
    return ops.select(pl.len()).collect().item()


def kernel_ids(work: pa.Table | None, name_ids: pl.DataFrame | None = None) -> pl.DataFrame | None:
    """The distinct name ids of ``work``'s kernels (kind, name_id, short_id; a few hundred
    rows), for :func:`tracelens.activity.kernel_categories`: its query then scans those,
    not the millions of operations (5M: 0.2 -> 0.1 CPU s). ``name_ids``: those ids of the
    page's name kind, one row each in its ``name_id`` column, when already known (the
    census's kernels, :func:`.sharedread.census_and_kernels`, grouped by that id): taken as
    both name_id and short_id, whichever the query reads, instead of a scan of the work
    (5M operations: ~0.045 CPU s)."""
    if work is None:
        return None
    import polars as pl

    if name_ids is not None:
        ids = pl.col("name_id").cast(pl.Int64)
        return name_ids.select(pl.lit(0, pl.Int8).alias("kind"), ids, ids.alias("short_id"))
    kernels = pl.from_arrow(work, rechunk=False).lazy().filter(pl.col("kind") == 0)
    return kernels.select("kind", "name_id", "short_id").unique().collect()
