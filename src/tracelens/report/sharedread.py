"""The GPU work the report reads once per trace and shares between its sections: the
GPU busy time, the step search and util (:mod:`.timekeeping`), the census table, the
line-up's kernels and the timeline's kernel categories and overview bins (:mod:`tracelens.activity`). On a
5M-kernel export each read of the kernel table costs about a census, and the sections used
to read it about eight times."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..filters import EventFilter
    from ..trace import Trace

# The census from the work read: kernel_summary's name kinds that work_in_order carries
# (mangled names are not read; that census reads the trace).
SHARED_NAME_KINDS = ("demangled", "short")


def read_work(trace: Trace, short: bool = True, where: EventFilter | None = None) -> pl.DataFrame:
    """Every GPU operation of the trace (:func:`tracelens.util.work_in_order`), with the
    stream kept: the timeline's lanes are (device, stream). Hand ``work.drop("stream")`` to
    util and the step search. ``short``: read the kernels' short name ids, which only a
    page by short name reads (else short_id is NULL: the 5M-kernel export's shortName
    column, read directly, is ~0.25 CPU s of the read's ~2). ``where``: the operations it
    selects (None: all)."""
    from ..filters import EventFilter
    from ..util import _kept_whole, in_order

    where = where or EventFilter()
    rows = trace.query("work_in_order", any_order=True, **where.params(), grid=False, short=short)
    if where.is_whole():
        _kept_whole(trace, rows)  # as work_in_order tells the trace of a whole read
    return in_order(rows, drop=("blocks",))


def cached_read(trace: Trace, name_kind: str) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """On a trace whose cache entry keeps the diff's read of its GPU work (an earlier diff,
    or a report of two traces, kept it: :func:`tracelens.compare.workfile.holds`):
    (:func:`read_work`'s rows with each operation's ``launch_start``, the census by
    ``name_kind``), read back as the diff reads them
    (:func:`tracelens.compare.collect.read_work`); util then reads the figures of the CUDA
    API calls instead of every call. On the 5M-kernel trace, cached: ~0.3 CPU s where
    reading, sorting and a census of the work cost ~1.9, and util ~0.45 less. None
    elsewhere: a direct read, mangled names, or an entry without that read, which the page
    does not make and keep for the diff (:func:`read_work` instead: making the diff's read,
    with each launch's grid and launching call, and writing it cost the first cached
    report of the 5M-kernel trace ~2.2 CPU s more; the page itself is kept, :mod:`.kept`)."""
    from ..compare.collect import read_work as diff_read
    from ..compare.workfile import holds
    from ..filters import EventFilter
    from ..util_workfile import keeps

    if name_kind not in SHARED_NAME_KINDS or not keeps(trace):
        return None
    # (an entry the first read of the trace is still to make holds nothing; holds() needs one)
    if trace._lazy.entry is None or not holds(trace):
        return None
    # (it tells the trace the records it kept, as work_in_order: the damage count reads no rows)
    work, kernels, _, _ = diff_read(trace, EventFilter(), name_kind, keep_stream=True)
    return work, kernels.drop("name_id", "avg_blocks")


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
    # (the schema: a selection may hold no operation, and no batch)
    return pa.Table.from_batches(table.to_batches(max_chunksize=BATCH_ROWS), schema=table.schema)


def reads_export(trace: Trace, table: str, columns: tuple[str, ...]) -> bool:
    """Whether ``trace``'s ``table`` (its nsys name) is read from its SQLite export, with
    ``columns``, so that SQLite can aggregate it itself (not a cache entry or a parquetdir,
    where DuckDB's reads are cheap)."""
    _ = trace.db  # opening the connection decides whether a cache entry serves the trace
    direct = trace._sqlite is not None and trace.parquet_dir is None
    cached = trace._lazy is not None and not trace._lazy.off
    present = trace.tables.get(table, ())
    return direct and not cached and set(columns) <= set(present)


# report_kernel_summary.sql's columns after the census's: each name id's launches and
# summed time, the line-up's kernels on a page by demangled name (report_lineup_kernels.sql)
KERNEL_COLUMNS = ("name_id", "launches", "summed_ns")


def census(trace: Trace, work: pa.Table, name_kind: str) -> pl.DataFrame:
    """:meth:`Trace.census` (``name=name_kind``, demangled or short) of the kernels in
    ``work`` (:func:`for_duckdb` of :func:`read_work`): the same rows, without reading the
    trace (``queries/report_kernel_summary.sql``)."""
    return census_and_kernels(trace, work, name_kind)[0]


def census_and_kernels(
    trace: Trace, work: pa.Table, name_kind: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(:func:`census`, each of its name ids' launches and summed time: KERNEL_COLUMNS),
    from one scan of ``work``; the second is :func:`lineup_activities`' ``kernels`` on a
    page by demangled name."""
    from ..activity import registered_work

    with registered_work(trace, work) as source:
        rows = trace.query("report_kernel_summary", work=source, name_kind=name_kind)
    return rows.drop(KERNEL_COLUMNS), rows.select(KERNEL_COLUMNS)


def lineup_activities(
    trace: Trace, work: pa.Table, name_kind: str, kernels: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The input of :func:`tracelens.lineup.category_summary` of the whole trace
    (``queries/lineup_activities.sql``'s rows, ``name_kind`` demangled or short), its
    kernels from ``work`` (:func:`for_duckdb` of :func:`read_work`) instead of the
    trace's kernel table (``queries/report_lineup_activities.sql``); by demangled name,
    from ``kernels`` when given (:func:`census_and_kernels` of ``work``:
    ``queries/report_lineup_kernels.sql``, no second scan of the millions of operations,
    ~0.2 CPU s on the 5M-kernel trace)."""
    from ..activity import registered_work

    if kernels is not None and name_kind == "demangled":
        with registered_work(trace, kernels) as source:
            return trace.query("report_lineup_kernels", kernels=source)
    with registered_work(trace, work) as source:
        return trace.query("report_lineup_activities", work=source, name_kind=name_kind)
