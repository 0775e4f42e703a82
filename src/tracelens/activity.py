"""GPU activity over time, at the size of a picture: busy time per lane (device, stream) and
category in equal time bins, the operations of a short window one by one, and the NVTX
ranges of a window. The report's timeline draws these.

Everything is aggregated in DuckDB: a trace of millions of kernels becomes at most
lanes x bins x categories rows, and a window is read with its limit. The names and the bins
take ``work``: the GPU operations a caller has already read
(:func:`tracelens.util.work_in_order`'s rows with their stream, a polars frame or an Arrow
table), so that they read no table of the trace again. Kernels are colored by
the category of their name (:mod:`tracelens.categories`), each distinct name classified once.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .census import check_name_kind

if TYPE_CHECKING:
    from collections.abc import Iterator

    import polars as pl
    import pyarrow as pa

    from .filters import EventFilter
    from .trace import Trace

    # GPU operations already read: a frame, or an Arrow table of it (DuckDB scans a table
    # of many record batches in parallel, and a polars frame converted again each query)
    Work = pl.DataFrame | pa.Table

__all__ = [
    "KernelCategories",
    "NvtxRanges",
    "activity_bins",
    "gpu_operations",
    "gpu_span",
    "kernel_categories",
    "nvtx_ranges",
    "registered_work",
]

_GPU_KINDS = ("kernel", "memcpy", "memset")
NVTX_TABLE = "NVTX_EVENTS"


@dataclass(frozen=True)
class KernelCategories:
    """Every distinct kernel name id of a trace (of one name kind) and its category."""

    name_ids: list[int]
    categories: list[str]


@dataclass(frozen=True)
class NvtxRanges:
    """``frame``: start, end (ns from session start), label, tid (globalTid), earliest
    first; ``more``: True when ranges beyond the limit were left out."""

    frame: pl.DataFrame
    more: bool


def gpu_span(trace: Trace) -> tuple[int, int] | None:
    """(first start, last end) of the kernels, memcpys and memsets, ns from session start
    (at least 1 µs long); None when the trace has no GPU operation."""
    events = [e for e in trace.info.events if e.kind in _GPU_KINDS and e.first_ns is not None]
    if not events:
        return None
    t0 = min(e.first_ns for e in events)
    t1 = max(e.last_ns for e in events)
    return (t0, t1) if t1 > t0 else (t0, t0 + 1000)


WORK_RELATION = "activity_work"  # the name ``work`` is registered under in DuckDB


@contextmanager
def registered_work(trace: Trace, work: Work | None) -> Iterator[str]:
    """Within the block, ``work`` (rows with work_in_order.sql's columns) is the DuckDB
    relation whose name this yields, for a query's ``$work`` parameter; None: 'trace', the
    query's own read of the trace's views."""
    if work is None:
        yield "trace"
        return
    con = trace.db
    # DuckDB takes a registered frame for about one row (no cardinality estimate), so it
    # would build its hash joins on the millions of operations and probe them with the
    # few hundred kernel names (~0.7 CPU s more per query on 5M operations): joins here
    # build on the side the query puts on the right, as written.
    before = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0]
    off = ",".join(filter(None, [before, "join_order", "build_side_probe_side"]))
    con.register(WORK_RELATION, work)
    con.execute(f"SET disabled_optimizers = '{off}'")  # our own constants
    try:
        yield WORK_RELATION
    finally:
        con.execute("SET disabled_optimizers = $before", {"before": before})
        con.unregister(WORK_RELATION)


def kernel_categories(
    trace: Trace, *, name: str = "demangled", work: Work | None = None
) -> KernelCategories:
    """The category of every distinct kernel name (of kind ``name``: demangled or short),
    classified once each. ``work``: the trace's GPU operations, already read (see the
    module docstring)."""
    from .categories import classify_column

    check_name_kind(name)
    if not trace.has_kernels():
        return KernelCategories([], [])
    with registered_work(trace, work) as source:
        df = trace.query("activity_kernel_names", name_kind=name, work=source)
    cats = classify_column(df["name"])["category"].to_list()
    return KernelCategories(df["name_id"].to_list(), cats)


def activity_bins(
    trace: Trace,
    t0: int,
    t1: int,
    bins: int,
    *,
    name: str = "demangled",
    categories: KernelCategories | None = None,
    work: Work | None = None,
) -> pl.DataFrame:
    """GPU busy time over [t0, t1) in ``bins`` equal bins per lane and category: device,
    stream, bin, category (kernel category, or memcpy / memset), busy_ns, events (that start
    in the bin). See ``queries/activity_bins.sql``. ``categories``: from
    :func:`kernel_categories` (computed when not given). ``work``: the trace's GPU operations,
    already read (see the module docstring)."""
    cats = categories or kernel_categories(trace, name=name, work=work)
    _install_categories(trace, cats)
    with registered_work(trace, work) as source:
        return trace.query("activity_bins", t0=t0, t1=t1, bins=bins, name_kind=name, work=source)


def _install_categories(trace: Trace, cats: KernelCategories) -> None:
    """The temp table activity_categories(name_id, category) that activity_bins joins.
    A table, not list parameters: DuckDB converts a bound list element by element in
    Python, which is slow for the million distinct names some traces have."""
    import pyarrow as pa

    table = pa.table(
        {
            "name_id": pa.array(cats.name_ids, pa.int64()),
            "category": pa.array(cats.categories, pa.string()),
        }
    )
    con = trace.db
    con.register("_activity_categories", table)
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE activity_categories AS SELECT * FROM _activity_categories"
        )
    finally:
        con.unregister("_activity_categories")


def gpu_operations(
    trace: Trace,
    t0: int,
    t1: int,
    *,
    limit: int,
    name: str = "demangled",
    where: EventFilter | None = None,
) -> pl.DataFrame:
    """The first ``limit`` GPU operations in the window [t0, t1) (nsys's rule,
    :func:`tracelens.filters.in_window`) that pass ``where`` (default: all), one row each
    (kind, device, stream, start, end, name_id, name, detail, bytes, grid, block; see
    ``queries/activity_operations.sql``)."""
    from .filters import EventFilter, in_window_sql

    check_name_kind(name)
    # Read directly, SQLite picks the window's kernels out (their rows as in_window keeps
    # them), so DuckDB's scanner converts a few hundred rows, not every kernel's ten
    # columns (a steady step of the 5M-kernel trace: ~2 CPU s otherwise).
    window = in_window_sql(t0, t1)
    with trace._kernels_where(window):
        return trace.query(
            "activity_operations", t0=t0, t1=t1, limit=limit, name_kind=name,
            **(where or EventFilter()).params(),
        )  # fmt: skip


def nvtx_ranges(trace: Trace, t0: int, t1: int, *, min_ns: int = 0, limit: int) -> NvtxRanges:
    """The NVTX ranges in the window [t0, t1) (nsys's rule) that last at least ``min_ns``,
    earliest first, at most ``limit`` of them. A trace without an NVTX table has none: not
    queried, since loading its (empty) NVTX table prepares views of the export's other
    tables, whose first read through SQLite costs a cached trace ~0.09 CPU s (5M kernels)."""
    if NVTX_TABLE not in trace.tables:
        import polars as pl

        # queries/activity_nvtx_ranges.sql's columns, their types as the query gives them
        columns = {"start": pl.Int64, "end": pl.Int64, "label": pl.String, "tid": pl.Int64}
        return NvtxRanges(pl.DataFrame(schema=columns), False)
    trace.load_nvtx_text()
    df = trace.query("activity_nvtx_ranges", t0=t0, t1=t1, min_ns=min_ns, limit=limit + 1)
    return NvtxRanges(df.head(limit), df.height > limit)
