"""Timeline: kernels, copies, memsets, graph-level CUDA graph replays, NVTX ranges (and API
calls) in time order, with the idle gaps of each device as rows of their own."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .census import check_name_kind
from .errors import MissingDataError, check_at_least
from .filters import EventFilter
from .render import DEFAULT_WIDTH
from .results import Result
from .trace import list_param

if TYPE_CHECKING:
    import polars as pl

    from .rows import Rows
    from .trace import Trace

DEFAULT_GAP_NS = 100_000
# rich styles per kind, seen only on a color terminal
KIND_STYLES = {
    "kernel": "green",
    "memcpy": "cyan",
    "memset": "blue",
    "graph": "bright_green",
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


# About how wide a bin of timeline_page_rows.sql is: a page reads the bins it starts and
# ends in whole, so the bins should hold few rows, and there should be few bins to count
# (the 5M-kernel benchmark spans 80 s: ~90k bins of ~60 rows).
PAGE_BIN_NS = 1_000_000


@dataclass(frozen=True)
class Timeline(Result):
    """``events``: the rows asked for (see ``queries/timeline_events.sql`` for the columns;
    start_ns counts from ``origin_ns``); ``total``: rows before ``limit``/``offset``;
    ``events_total``: the events (every row kind but gaps) in the window, counted for a
    page (None without ``limit``)."""

    events: pl.DataFrame
    total: int
    offset: int
    origin_ns: int
    events_total: int | None = None

    def tables(self) -> dict[str, pl.DataFrame]:
        """events: one row per GPU operation (and idle gap) of the page."""
        return {"events": self.events}

    def _summary(self) -> str:
        shown = self.events.height
        return f"{shown:,} {'row' if shown == 1 else 'rows'} of {self.total:,} from row {self.offset:,}"


@dataclass(frozen=True)
class TimelineRows(Timeline):
    """A :class:`Timeline` whose ``events`` are plain :class:`~tracelens.rows.Rows`: a page
    for the command line, which then imports neither polars nor pyarrow (0.18 CPU s)."""

    events: Rows

    def tables(self) -> dict[str, pl.DataFrame]:
        return {"events": self.events.to_polars()}


def check_paging(limit: int | None, offset: int) -> None:
    check_at_least("limit", limit, 0, meaning="every row")
    check_at_least("offset", offset, 0)


def check_gap(gap_ns: int) -> int:
    check_at_least("gap_ns", gap_ns, 0, unit="ns")
    return gap_ns


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
    """Kernels, memcpys, memsets, CUDA graph replays traced at graph level (kind ``graph``,
    one row per replay: their kernels are in no table) and NVTX ranges (CUDA API calls too
    with ``api``) merged in time order, with each device's idle gaps longer than ``gap_ns``
    (no work, replays included, running) as rows of kind ``gap``. Times count from session start, the time base of the export and of ``where``
    as for every analysis (its device and stream select GPU rows; NVTX ranges and API
    calls are host-side and stay). ``limit`` (None or
    0: all) and ``offset`` page through the rows.
    """
    return _timeline(trace, api, gap_ns, name, limit, offset, where, as_rows=False)


def timeline_rows(
    trace: Trace,
    *,
    api: bool = False,
    gap_ns: int = DEFAULT_GAP_NS,
    name: str = "demangled",
    limit: int | None = None,
    offset: int = 0,
    where: EventFilter | None = None,
) -> TimelineRows:
    """:func:`timeline` with its rows as plain Rows: for a page (every row of a big trace is
    better rendered from polars' columns)."""
    return _timeline(trace, api, gap_ns, name, limit, offset, where, as_rows=True)


def _timeline(trace, api, gap_ns, name, limit, offset, where, *, as_rows: bool):
    check_name_kind(name)
    check_paging(limit, offset)
    check_gap(gap_ns)
    if not any(trace.has_table(t) for t in _EVENT_TABLES):
        raise MissingDataError(
            trace.path, "no CUDA or NVTX events: was it captured with -t cuda,nvtx?"
        )
    trace.check_kernel_columns()  # kernels are optional here, unreadable ones are not
    where = where or EventFilter()
    trace.load_nvtx_text()
    origin = 0  # session start: the Start column reads as --start/--end
    events_total, total, from_ns, rows_before, bound_ns = None, None, None, 0, None
    edges = (None, None, None)
    if limit:
        # Counting rows per time bin places the page without sorting what comes before it.
        events_total, total, from_ns, rows_before, bound_ns, *edges, gpu_events = trace.query_rows(
            "timeline_page_rows",
            api=api,
            gap_ns=gap_ns,
            bin_ns=PAGE_BIN_NS,
            offset=offset,
            rows=offset + limit,
            **where.params(),
        ).data[0]
        if where.is_whole():  # every kept record: spares the damage count its scan
            _kept_whole(trace, gpu_events)
    params = dict(
        origin_ns=origin,
        api=api,
        gap_ns=gap_ns,
        name_kind=name,
        limit=limit or None,
        offset=offset - rows_before,
        from_ns=from_ns,
        bound_ns=bound_ns,
        **where.params(),
    )
    # With the edges of the page's stretch known, only its GPU rows are read: read directly,
    # SQLite itself picks the kernels out (DuckDB's scanner would convert every column of
    # every row: 1.5 of the first page's 3.8 CPU s on the 5M-kernel trace).
    stretch = contextlib.nullcontext()
    if edges[0] is not None and from_ns is not None:
        stretch = trace._kernels_where(_stretch_sql(from_ns, bound_ns))
    fetch = trace.query_rows if as_rows else trace.query
    with stretch:
        events = fetch(
            "timeline_events",
            edge_devices=list_param(edges[0]),
            edge_busy=list_param(edges[1]),
            edge_next=list_param(edges[2]),
            **params,
        )
    if total is None:  # no limit: every row was read, and counted unless past the end
        total = _first(events, "total_rows") if events.height else _total(trace, where, api, gap_ns)
    made = TimelineRows if as_rows else Timeline
    return made(events.drop("total_rows"), total, offset, origin, events_total)


def _first(events: pl.DataFrame | Rows, column: str) -> int:
    """The value of ``column`` in the first row of ``events`` (polars or Rows)."""
    if hasattr(events, "data"):  # Rows
        return int(events.data[0][events.columns.index(column)])
    return int(events[column][0])


def _kept_whole(trace: Trace, gpu_events: int) -> None:
    """Tell ``trace`` how many records of each GPU kind a read of the whole trace kept, from
    their total (graph replays taken out: they are not a damage kind): when it is the sum of the kernel, memcpy and memset tables' largest rowids
    (rowids from 1), every table kept each of its rows, since none keeps more rows than its
    largest rowid. Then the damage count needs no scan; otherwise (damaged records, or rowids
    with holes) it counts as without this. Each min or max of a rowid reads one page."""
    from .trace.damage import DAMAGE_KINDS
    from .trace.parts import rowid_range

    if trace._sqlite is None:  # a parquetdir: its count reads no rowids
        return
    largest = {}
    for kind, (table, _view) in DAMAGE_KINDS.items():
        if not trace.has_table(table):
            largest[kind] = 0
            continue
        low, high = rowid_range(trace, table)
        if high is not None and low != 1:
            return
        largest[kind] = high or 0
    if sum(largest.values()) == gpu_events - trace.graph_replays()[0]:
        trace.kept_whole(largest)


def _stretch_sql(from_ns: int, bound_ns: int | None) -> str:
    """The SQLite condition of the rows a page's stretch holds (those timeline_events.sql
    keeps with its edges given): ending at or after ``from_ns``, starting by ``bound_ns``."""
    condition = f'"end" >= {int(from_ns)}'
    return condition if bound_ns is None else f"{condition} AND start <= {int(bound_ns)}"


def _total(trace: Trace, where: EventFilter, api: bool, gap_ns: int) -> int:
    """Rows before paging when every row was asked for from an offset past the end."""
    rows = trace.query_rows(
        "timeline_events",
        origin_ns=0,
        api=api,
        gap_ns=gap_ns,
        name_kind="short",
        limit=1,
        offset=0,
        from_ns=None,
        bound_ns=None,
        edge_devices=None,
        edge_busy=None,
        edge_next=None,
        **where.params(),
    )
    return _first(rows, "total_rows") if rows.height else 0


def api_calls_only(trace: Trace) -> int:
    """How many CUDA API calls the export holds when they are its only events (no kernel,
    copy, memset or NVTX row), else 0: without ``api`` its timeline has no row at all."""
    tables = _EVENT_TABLES[:3] + _EVENT_TABLES[4:]
    if any(trace.table_rows(t) for t in tables):
        return 0
    return trace.table_rows(_EVENT_TABLES[3])


def page_caption(result: Timeline) -> str:
    """Which rows of how many the page holds, and the --offset of the next page: the table's
    caption, e.g. 'rows 1-100 of 2,615; --offset 100 for the next'."""
    height, total = result.events.height, result.total
    first, last = result.offset + 1, result.offset + height
    if height == 0:
        return f"no rows (of {total:,})"
    if height < total:
        shown = f"rows {first:,}-{last:,} of {total:,}"
        return shown + (f"; --offset {last} for the next" if last < total else "")
    return f"{total:,} {'row' if total == 1 else 'rows'}"


def selection_gaps_note(result: Timeline, where: EventFilter | None) -> str | None:
    """With ``--stream``/``--pid`` or a selection (``--nvtx``, ``--step``), a gap row is a
    stretch without the selected work, not an idle device (util counts the selection's idle
    the same way): say so when the page holds gap rows, else None."""
    if where is None or (where.stream is None and where.pid is None and where.selection is None):
        return None
    events = result.events
    if hasattr(events, "data"):  # a page as plain rows
        kind = events.columns.index("kind")
        has_gap = any(row[kind] == "gap" for row in events.data)
    else:  # every row: compared in polars, not turned into a Python list of millions
        has_gap = bool((events["kind"] == "gap").any())
    if not has_gap:
        return None
    parts = [f"stream {where.stream}"] if where.stream is not None else []
    parts += [f"pid {where.pid}"] if where.pid is not None else []
    work = f"GPU work of {' on '.join(parts)}" if parts else "GPU work"
    if where.selection is None:
        return (
            f"gap rows are stretches without {work}; other streams "
            "or processes may run on the device then"
        )
    # --nvtx/--step: the gaps are between the selected operations only; the device may run
    # the work launched outside the ranges or steps (or by another thread) in them
    return (
        f"gap rows are stretches without the selected {work} (launched inside the NVTX "
        "ranges or steps); work launched outside them may run on the device then"
    )


def cut_note(result: Timeline) -> str | None:
    """For csv and json, which carry no caption: the caption when the page is not every row
    (with how to get them all when rows follow it), else None."""
    if result.events.height >= result.total:
        return None
    shown = page_caption(result)
    if result.offset + result.events.height < result.total:
        shown += ", --limit 0 for every row"
    return shown


def render(
    result: Timeline,
    *,
    fmt: str,
    timeunit: str,
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """Rows as a table (``color``: colored by kind; ``width`` as
    :func:`tracelens.render.table`), csv, json or markdown."""
    from . import render as r

    df = result.events
    shown = page_caption(result)
    title = f"timeline of {source} (times from session start)"
    styles = None
    if fmt == "table":
        kinds = (
            [r[df.columns.index("kind")] for r in df.data] if hasattr(df, "data") else df["kind"]
        )
        styles = [KIND_STYLES.get(k) for k in kinds]
    return r.frame(
        df,
        fmt=fmt,
        timeunit=timeunit,
        title=title,
        caption=shown,
        row_styles=styles,
        width=width,
        color=color,
    )
