"""The GPU work the report reads once per trace and shares between its sections: the
kernels' busy time, the step search and util (:mod:`.timekeeping`), the census table and
the timeline's kernel categories and overview bins (:mod:`tracelens.activity`). On a
5M-kernel export each read of the kernel table costs about a census, and the sections used
to read it about eight times."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..trace import Trace

# The census from the work read: kernel_summary's name kinds that work_in_order carries
# (mangled names are not read; that census reads the trace).
SHARED_NAME_KINDS = ("demangled", "short")


def read_work(trace: Trace) -> pl.DataFrame:
    """Every GPU operation of the trace (``queries/work_in_order.sql``), sorted as
    :func:`tracelens.util.work_in_order` sorts it, with the stream kept: the timeline's
    lanes are (device, stream). Hand ``work.drop("stream")`` to util and the step search."""
    from ..filters import EventFilter

    params = {"selection": None, **EventFilter().params()}
    return _in_order(trace.query("work_in_order", **params))


def _in_order(work: pl.DataFrame) -> pl.DataFrame:
    """``work`` sorted by util.ORDER (device, start_ns, stream, end_ns, kind). Device and
    start are packed into one Int64 key when they fit and hold no NULL: polars sorts 5M
    rows on (key, stream, end_ns, kind) in ~0.8 CPU s, on the five columns in ~1.25."""
    import polars as pl

    from ..util import ORDER

    device, start = pl.col("device"), pl.col("start_ns")
    bounds = work.select(
        device.min().alias("d0"),
        device.max().alias("d1"),
        start.min().alias("s0"),
        start.max().alias("s1"),
        (device.null_count() + start.null_count()).alias("nulls"),
    )
    d0, d1, s0, s1, nulls = bounds.row(0)
    if nulls or d0 is None or s0 is None or (d1 - d0 + 1) * (s1 - s0 + 1) >= 2**63:
        return work.sort(ORDER)
    key = (device.cast(pl.Int64) - d0) * (s1 - s0 + 1) + (start - s0)
    return work.sort([key, *ORDER[2:]])


BATCH_ROWS = 1 << 17  # rows per record batch of for_duckdb's table


def for_duckdb(work: pl.DataFrame) -> pa.Table:
    """``work`` as the Arrow table the report's queries scan (no copy): in record batches,
    which DuckDB scans in parallel; a registered polars frame is one batch and is converted
    again by every query (census of 5M kernels: 0.3 against 0.85 CPU s)."""
    import pyarrow as pa

    return pa.Table.from_batches(work.to_arrow().to_batches(max_chunksize=BATCH_ROWS))


def census(trace: Trace, work: pa.Table, name_kind: str) -> pl.DataFrame:
    """:meth:`Trace.census` (``name=name_kind``, demangled or short) of the kernels in
    ``work`` (:func:`for_duckdb` of :func:`read_work`): the same rows, without reading the
    trace (``queries/report_kernel_summary.sql``)."""
    from ..activity import registered_work

    with registered_work(trace, work) as source:
        return trace.query("report_kernel_summary", work=source, name_kind=name_kind)
