"""The figures of the page's header (:attr:`Trace.info`: event counts, spans, processes)
from what the report reads anyway. :attr:`Trace.info` scans the kernel table for the
kernels' count, span and processes (on a 5M-kernel export about a census, ~1.3 CPU s);
the report's sorted read of the GPU work (:func:`.sharedread.read_work`) holds every
kernel, memcpy and memset already, so their figures are taken from it. The CUDA API calls'
count and span come from util's read of every call (:mod:`.timekeeping`), their processes
from SQLite's distinct threads of the calls (~0.3 CPU s on 5M calls, where the header's
scan of the calls cost ~0.75); only the other kinds (NVTX, graph replays) are read
(:meth:`Trace.info_with_gpu_counts`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

    import polars as pl

    from ..trace import Trace
    from .aside import Aside

RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"

# work_in_order's kind codes (tracelens.util_sweep) of the kinds info counts from the work
GPU_KINDS = {0: ("kernel", "kernels"), 1: ("memcpy", "memcpys"), 2: ("memset", "memsets")}


def gpu_operation_counts(trace: Trace) -> dict[str, int]:
    """Rows of each GPU work table (kernel, memcpy, memset; 0 when absent): info's counts
    (each view is its table's rows, unfiltered), from SQLite's count of the table, which
    reads no column (~0.1 CPU s for 5M kernels, against ~1.3 for info's scan), or from a
    cache entry's copy of it (:meth:`~tracelens.Trace.table_rows`)."""
    from .. import _schema

    return {kind: trace.table_rows(_schema.VIEWS[view][0]) for kind, view in GPU_KINDS.values()}


def gpu_figures(work: pl.DataFrame, counts: dict[str, int]) -> dict[str, dict[str, Any]] | None:
    """Each GPU kind's row of ``queries/_event_counts.sql`` (events, first_ns, last_ns,
    pids) from ``work`` (:func:`.sharedread.read_work` of the whole trace); None when the
    work's rows of a kind are not all of its table's (``counts``): then info reads them."""
    import polars as pl

    # by kind and process, then summed here: a few rows, where a list of each kind's
    # distinct processes made polars hash every row's pid again (5M operations: ~0.07
    # against ~0.36 CPU s)
    grouped = (
        work.lazy()
        .filter(pl.col("kind").is_in(list(GPU_KINDS)))
        .group_by("kind", "pid")
        .agg(pl.len(), pl.col("start_ns").min(), pl.col("end_ns").max())
        .collect()
    )
    by_code: dict[int, dict[str, Any]] = {}
    for code, pid, events, first, last in grouped.iter_rows():
        row = by_code.setdefault(code, {"events": 0, "first_ns": None, "last_ns": None, "pids": []})
        row["events"] += events
        row["first_ns"] = _combined(row["first_ns"], first, min)
        row["last_ns"] = _combined(row["last_ns"], last, max)
        if pid is not None:
            row["pids"].append(pid)
    figures = {}
    for code, (kind, _) in GPU_KINDS.items():
        row = by_code.get(code)
        if (row["events"] if row else 0) != counts[kind]:
            return None
        pids = row["pids"] if row else None
        figures[kind] = {
            "events": counts[kind],
            "first_ns": row["first_ns"] if row else None,
            "last_ns": row["last_ns"] if row else None,
            "pids": pids or None,
        }
    return figures


def _combined(a: int | None, b: int | None, pick) -> int | None:
    """``pick`` (min or max) of the two, a None left out (as SQL's min and max)."""
    return b if a is None else a if b is None else pick(a, b)


def runtime_figures(
    trace: Trace, calls: dict[str, int | None], threads: Future[list[tuple]] | None = None
) -> dict[str, Any]:
    """The runtime row of ``queries/_event_counts.sql`` (events, first_ns, last_ns, pids)
    with util's figures of the calls (``calls``: runtime_calls, first_ns, last_ns of
    every call, :func:`tracelens.util.accounting_and_calls` without a window) and their
    processes read (:func:`runtime_pids`; ``threads``: as started by
    :func:`start_runtime_threads`)."""
    return {
        "events": calls["runtime_calls"],
        "first_ns": calls["first_ns"],
        "last_ns": calls["last_ns"],
        "pids": runtime_pids(trace, threads),
    }


def start_runtime_threads(trace: Trace, aside: Aside) -> Future[list[tuple]] | None:
    """Start, on ``aside``'s thread, SQLite's read of the distinct threads that
    :func:`runtime_pids` reads; None where it reads none."""
    from .. import _resources

    if not _threads_from_export(trace):
        return None
    return aside.submit(_resources.query("report_runtime_threads_export"))


def _threads_from_export(trace: Trace) -> bool:
    from .sharedread import reads_export

    return RUNTIME_TABLE in trace.tables and reads_export(trace, RUNTIME_TABLE, ("globalTid",))


def runtime_pids(trace: Trace, threads: Future[list[tuple]] | None = None) -> list[int] | None:
    """The processes with CUDA API calls (None: none): from SQLite's distinct threads of
    the calls on an export read directly (``queries/report_runtime_threads_export.sql``;
    ``threads``: that read, started), else, or where a thread id is not an integer, through
    the view (``queries/report_runtime_pids.sql``, which says what is wrong)."""
    from .. import _resources

    if RUNTIME_TABLE not in trace.tables:
        return None
    if _threads_from_export(trace):
        if threads is None:
            rows = trace._sqlite_rows(_resources.query("report_runtime_threads_export"))
        else:
            rows = threads.result()
        if all(type(tid) is int for (tid,) in rows):
            return sorted({pid_of(tid) for (tid,) in rows}) or None
    return trace.query_rows("report_runtime_pids").data[0][0]


def pid_of(global_id: int) -> int:
    """The operating-system pid in a globalPid/globalTid (bits 24-47): ``pid_of`` in
    ``queries/_shared.sql``."""
    return (global_id >> 24) & 0xFFFFFF


def share_info(
    trace: Trace,
    work: pl.DataFrame,
    counts: dict[str, int],
    calls: dict[str, int | None] | None = None,
    threads: Future[list[tuple]] | None = None,
) -> None:
    """Load ``trace.info`` with its GPU figures from ``work`` (:func:`gpu_figures`) where
    they are all of the tables' rows, and its runtime figures from ``calls`` (util's, see
    :func:`runtime_figures`, with ``threads``; None: read); otherwise leave it to be read
    as usual."""
    figures = gpu_figures(work, counts)
    if figures is None:
        return
    if calls is not None:
        figures["runtime"] = runtime_figures(trace, calls, threads)
    trace.info_with_gpu_counts(figures)
