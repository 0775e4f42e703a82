"""Util: what each GPU did with its wall time, and why it was idle.

Per device, over the analysis window (the capture span, or ``where``'s start/end; for an
``--nvtx`` selection, the part of it the selected ranges' GPU projection covers on that
device: :mod:`tracelens.util_project`):

* span, busy (the union of its kernels, memcpys, memsets and graph-level CUDA graph replays,
  across streams), idle = span - busy, utilization = busy / span;
* busy split by what runs, with priority compute > communication > memory, so that
  ``compute_ns + exposed_communication_ns + exposed_memory_ns + idle_ns == span_ns``
  exactly; ``communication_ns`` and ``memory_ns`` are the full unions (hidden or not);
* idle split by cause (:data:`IDLE_CAUSES`), which add up to ``idle_ns`` exactly;
* communication per collective kind (AllReduce, AllGather, ...): calls, time, and the part
  no compute kernel hid.

Kernels are classified on their demangled names, each distinct name once
(:mod:`tracelens.util_ops`, which also makes the sweeps' input); the operations come from ``queries/util_work.sql`` (:func:`read_work`,
one read that findings shares), or from ``queries/work_in_order.sql`` (the launch order the
diff and the report share with the step search, :func:`work_in_order`), both sorted by
:mod:`tracelens.util_order`, and the CUDA API
calls from one read of them (:mod:`tracelens.util_calls`: the launching call of each
operation that ends an idle gap, the synchronizing calls, their span); the sweeps run in
vectorized polars (:mod:`tracelens.util_sweep`, which says why not in DuckDB), so nothing
runs per kernel in Python. Sync API names and collective kinds are data
(``data/util.toml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .filters import EventFilter
from .results import Result
from .util_calls import (
    HostCalls,
    calls_in_columns,
    read_call_figures,
    read_calls,
    read_launch_calls,
)
from .util_listed import busy_devices, with_idle_devices
from .util_ops import collective_kinds, kernel_classes, operations, sync_api_regex
from .util_order import ORDER, in_order, taken_by_device_start
from .util_project import covered_ns, projection
from .util_read import kept_whole, read_work, record_counts, unsorted_work, work_in_order
from .util_sweep import ACCOUNTING_COLUMNS, device_sweep, has_launches
from .views import plural

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl

    from .compare.gates import Figures
    from .trace import Trace

__all__ = [
    "FRAME_COLUMNS",
    "IDLE_CAUSES",
    "ORDER",
    "UTIL_FIGURES",
    "Util",
    "accounting_and_calls",
    "accounting_and_work",
    "figures",
    "gpu_time_accounting",
    "operations",
    "read_work",
    "sync_api_regex",
    "work_in_order",
    "work_params",
]

#: Columns of :attr:`Util.frame`, in order (device, span_ns, busy_ns, idle_ns, compute_ns,
#: communication_ns, exposed_communication_ns, memory_ns, exposed_memory_ns, utilization).
FRAME_COLUMNS = ACCOUNTING_COLUMNS

#: work_in_order's sort and the count of a whole read's records under the names the diff
#: (compare.collect), the report, the timeline and their tests import.
_in_order, _kept_whole = in_order, kept_whole

#: Idle causes, in display order, with what each means.
IDLE_CAUSES = {
    "sync": "the GPU waited for the next launch while the thread that launched it was "
    "blocked in a synchronizing CUDA call (cudaDeviceSynchronize, cudaStreamSynchronize, a "
    "synchronous cudaMemcpy, ...): it could not queue work ahead",
    "launch_bound": "the GPU waited for the next launch: the API calls that launched the work "
    "after the gap started after the previous GPU work had ended",
    "before_first": "from the start of the window to the device's first GPU operation",
    "after_last": "from the device's last GPU operation to the end of the window",
    "unexplained": "the next work was already queued (a dependency on another stream or "
    "device, an event wait, or the scheduler)",
}


#: The figures of :meth:`Util.figures`, by name.
UTIL_FIGURES = (
    "util",
    "util_min",
    "busy_ms",
    "idle_ms",
    "exposed_communication_ms",
    "exposed_memory_ms",
    *(f"idle_{cause}_ms" for cause in IDLE_CAUSES),
)


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
    #: With --nvtx: the time of the window the selected ranges' GPU projection covers on
    #: some device, ns (each device's span is its own projection's time:
    #: :mod:`tracelens.util_project`); None: every device's span is the window.
    covered_ns: int | None = None

    def figures(self) -> Figures:
        """Whole-trace figures for gates (``--fail-if``): ``util`` (busy / span over the
        devices busy in the window), ``util_min`` (the least used device, an opened idle one
        too: :mod:`tracelens.util_listed`), ``busy_ms``, ``idle_ms``,
        ``exposed_communication_ms``, ``exposed_memory_ms`` and, per idle cause,
        ``idle_<cause>_ms`` (all over the busy devices; :data:`UTIL_FIGURES`). None, not
        measured, when no device had GPU work."""
        import polars as pl

        from .compare.gates import Figures

        if self.frame.is_empty():
            return Figures({}, dict.fromkeys(UTIL_FIGURES, "no GPU work in the window"))
        busy, causes = busy_devices(self.frame, self.idle_causes)
        sums = busy.select(
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
        by_cause = dict(causes.group_by("cause").agg(pl.col("time_ns").sum()).iter_rows())
        for cause in IDLE_CAUSES:
            out[f"idle_{cause}_ms"] = by_cause.get(cause, 0) / 1e6
        return Figures(out)

    def tables(self) -> dict[str, pl.DataFrame]:
        """devices (one row per device, the main table), idle_causes, communication."""
        return {
            "devices": self.frame,
            "idle_causes": self.idle_causes,
            "communication": self.communication,
        }


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
    trace.require_cuda_work()


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
    ids, classes, collectives = kernel_classes(trace, None if work is None else work["name_id"])
    return {
        "selection": None,
        **where.params(),
        "t0": t0,
        "t1": t1,
        "name_ids": ids,
        "work_classes": classes,
        "collectives": collectives,
    }


def gpu_time_accounting(
    trace: Trace, where: EventFilter | None = None, work: pl.DataFrame | None = None
) -> Util:
    """Per-device span, busy, idle, the busy split and the idle causes (see the module
    docstring); :class:`Util`. ``work``: :func:`read_work` or :func:`work_in_order` of
    ``where`` when the caller has already read it. Raises MissingDataError when the export
    has no CUDA work."""
    return accounting_and_calls(trace, where, work)[0]


def accounting_and_calls(
    trace: Trace,
    where: EventFilter | None = None,
    work: pl.DataFrame | None = None,
    *,
    keep: bool | None = None,
) -> tuple[Util, dict[str, int | None] | None]:
    """(:func:`gpu_time_accounting`, the runtime_calls, first_ns and last_ns of the CUDA API
    calls in ``where``'s window) from util's one read of the calls: what the diff's
    ``trace_totals`` would scan them again for. None for the calls when ``where`` has a
    selection (its calls are those that launched the selected work: a join util does not
    make). ``keep``: the whole trace's accounting is kept in the trace's cache entry, if
    any, and read back from it by later runs (:func:`tracelens.util_workfile.keep_accounting`);
    None: when this function reads the work itself (a caller whose ``work`` is
    :func:`read_work` of the whole trace may pass True)."""
    from . import util_workfile

    _require_work(trace)
    keep = (work is None if keep is None else keep) and (where is None or where.is_whole())
    keep = keep and util_workfile.keeps(trace)
    if keep and (kept := util_workfile.kept_accounting(trace)) is not None:
        return kept
    if work is None:
        return accounting_and_work(trace, where, context=False, keep=keep)[:2]
    records = record_counts(work) if keep else {}
    return _accounting(trace, where, [work], lambda: work, records, keep)


def accounting_and_work(
    trace: Trace, where: EventFilter | None = None, *, context: bool = True, keep: bool = True
) -> tuple[Util, dict[str, int | None] | None, pl.DataFrame]:
    """:func:`accounting_and_calls` of ``where`` computed afresh (nothing kept is read) with
    the :func:`read_work` (``context``: with the column) it was computed from, read once:
    findings' util and GPU rules share it. ``keep``: keep the whole trace's accounting in
    its cache entry (:func:`accounting_and_calls`)."""
    from . import util_workfile

    _require_work(trace)
    keep = keep and (where is None or where.is_whole()) and util_workfile.keeps(trace)
    rows, records = unsorted_work(trace, where, context)
    held = [rows]
    del rows  # the sort frees each column of the read once gathered
    work = taken_by_device_start(held)
    util, calls = _accounting(trace, where, [work], lambda: work, records, keep)
    return util, calls, work


def _accounting(
    trace: Trace,
    where: EventFilter | None,
    unordered: list[pl.DataFrame],
    sorted_work: Callable[[], pl.DataFrame],
    records: dict[str, int],
    keep: bool,
) -> tuple[Util, dict[str, int | None] | None]:
    """:func:`accounting_and_calls` of ``where`` from its GPU work: the one frame
    ``unordered`` holds, taken out of it (freed once read, when nothing else holds it), in
    any order (start_ns, end_ns, name_id, launch_start and launch_tid when it has them: the
    span and the kernel names), ``sorted_work()`` the operations by device and start
    (:func:`read_work`); ``records``: how many of each kind they are, kept with the
    accounting when ``keep``."""
    from . import util_workfile

    work = unordered.pop()
    window = None
    if where is None or where.selection is None:
        window = (None, None) if where is None else (where.start_ns, where.end_ns)
    regex = sync_api_regex()
    if has_launches(work) and window == (None, None):
        # The work the diff keeps in a cache entry, with each operation's launch
        # (compare.workfile): no call by call read.
        calls = read_call_figures(trace, regex)
    elif window == (None, None) and calls_in_columns(trace):
        calls = read_launch_calls(trace, regex)
    else:
        calls = read_calls(trace, regex, window)
    in_window = calls.in_window
    params = work_params(trace, where, work, calls)
    del work
    ops = operations(sorted_work(), params)
    kinds = collective_kinds(params)
    projected = None if where is None else projection(trace, where, params["t0"], params["t1"])
    swept = device_sweep(
        ops, calls.syncs, calls.launches, params["t0"], params["t1"], kinds, projected
    )
    del calls, ops
    devices = swept.devices
    frame, causes, notes = with_idle_devices(
        trace,
        where,
        devices.select(FRAME_COLUMNS),
        _idle_causes(devices),
        (params["t0"], params["t1"]),
    )
    covered = None
    if projected is not None:
        covered = covered_ns(projected)
        notes.append(_projection_note(covered, params["t1"] - params["t0"]))
    sizes = None
    has_comm = "communication" in params["work_classes"]
    if has_comm:
        sizes, note = _message_sizes(trace, params)
        notes.append(note)
    replays = trace.graph_replays(where)[0]
    if replays:
        one = replays == 1
        notes.append(
            f"{plural(replays, 'CUDA graph replay')} traced at graph level "
            f"{'counts' if one else 'count'} as compute: the export does not list "
            f"{'its' if one else 'their'} kernels (profile with --cuda-graph-trace=node)"
        )
    util = Util(
        frame=frame,
        idle_causes=causes,
        communication=swept.communication,
        message_sizes=sizes if sizes is not None and sizes.height else None,
        start_ns=params["t0"],
        end_ns=params["t1"],
        notes=tuple(notes),
        covered_ns=covered,
    )
    if keep:
        util_workfile.keep_accounting(trace, util, in_window, records)
    return util, in_window


def _projection_note(covered: int, span: int) -> str:
    """What util counts of an --nvtx selection: the selected ranges' GPU projection, and
    how much of the window it covers."""
    from .units import fmt_ns

    share = f" ({covered / span:.1%})" if span > 0 else ""
    return (
        f"--nvtx: busy and idle are counted inside the GPU projection of the selected NVTX "
        f"ranges (per device, from the first GPU operation launched in a range to the end "
        f"of the last), which covers {fmt_ns(covered)} of the {fmt_ns(span)} window"
        f"{share}; the time between them is not the selection's idle time"
    )


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


def figures(trace: Trace, where: EventFilter | None = None, util: Util | None = None) -> Figures:
    """The util and steps figures of one trace in one dict, for gates such as
    ``--fail-if 'util<0.8'``: :meth:`Util.figures` (util, util_min, busy_ms, idle_ms,
    exposed_communication_ms, exposed_memory_ms, idle_<cause>_ms) and
    :meth:`tracelens.steps.Steps.figures` (steps, step_median_ms, step_p90_ms,
    step_std_ms, outlier_steps, warmup_steps, level_shift, level_shift_ratio: the trace's
    steps restricted to ``where``). What cannot be measured is left out and
    named (:attr:`~tracelens.compare.gates.Figures.not_measured`): the steps without steps,
    the exposed communication and memory where CUDA graph replays traced at graph level
    hide the work they run. ``util``: the accounting of ``where`` when the caller already
    has it."""
    from .compare.gates import SHIFT_FIGURES, STEP_FIGURES, Figures
    from .steps import find_steps

    out = (util or gpu_time_accounting(trace, where)).figures()
    out = out.without_graph_hidden(trace.graph_replays(where)[0])
    if trace.has_kernels():
        return out | find_steps(trace, where=where).figures()
    steps = (*STEP_FIGURES, *SHIFT_FIGURES)
    return out | Figures({}, dict.fromkeys(steps, "the export lists no kernels"))
