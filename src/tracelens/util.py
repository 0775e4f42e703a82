"""Util: what each GPU did with its wall time, and why it was idle.

Per device, over the analysis window (the capture span, or ``where``'s start/end):

* span, busy (the union of its kernels, memcpys, memsets and graph-level CUDA graph replays,
  across streams), idle = span - busy, utilization = busy / span;
* busy split by what runs, with priority compute > communication > memory, so that
  ``compute_ns + exposed_communication_ns + exposed_memory_ns + idle_ns == span_ns``
  exactly; ``communication_ns`` and ``memory_ns`` are the full unions (hidden or not);
* idle split by cause (:data:`IDLE_CAUSES`), which add up to ``idle_ns`` exactly;
* communication per collective kind (AllReduce, AllGather, ...): calls, time, and the part
  no compute kernel hid.

Kernels are classified on their demangled names by the category rules
(``data/categories.toml``: ``communication``, ``memory``; everything else is compute), each
distinct name once; the operations come from ``queries/util_work.sql`` (:func:`read_work`,
one read that findings shares), or from ``queries/work_in_order.sql`` (the launch order the
diff and the report share with the step search, :func:`work_in_order`), and the CUDA API
calls from one read of them (:mod:`tracelens.util_calls`: the launching call of each
operation that ends an idle gap, the synchronizing calls, their span); the sweeps run in
vectorized polars (:mod:`tracelens.util_sweep`, which says why not in DuckDB), so nothing
runs per kernel in Python. Sync API names and collective kinds are data
(``data/util.toml``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._resources import data_dir
from .categories import classify_column
from .errors import MissingDataError
from .filters import EventFilter
from .results import Result
from .util_calls import HostCalls, read_calls
from .util_sweep import (
    ACCOUNTING_COLUMNS,
    COMMUNICATION,
    COMPUTE,
    GRAPH,
    KERNEL,
    MEMORY,
    communication_sweep,
    device_sweep,
)

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = [
    "FRAME_COLUMNS",
    "IDLE_CAUSES",
    "Util",
    "figures",
    "gpu_time_accounting",
    "read_work",
    "work_in_order",
    "work_params",
]

#: Columns of :attr:`Util.frame`, in order (device, span_ns, busy_ns, idle_ns, compute_ns,
#: communication_ns, exposed_communication_ns, memory_ns, exposed_memory_ns, utilization).
FRAME_COLUMNS = ACCOUNTING_COLUMNS

#: Idle causes, in display order, with what each means.
IDLE_CAUSES = {
    "sync": "the GPU waited for the next launch while the host was blocked in a "
    "synchronizing CUDA call (cudaDeviceSynchronize, cudaStreamSynchronize, a synchronous "
    "cudaMemcpy, ...): it could not queue work ahead",
    "launch_bound": "the GPU waited for the next launch: the API calls that launched the work "
    "after the gap started after the previous GPU work had ended",
    "before_first": "from the start of the window to the device's first GPU operation",
    "after_last": "from the device's last GPU operation to the end of the window",
    "unexplained": "the next work was already queued (a dependency on another stream or "
    "device, an event wait, or the scheduler)",
}

#: The order of :func:`work_in_order`'s rows.
ORDER = ("device", "start_ns", "stream", "end_ns", "kind")

_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
_NON_COMPUTE = ("communication", "memory")


@dataclass(frozen=True)
class Util(Result):
    """GPU time accounting of one trace (see the module docstring).

    ``frame``: one row per device (:data:`FRAME_COLUMNS`, times in ns). ``idle_causes``:
    device, cause, count (gaps; 1 for before_first/after_last when non-zero), time_ns.
    ``communication``: device, collective, calls, time_ns, busy_ns, exposed_ns. ``start_ns``
    and ``end_ns``: the analysis window. ``notes``: what the figures leave out or assume.
    """

    frame: pl.DataFrame
    idle_causes: pl.DataFrame
    communication: pl.DataFrame
    start_ns: int | None
    end_ns: int | None
    notes: tuple[str, ...] = field(default=())
    #: NCCL message sizes from NCCL's NVTX payloads (:func:`tracelens.nccl.message_sizes`):
    #: collective, calls, total_bytes, min_bytes, median_bytes, max_bytes; None without.
    message_sizes: pl.DataFrame | None = None

    def figures(self) -> dict[str, float]:
        """Whole-trace figures for gates (``--fail-if``): ``util`` (busy / span over all
        devices), ``util_min`` (the least used device), ``busy_ms``, ``idle_ms``,
        ``exposed_communication_ms``, ``exposed_memory_ms`` and, per idle cause,
        ``idle_<cause>_ms``. Empty when no device had GPU work."""
        import polars as pl

        if self.frame.is_empty():
            return {}
        sums = self.frame.select(
            "span_ns", "busy_ns", "idle_ns", "exposed_communication_ns", "exposed_memory_ns"
        ).sum()
        span = sums["span_ns"].item()
        out: dict[str, float] = {
            "util": sums["busy_ns"].item() / span if span else 0.0,
            "util_min": float(self.frame["utilization"].fill_null(0.0).min()),
            "busy_ms": sums["busy_ns"].item() / 1e6,
            "idle_ms": sums["idle_ns"].item() / 1e6,
            "exposed_communication_ms": sums["exposed_communication_ns"].item() / 1e6,
            "exposed_memory_ms": sums["exposed_memory_ns"].item() / 1e6,
        }
        by_cause = dict(self.idle_causes.group_by("cause").agg(pl.col("time_ns").sum()).iter_rows())
        for cause in IDLE_CAUSES:
            out[f"idle_{cause}_ms"] = by_cause.get(cause, 0) / 1e6
        return out

    def tables(self) -> dict[str, pl.DataFrame]:
        """devices (one row per device, the main table), idle_causes, communication."""
        return {
            "devices": self.frame,
            "idle_causes": self.idle_causes,
            "communication": self.communication,
        }


@dataclass(frozen=True)
class _Collective:
    kind: str
    pattern: re.Pattern[str]
    why: str


@dataclass(frozen=True)
class _UtilData:
    sync_apis: tuple[str, ...]
    collectives: tuple[_Collective, ...]

    @property
    def sync_regex(self) -> str:
        names = "|".join(re.escape(n) for n in self.sync_apis)
        return f"(?:{names})(?:_v[0-9]+)?"

    def collective_of(self, name: str) -> str:
        for c in self.collectives:
            if c.pattern.search(name):
                return c.kind
        return "other"


@lru_cache(maxsize=1)
def _data() -> _UtilData:
    with open(data_dir() / "util.toml", "rb") as fh:
        doc = tomllib.load(fh)
    return _UtilData(
        tuple(s["name"] for s in doc["sync_api"]),
        tuple(
            _Collective(c["kind"], re.compile(c["regex"], re.IGNORECASE), c["why"])
            for c in doc["collective"]
        ),
    )


def sync_api_regex() -> str:
    """The full-match regex of the CUDA API names that block the host (``data/util.toml``)."""
    return _data().sync_regex


def _classes(
    trace: Trace, name_ids: pl.Series | None = None
) -> tuple[list[int], list[str], list[str | None]]:
    """(name ids, work class, collective kind) of every kernel name that is not compute:
    of ``name_ids`` (demangled name ids, repeats allowed) when given, else of every kernel
    name of the trace."""
    ids: list[int] = []
    classes: list[str] = []
    collectives: list[str | None] = []
    import polars as pl

    data = _data()
    if name_ids is None:
        rows = trace.query_rows("util_kernel_names").data
    else:
        distinct = name_ids.unique().drop_nulls().to_list()
        rows = trace.query_rows("util_name_texts", ids=distinct).data
    names = pl.Series("name", [name for _, name in rows], dtype=pl.String)
    categories = classify_column(names)["category"].to_list()  # vectorized, each name once
    for (name_id, name), category in zip(rows, categories, strict=True):
        if category in _NON_COMPUTE:
            ids.append(name_id)
            classes.append(category)
            collectives.append(data.collective_of(name) if category == "communication" else None)
    return ids, classes, collectives


def _window(
    trace: Trace,
    where: EventFilter,
    work: pl.DataFrame | None = None,
    calls: HostCalls | None = None,
) -> tuple[int | None, int | None]:
    """``where``'s start and end, each defaulting to the capture span's (util_window.sql:
    the span of TraceInfo without reading its counts). ``work``: the GPU operations of
    ``where`` already read; when ``where`` filters nothing they are all of them, and their
    span stands in for the scans of the GPU tables. ``calls``: the API calls already read
    (:func:`tracelens.util_calls.read_calls`); their span stands in for their scan."""
    t0, t1 = where.start_ns, where.end_ns
    if t0 is not None and t1 is not None:
        return t0, t1
    every_op = work is not None and all(v is None for v in where.params().values())
    first, last = trace.query_rows("util_window", gpu=not every_op, api=calls is None).data[0]
    spans = [] if calls is None else [(calls.first_ns, calls.last_ns)]
    if every_op and work.height:
        import polars as pl

        spans.append(work.select(pl.col("start_ns").min(), pl.col("end_ns").max()).row(0))
    for lo, hi in spans:
        first = lo if first is None else first if lo is None else min(first, lo)
        last = hi if last is None else last if hi is None else max(last, hi)
    return (first if t0 is None else t0), (last if t1 is None else t1)


def _require_work(trace: Trace) -> None:
    if not any(trace.has_table(t) for t in _TABLES):
        raise MissingDataError(
            trace.path, "no CUDA kernel, memcpy or memset data: was it captured with -t cuda?"
        )
    if trace.has_table(_TABLES[0]):
        trace.require_kernels()


def work_params(
    trace: Trace,
    where: EventFilter | None,
    work: pl.DataFrame | None = None,
    calls: HostCalls | None = None,
) -> dict[str, Any]:
    """The bound parameters every util-style sweep takes: the event filter (with
    ``selection``), the window ``t0``/``t1``, and the kernel classes (``name_ids``,
    ``work_classes``, ``collectives``) of the kernel names of ``work`` (the GPU operations
    of ``where`` already read: start_ns, end_ns, name_id) or, without it, of every kernel
    name of the trace. ``calls``: the API calls already read (their span is the window's
    too)."""
    where = where or EventFilter()
    _require_work(trace)
    t0, t1 = _window(trace, where, work, calls)
    ids, classes, collectives = _classes(trace, None if work is None else work["name_id"])
    return {
        "selection": None,
        **where.params(),
        "t0": t0,
        "t1": t1,
        "name_ids": ids,
        "work_classes": classes,
        "collectives": collectives,
    }


def work_in_order(
    trace: Trace, where: EventFilter | None = None, *, keep_stream: bool = False
) -> pl.DataFrame:
    """Every GPU operation that passes ``where``, per device in start order (then stream,
    end, kind: :data:`ORDER`), with its kind, kernel name ids, process and launch time
    (``queries/work_in_order.sql``, sorted here; the launching call's correlation id, not
    its start: :mod:`tracelens.util_calls` looks that up where util needs it): what
    :func:`gpu_time_accounting` sweeps, and (its kernels) what the step search and the
    diff's launch sequences read. Read it once and hand it to each of them.
    ``keep_stream``: keep the ``stream`` column (the report's timeline lanes are device and
    stream); util and the step search do not read it."""
    rows = trace.query("work_in_order", **{"selection": None, **(where or EventFilter()).params()})
    return _in_order(rows, drop=() if keep_stream else ("stream",))


def _in_order(work: pl.DataFrame, drop: tuple[str, ...] = ()) -> pl.DataFrame:
    """``work`` without ``drop``, sorted by :data:`ORDER`: by device and start on one packed
    key, then only the rows that start together by stream, end, kind (a million rows in
    ~0.08 CPU s, where sorting on all five columns took ~0.2), gathered one column at a
    time, each dropped once copied: the sort holds one column twice, not the whole read
    (~400 MB on a 5M-kernel trace). A NULL device or start (nsys writes none) sorts by
    ORDER."""
    import polars as pl

    nulls = work.select(pl.col("device").null_count() + pl.col("start_ns").null_count()).item()
    if nulls:
        return work.sort(ORDER).drop(drop)
    order = _break_ties(work, _device_start_order(work))
    work = work.drop(drop)
    columns = []
    for name in work.columns:
        columns.append(work.get_column(name).gather(order))
        work = work.drop(name)
    return pl.DataFrame(columns)


def _break_ties(work: pl.DataFrame, order: pl.Series) -> pl.Series:
    """``order`` (``work``'s rows by device and start, those that start together in any
    order) with the rows that start together in :data:`ORDER`: only those are sorted again
    (few operations of a device start at the same nanosecond)."""
    import polars as pl

    lead = work.select(pl.col("device", "start_ns").gather(order))
    same = (pl.col("device") == pl.col("device").shift(1)) & (
        pl.col("start_ns") == pl.col("start_ns").shift(1)
    )
    tied = lead.select(same.fill_null(False) | same.shift(-1).fill_null(False)).to_series()
    if not tied.any():
        return order
    at = tied.arg_true()
    rows = order.gather(at)
    again = work.select(pl.all().gather(rows)).select(pl.arg_sort_by(list(ORDER))).to_series()
    return order.scatter(at, rows.gather(again))


def _device_start_order(work: pl.DataFrame) -> pl.Series:
    """The row order of ``work`` (device, start_ns, ...) by device, then start; rows that
    start together in any order (no util figure depends on it, :mod:`tracelens.util_sweep`).
    Sorted on one Int64 key, device and start packed when they fit: polars sorts 5M rows
    on it in ~0.3 CPU s, on the two columns in ~1.0 s. When the row number fits in the key
    too, the key's values are sorted and the order read from their low bits: no (row,
    value) pairs to sort (5M rows: ~0.15 CPU s and ~100 MB of page faults less)."""
    import polars as pl

    device, start = pl.col("device"), pl.col("start_ns")
    bounds = work.select(
        device.min().alias("d0"), device.max().alias("d1"), start.min().alias("s0"), start.max()
    )
    d0, d1, s0, s1 = bounds.row(0)
    if d0 is None or s0 is None or (d1 - d0 + 1) * (s1 - s0 + 1) >= 2**63:
        return work.select(pl.arg_sort_by("device", "start_ns")).to_series()
    key = (device.cast(pl.Int64) - d0) * (s1 - s0 + 1) + (start - s0)
    row_bits = max(1, (work.height - 1).bit_length())
    if (d1 - d0 + 1) * (s1 - s0 + 1) << row_bits >= 2**63:
        return work.select(key.arg_sort()).to_series()
    rows = 1 << row_bits
    with_row = key * rows + pl.int_range(pl.len(), dtype=pl.Int64)
    return work.select((with_row.sort() % rows).cast(pl.get_index_type())).to_series()


def read_work(
    trace: Trace, where: EventFilter | None = None, *, context: bool = True
) -> pl.DataFrame:
    """The GPU operations of ``where`` that util and findings read (``queries/util_work.sql``:
    device, start_ns, end_ns, kind, name_id, pid, context, correlation_id), by device and
    start (rows that start together in any order). Read it once and hand it to each.
    ``context``: read the CUDA context (findings' GPU rules report it); without it the
    column is left out (util alone, which does not read it). A trace read through the
    cache keeps its whole rows, sorted, for later runs (:mod:`tracelens.util_workfile`)."""
    from . import util_workfile

    where = where or EventFilter()
    whole = all(v is None for v in where.params().values())
    if whole and (work := util_workfile.kept(trace, context=context)) is not None:
        return work
    keep = whole and util_workfile.keeps(trace)
    params = {"selection": None, **where.params(), "context": context or keep}
    work = _sorted(trace.query("util_work", **params))
    if keep:
        util_workfile.keep(trace, work)
    return work if context else work.drop("context")


def _sorted(work: pl.DataFrame) -> pl.DataFrame:
    """``work`` by device and start (:func:`_device_start_order`), gathered one column at a
    time, each dropped from the read once copied: the sort holds one column twice, not the
    whole read (~220 MB on a 5M-kernel trace)."""
    import polars as pl

    order = _device_start_order(work)
    columns = []
    for name in work.columns:
        columns.append(work.get_column(name).gather(order))
        work = work.drop(name)
    return pl.DataFrame(columns)


def gpu_time_accounting(
    trace: Trace, where: EventFilter | None = None, work: pl.DataFrame | None = None
) -> Util:
    """Per-device span, busy, idle, the busy split and the idle causes (see the module
    docstring); :class:`Util`. ``work``: :func:`read_work` or :func:`work_in_order` of
    ``where`` when the caller has already read it. Raises MissingDataError when the export
    has no CUDA work."""
    return accounting_and_calls(trace, where, work)[0]


def accounting_and_calls(
    trace: Trace, where: EventFilter | None = None, work: pl.DataFrame | None = None
) -> tuple[Util, dict[str, int | None] | None]:
    """(:func:`gpu_time_accounting`, the runtime_calls, first_ns and last_ns of the CUDA API
    calls in ``where``'s window) from util's one read of the calls: what the diff's
    ``trace_totals`` would scan them again for. None for the calls when ``where`` has a
    selection (its calls are those that launched the selected work: a join util does not
    make)."""
    _require_work(trace)
    if work is None:
        work = read_work(trace, where, context=False)
    window = None
    if where is None or where.selection is None:
        window = (None, None) if where is None else (where.start_ns, where.end_ns)
    calls = read_calls(trace, sync_api_regex(), window)
    in_window = calls.in_window
    params = work_params(trace, where, work, calls)
    ops = operations(work, params)
    del work
    devices = device_sweep(ops, calls.syncs, calls.launches, params["t0"], params["t1"])
    del calls
    causes = _idle_causes(devices)
    notes, sizes = [], None
    # Without communication kernels the sweep has nothing to hide: its empty frame, at once.
    has_comm = "communication" in params["work_classes"]
    comm = communication_sweep(ops if has_comm else ops.clear(), _collective_kinds(params))
    del ops
    if has_comm:
        sizes, note = _message_sizes(trace, params)
        notes.append(note)
    replays = trace.graph_replays(where)[0]
    if replays:
        notes.append(
            f"{replays:,} CUDA graph replays traced at graph level count as compute: the "
            "export does not list their kernels (profile with --cuda-graph-trace=node)"
        )
    util = Util(
        frame=devices.select(FRAME_COLUMNS),
        idle_causes=causes,
        communication=comm,
        message_sizes=sizes if sizes is not None and sizes.height else None,
        start_ns=params["t0"],
        end_ns=params["t1"],
        notes=tuple(notes),
    )
    return util, in_window


def _collective_kinds(params: dict[str, Any]) -> list[str]:
    """The distinct collective kinds of the communication kernel names, sorted: collective
    ``k`` of :func:`operations` is ``kinds[k - 1]``."""
    return sorted(
        {
            kind or "other"
            for work, kind in zip(params["work_classes"], params["collectives"], strict=True)
            if work == "communication"
        }
    )


def operations(work: pl.DataFrame, params: dict[str, Any]) -> pl.DataFrame:
    """The input of the util sweeps from :func:`work_in_order`'s rows: each operation
    clipped to the window ``t0``..``t1`` (those left with no time dropped), with its class
    of work and collective kind (:data:`util_sweep.OPS_COLUMNS`), still by device and
    start. Clipping keeps the order: operations that start before ``t0`` all start at it."""
    import polars as pl

    number = {kind: k for k, kind in enumerate(_collective_kinds(params), start=1)}
    ids = params["name_ids"]
    classes = [
        COMMUNICATION if work == "communication" else MEMORY for work in params["work_classes"]
    ]
    collectives = [
        number[kind or "other"] if work == "communication" else 0
        for work, kind in zip(params["work_classes"], params["collectives"], strict=True)
    ]
    kind = pl.col("kind")
    is_kernel = kind == KERNEL
    start, end = pl.col("start_ns"), pl.col("end_ns")
    t0, t1 = params["t0"], params["t1"]
    # Clipping and dropping copy every row; usually (no --start/--end) nothing needs either,
    # and the columns are the read's own (~200 MB less on a 5M-kernel trace).
    inside = timed = False
    if work.height and t0 is not None and t1 is not None:
        checks = work.select(((start >= t0) & (end <= t1)).all(), (end > start).all().alias("t"))
        inside, timed = checks.row(0)
    lookup = _NameLookup(work, ids)
    ops = work.select(
        "device",
        (start if inside else start.clip(lower_bound=t0)).alias("s"),
        (end if inside else end.clip(upper_bound=t1)).alias("e"),
        pl.when(is_kernel)
        .then(lookup.of(classes, COMPUTE, pl.Int8))
        .when(kind == GRAPH)
        .then(pl.lit(COMPUTE, pl.Int8))
        .otherwise(pl.lit(MEMORY, pl.Int8))
        .alias("cls"),
        pl.when(is_kernel)
        .then(lookup.of(collectives, 0, pl.Int32))
        .otherwise(pl.lit(0, pl.Int32))
        .alias("collective"),
        "pid",
        "correlation_id",
    )
    return ops if inside and timed else ops.filter(pl.col("e") > pl.col("s"))


class _NameLookup:
    """A value per kernel name id, for the ``name_id`` column of ``work``: ``values[i]`` for
    ``ids[i]``, ``default`` for every other id and for NULL. StringIds ids are small and
    dense, so a table with one slot per id, gathered by name id, stands in for
    ``replace_strict``, which hash-joins every row (5M kernels: ~0.1 CPU s each, and two
    per util); ids too large for a table fall back to it."""

    def __init__(self, work: pl.DataFrame, ids: list[int]) -> None:
        import polars as pl

        self.ids = ids
        name_id = pl.col("name_id")
        low, high = work.select(name_id.min().alias("low"), name_id.max()).row(0)
        dense = high is not None and low >= 0 and high < max(4 * work.height, 1 << 20)
        self.size = high + 1 if dense else None

    def of(self, values: list[int], default: int, dtype: pl.DataType) -> pl.Expr:
        import polars as pl

        name_id = pl.col("name_id")
        if not any(v != default for v in values):  # every kernel takes the default
            return pl.lit(default, dtype)
        if self.size is None:
            return name_id.replace_strict(
                self.ids, values, default=default, return_dtype=dtype
            ).fill_null(default)
        kept = [(i, v) for i, v in zip(self.ids, values, strict=True) if 0 <= i < self.size]
        table = pl.repeat(default, self.size, dtype=dtype, eager=True)
        if kept:
            at, to = zip(*kept, strict=True)
            table = table.scatter(list(at), pl.Series(to, dtype=dtype))
        return pl.lit(table).gather(name_id).fill_null(default)


def _idle_causes(devices: pl.DataFrame) -> pl.DataFrame:
    """The per-device cause columns of ``util_devices`` as rows (device, cause, count,
    time_ns), causes in :data:`IDLE_CAUSES` order, zero rows left out."""
    import polars as pl

    parts = []
    for cause in IDLE_CAUSES:
        time_col = f"{cause}_ns"
        count = (
            pl.col(f"{cause}_gaps")
            if f"{cause}_gaps" in devices.columns
            else (pl.col(time_col) > 0).cast(pl.Int64)
        )
        parts.append(
            devices.select(
                "device",
                pl.lit(cause).alias("cause"),
                count.cast(pl.Int64).alias("count"),
                pl.col(time_col).alias("time_ns"),
            )
        )
    out = pl.concat(parts) if parts else pl.DataFrame()
    order = {c: i for i, c in enumerate(IDLE_CAUSES)}
    return (
        out.filter(pl.col("time_ns") > 0)
        .with_columns(_order=pl.col("cause").replace_strict(order, return_dtype=pl.Int64))
        .sort("device", "_order")
        .drop("_order")
    )


def _message_sizes(trace: Trace, params: dict[str, Any]) -> tuple[pl.DataFrame | None, str]:
    """NCCL message sizes (:mod:`tracelens.nccl`) over the window and process of ``params``,
    and the note that says where they come from, or why there are none. NCCL records them
    as NVTX payloads on its own ranges (ncclAllReduce, ...) when built with NVTX and traced
    with -t nvtx."""
    from .nccl import message_sizes

    if not trace.has_table("NVTX_EVENTS"):
        return (
            None,
            "message sizes unknown: the trace has no NVTX data (NCCL records sizes as NVTX payloads; profile with -t nvtx)",
        )
    window = EventFilter(pid=params["pid"], start_ns=params["t0"], end_ns=params["t1"])
    sizes, payloads, undecoded = message_sizes(trace, window)
    if sizes.height:
        calls = int(sizes["calls"].sum())
        left = f"; {undecoded:,} without a message size" if undecoded else ""
        return sizes, (
            f"message sizes from the payloads of {calls:,} NCCL NVTX ranges{left} (per "
            "NCCL call, not per kernel; any device)"
        )
    trace.load_nvtx_text()
    ranges = trace.query("util_nccl_ranges")["ranges"].item()
    if not ranges:
        return (
            None,
            "message sizes unknown: the trace has no NCCL NVTX ranges (NCCL records sizes as NVTX payloads; enable NCCL's NVTX and profile with -t nvtx)",
        )
    return None, (
        f"message sizes unknown: the trace's {ranges:,} NCCL NVTX ranges carry no message "
        "size payload (NCCL 2.19+ records one; nsys exports it from schema 3.25, 2025.x)"
    )


def figures(
    trace: Trace, where: EventFilter | None = None, util: Util | None = None
) -> dict[str, float]:
    """The util and steps figures of one trace in one dict, for gates such as
    ``--fail-if 'util<0.8'``: :meth:`Util.figures` (util, util_min, busy_ms, idle_ms,
    exposed_communication_ms, exposed_memory_ms, idle_<cause>_ms) and
    :meth:`tracelens.steps.Steps.figures` (steps, step_median_ms, step_p90_ms,
    step_std_ms, outlier_steps, warmup_steps; absent without steps). ``util``: the
    accounting of ``where`` when the caller already has it."""
    from .steps import find_steps

    out = (util or gpu_time_accounting(trace, where)).figures()
    if trace.has_table("CUPTI_ACTIVITY_KIND_KERNEL"):
        out |= find_steps(trace, where=where).figures()
    return out
