"""Timeline: kernels, copies, memsets, NVTX ranges (and API calls) in time order, with the
idle gaps of each device as rows of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .census import check_name_kind
from .errors import MissingDataError, UsageError
from .filters import EventFilter

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

DEFAULT_GAP_NS = 100_000
# copyKind labels as nsys 2022.4+ writes them in ENUM_CUDA_MEMCPY_OPER; used when the export
# has no such table (older nsys), so that every export reads the same.
COPY_LABELS = (
    "Unknown",
    "Host-to-Device",
    "Device-to-Host",
    "Host-to-Array",
    "Array-to-Host",
    "Array-to-Array",
    "Array-to-Device",
    "Device-to-Array",
    "Device-to-Device",
    "Host-to-Host",
    "Peer-to-Peer",
    "Unified Host-to-Device",
    "Unified Device-to-Host",
    "Unified Device-to-Device",
)
# rich styles per kind, seen only on a color terminal
KIND_STYLES = {
    "kernel": "green",
    "memcpy": "cyan",
    "memset": "blue",
    "nvtx": "magenta",
    "api": "yellow",
    "gap": "red",
}
_EVENT_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
)


@dataclass(frozen=True)
class Timeline:
    """``events``: the rows asked for (see ``queries/timeline_events.sql`` for the columns;
    start_ns counts from ``origin_ns``); ``total``: rows before ``limit``/``offset``."""

    events: pl.DataFrame
    total: int
    offset: int
    origin_ns: int


def check_paging(limit: int | None, offset: int) -> None:
    if limit is not None and limit < 0:
        raise UsageError(f"--limit must be 0 (every row) or more (got {limit})")
    if offset < 0:
        raise UsageError(f"--offset must be 0 or more (got {offset})")


def check_gap(gap_ns: int) -> int:
    if gap_ns < 0:
        raise UsageError(f"--gap must be 0 or more (got {gap_ns} ns)")
    return gap_ns


def copy_labels(trace: Trace) -> list[str | None]:
    """Memcpy labels indexed by copyKind: the export's own ENUM_CUDA_MEMCPY_OPER when it has
    one, :data:`COPY_LABELS` otherwise."""
    if not trace.has_table("ENUM_CUDA_MEMCPY_OPER"):
        return list(COPY_LABELS)
    rows = trace.query("timeline_copy_kinds").rows()
    labels: list[str | None] = [None] * (max((i for i, _ in rows), default=-1) + 1)
    for i, label in rows:
        if i >= 0:
            labels[i] = label
    return labels


def timeline(
    trace: Trace,
    *,
    api: bool = False,
    gap_ns: int = DEFAULT_GAP_NS,
    name: str = "demangled",
    limit: int | None = None,
    offset: int = 0,
    where: EventFilter | None = None,
) -> Timeline:
    """Kernels, memcpys, memsets and NVTX ranges (CUDA API calls too with ``api``) merged
    in time order, with each device's idle gaps longer than ``gap_ns`` as rows of kind
    ``gap``. Times are relative to the trace's first event (``trace.info.start_ns``);
    ``where`` is in ns from session start as for every analysis (its device and stream
    select GPU rows; NVTX ranges and API calls are host-side and stay). ``limit`` (None or
    0: all) and ``offset`` page through the rows.
    """
    check_name_kind(name)
    check_paging(limit, offset)
    check_gap(gap_ns)
    if not any(trace.has_table(t) for t in _EVENT_TABLES):
        raise MissingDataError(
            trace.path, "no CUDA or NVTX events: was it captured with -t cuda,nvtx?"
        )
    where = where or EventFilter()
    trace.load_nvtx_text()
    origin = trace.info.start_ns or 0
    df = trace.query(
        "timeline_events",
        origin_ns=origin,
        api=api,
        gap_ns=gap_ns,
        name_kind=name,
        copy_labels=copy_labels(trace),
        limit=limit or None,
        offset=offset,
        **where.params(),
    )
    total = int(df["total_rows"][0]) if df.height else _count(trace, where, api, gap_ns, origin)
    return Timeline(df.drop("total_rows"), total, offset, origin)


def _count(trace: Trace, where: EventFilter, api: bool, gap_ns: int, origin: int) -> int:
    """Rows before paging when the page itself is empty (an offset past the end)."""
    df = trace.query(
        "timeline_events",
        origin_ns=origin,
        api=api,
        gap_ns=gap_ns,
        name_kind="short",
        copy_labels=list(COPY_LABELS),
        limit=1,
        offset=0,
        **where.params(),
    )
    return int(df["total_rows"][0]) if df.height else 0


def render(result: Timeline, *, fmt: str, timeunit: str, source: str) -> str:
    """Rows as a table (colored by kind on a color terminal), csv, json or markdown."""
    from . import render as r

    df = result.events
    first, last = result.offset + 1, result.offset + df.height
    if df.height == 0:
        shown = f"no rows (of {result.total:,})"
    elif df.height < result.total:
        shown = f"rows {first:,}-{last:,} of {result.total:,}"
        if last < result.total:
            shown += f"; --offset {last} for the next"
    else:
        shown = f"{result.total:,} rows"
    title = f"timeline of {source} (times from the first event)"
    styles = [KIND_STYLES.get(k) for k in df["kind"]] if fmt == "table" else None
    return r.frame(df, fmt=fmt, timeunit=timeunit, title=title, caption=shown, row_styles=styles)
