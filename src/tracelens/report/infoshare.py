"""The figures of the page's header (:attr:`Trace.info`: event counts, spans, processes)
from what the report reads anyway. :attr:`Trace.info` scans the kernel table for the
kernels' count, span and processes (on a 5M-kernel export about a census, ~1.3 CPU s);
the report's sorted read of the GPU work (:func:`.sharedread.read_work`) holds every
kernel, memcpy and memset already, so their figures are taken from it, and only the other
kinds (CUDA API calls, NVTX, graph replays) are read
(:meth:`Trace.info_with_gpu_counts`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace

# work_in_order's kind codes (tracelens.util_sweep) of the kinds info counts from the work
GPU_KINDS = {0: ("kernel", "kernels"), 1: ("memcpy", "memcpys"), 2: ("memset", "memsets")}


def gpu_operation_counts(trace: Trace) -> dict[str, int]:
    """Rows of each GPU work table (kernel, memcpy, memset; 0 when absent): info's counts
    (each view is its table's rows, unfiltered), from SQLite's count of the table, which
    reads no column (~0.1 CPU s for 5M kernels, against ~1.3 for info's scan)."""
    from .. import _schema

    return {kind: trace.table_rows(_schema.VIEWS[view][0]) for kind, view in GPU_KINDS.values()}


def gpu_figures(work: pl.DataFrame, counts: dict[str, int]) -> dict[str, dict[str, Any]] | None:
    """Each GPU kind's row of ``queries/_event_counts.sql`` (events, first_ns, last_ns,
    pids) from ``work`` (:func:`.sharedread.read_work` of the whole trace); None when the
    work's rows of a kind are not all of its table's (``counts``): then info reads them."""
    import polars as pl

    grouped = (
        work.filter(pl.col("kind").is_in(list(GPU_KINDS)))
        .group_by("kind")
        .agg(
            pl.len().alias("events"),
            pl.col("start_ns").min().alias("first_ns"),
            pl.col("end_ns").max().alias("last_ns"),
            pl.col("pid").drop_nulls().unique().alias("pids"),
        )
    )
    by_code = {row["kind"]: row for row in grouped.iter_rows(named=True)}
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


def share_info(trace: Trace, work: pl.DataFrame, counts: dict[str, int]) -> None:
    """Load ``trace.info`` with its GPU figures from ``work`` (:func:`gpu_figures`) where
    they are all of the tables' rows; otherwise leave it to be read as usual."""
    figures = gpu_figures(work, counts)
    if figures is not None:
        trace.info_with_gpu_counts(figures)
