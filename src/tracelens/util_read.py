"""The reads of util's GPU work: :func:`read_work` (``queries/util_work.sql``, util's and
findings' one read) and :func:`work_in_order` (``queries/work_in_order.sql``, the launch
order the diff, the report and the step search share), each one query sorted by
:mod:`tracelens.util_order`, and the count of the records a whole read kept, which the
trace is told (its damage count then needs no scan of its own). :mod:`tracelens.util`
exports them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .filters import EventFilter
from .util_order import in_order, taken_by_device_start

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["kept_whole", "read_work", "record_counts", "unsorted_work", "work_in_order"]


def work_in_order(
    trace: Trace, where: EventFilter | None = None, *, keep_stream: bool = False
) -> pl.DataFrame:
    """Every GPU operation that passes ``where``, per device in start order (then stream,
    end, kind: :data:`tracelens.util_order.ORDER`), with its kind, kernel name ids, process
    and launch time (``queries/work_in_order.sql``, sorted here; the launching call's
    correlation id, not its start: :mod:`tracelens.util_calls` looks that up where util
    needs it): what :func:`tracelens.util.gpu_time_accounting` sweeps, and (its kernels)
    what the step search and the diff's launch sequences read. Read it once and hand it to
    each of them.
    ``keep_stream``: keep the ``stream`` column (the report's timeline lanes are device and
    stream); util and the step search do not read it."""
    where = where or EventFilter()
    rows = trace.query("work_in_order", any_order=True, **where.params(), grid=False, short=True)
    if where.is_whole():
        kept_whole(trace, rows)
    return in_order(rows, drop=("blocks",) if keep_stream else ("stream", "blocks"))


def kept_whole(trace: Trace, work: pl.DataFrame) -> None:
    """Tell ``trace`` how many kernels, memcpys and memsets a read of all its GPU work kept
    (``kind`` 0, 1, 2): the count of damaged records then needs no scan of its own
    (:meth:`~tracelens.Trace.kept_whole`)."""
    trace.kept_whole(record_counts(work))


def record_counts(work: pl.DataFrame) -> dict[str, int]:
    """How many kernels, memcpys and memsets (``kind`` 0, 1, 2) ``work`` holds (a kind it
    holds none of is left out). A sum per kind, not a group-by: 5M rows in ~0.3 ms, not ~30."""
    import polars as pl

    kinds = ("kernel", "memcpy", "memset")
    counts = work.select((pl.col("kind") == k).sum().alias(kind) for k, kind in enumerate(kinds))
    return {kind: n for kind, n in counts.row(0, named=True).items() if n}


def read_work(
    trace: Trace,
    where: EventFilter | None = None,
    *,
    context: bool = True,
    columns: tuple[str, ...] = (),
) -> pl.DataFrame:
    """The GPU operations of ``where`` that util and findings read (``queries/util_work.sql``:
    device, start_ns, end_ns, kind, name_id, pid, context, correlation_id), by device and
    start (rows that start together in any order). Read it once and hand it to each.
    ``context``: read the CUDA context (findings' GPU rules report it); without it the
    column is left out (util alone, which does not read it). ``columns``: only these."""
    if columns:
        context = "context" in columns
    work = taken_by_device_start([unsorted_work(trace, where, context)[0]])
    if columns:
        return work.select(c for c in columns if c in work.columns)
    return work


def unsorted_work(
    trace: Trace, where: EventFilter | None, context: bool
) -> tuple[pl.DataFrame, dict[str, int]]:
    """``queries/util_work.sql``'s rows of ``where`` in the query's order (``context``: with
    the column) and, when they are the whole trace's, how many kernels, memcpys and memsets
    they hold, told to the trace (as :func:`kept_whole`); else no counts."""
    where = where or EventFilter()
    params = {"selection": None, **where.params(), "context": context}
    rows = trace.query("util_work", any_order=True, **params)
    records = record_counts(rows) if where.is_whole() else {}
    if where.is_whole():
        trace.kept_whole(records)
    return (rows if context else rows.drop("context")), records
