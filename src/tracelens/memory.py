"""Memory: GPU time and bytes per memory operation (``nsys stats`` cuda_gpu_mem_time_sum and
cuda_gpu_mem_size_sum semantics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .choices import MEMORY_BY
from .errors import MissingDataError, check_choice
from .filters import EventFilter

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

BY = MEMORY_BY
_QUERIES = {"time": "memory_time_summary", "size": "memory_size_summary"}
_TABLES = ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def _why_none(trace: Trace) -> str:
    """Why an export has no memcpy or memset table: CUDA was not traced, or it was and no
    copy ran where the trace can see it (a graph replay traced at graph level lists none of
    the copies inside it)."""
    if replays := trace.graph_replays()[0]:
        one = replays == 1
        return (
            f"none ran outside its {replays:,} CUDA graph {'replay' if one else 'replays'}, "
            f"which {'was' if one else 'were'} traced at graph level and list no copies or "
            "memsets; profile with --cuda-graph-trace=node"
        )
    if trace.has_kernels():
        return "CUDA was traced (the export has kernels) and no copy or memset ran"
    # an empty kernel table says CUDA was traced, as util and lineup say (_why_no_kernels)
    return trace._why_no_kernels()


def replays_note(trace: Trace, where: EventFilter | None = None) -> str | None:
    """What the CUDA graph replays traced at graph level that pass ``where`` leave out of
    the memory summary: the copies and memsets they ran, which the export does not list;
    None when there are none."""
    replays = trace.graph_replays(where)[0]
    if not replays:
        return None
    one = replays == 1
    return (
        f"{replays:,} CUDA graph {'replay' if one else 'replays'} traced at graph level "
        f"{'lists' if one else 'list'} no copies or memsets: those {'it' if one else 'they'} "
        "ran are not in these numbers; profile with --cuda-graph-trace=node to see them"
    )


def check_by(by: str) -> str:
    return check_choice("by", by, BY)


def memory_summary(
    trace: Trace, *, by: str = "time", where: EventFilter | None = None
) -> pl.DataFrame:
    """One row per memory operation (``[CUDA memcpy HtoD]``, ..., ``[CUDA memset]``).

    ``by="time"``: time_pct, total_ns, count, avg_ns, med_ns, min_ns, max_ns, stddev_ns,
    operation, ordered by total time. ``by="size"``: total_mb, count, avg_mb, med_mb, min_mb,
    max_mb, stddev_mb (MB = 10^6 bytes, rounded to 0.001 as nsys prints them), total_bytes,
    operation, ordered by total bytes. Raises MissingDataError when the export has neither
    memcpy nor memset data.
    """
    check_by(by)
    if not any(trace.has_table(t) for t in _TABLES):
        raise MissingDataError(trace.path, f"no CUDA memcpy or memset data: {_why_none(trace)}")
    where = where or EventFilter()
    return trace.query(_QUERIES[by], **where.params())
