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
    """``work`` sorted by util.ORDER (device, start_ns, stream, end_ns, kind), as
    :func:`tracelens.util.work_in_order` sorts it (one packed device-start key, then only
    the rows that start together by stream, end and kind), gathered one column at a time,
    each dropped once copied: the sort holds one column twice, not the whole read (~400 MB
    on a 5M-kernel trace). A NULL device or start (nsys writes none) sorts by ORDER."""
    import polars as pl

    from ..util import ORDER, _break_ties, _device_start_order

    nulls = work.select(pl.col("device").null_count() + pl.col("start_ns").null_count()).item()
    if nulls:
        return work.sort(ORDER)
    order = _break_ties(work, _device_start_order(work))
    columns = []
    for name in work.columns:
        columns.append(work.get_column(name).gather(order))
        work = work.drop(name)
    return pl.DataFrame(columns)


# What the census and the timeline read of the work (as for_duckdb's table): the rest is
# dropped once util and the steps are done with it.
SHARED_COLUMNS = ("kind", "device", "stream", "start_ns", "end_ns", "name_id", "short_id")


BATCH_ROWS = 1 << 17  # rows per record batch of for_duckdb's table


def for_duckdb(work: pl.DataFrame) -> pa.Table:
    """``work`` as the Arrow table the report's queries scan (no copy): in record batches,
    which DuckDB scans in parallel; a registered polars frame is one batch and is converted
    again by every query (census of 5M kernels: 0.3 against 0.85 CPU s)."""
    import pyarrow as pa

    table = work.select(SHARED_COLUMNS).to_arrow()
    return pa.Table.from_batches(table.to_batches(max_chunksize=BATCH_ROWS))


def census(trace: Trace, work: pa.Table, name_kind: str) -> pl.DataFrame:
    """:meth:`Trace.census` (``name=name_kind``, demangled or short) of the kernels in
    ``work`` (:func:`for_duckdb` of :func:`read_work`): the same rows, without reading the
    trace (``queries/report_kernel_summary.sql``)."""
    from ..activity import registered_work

    with registered_work(trace, work) as source:
        return trace.query("report_kernel_summary", work=source, name_kind=name_kind)
