"""The headline figures of one diff side: its totals (:func:`trace_totals`: launches,
kernel time, GPU busy time, copies, API calls, span), kept in a cached trace's entry
(:func:`kept_totals`), and its GPU time accounting (:func:`util_accounting`: util's
figures summed over the devices busy in the window, :data:`TIME_COLUMNS`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace


TIME_COLUMNS = (
    "span_ns",
    "busy_ns",
    "idle_ns",
    "compute_ns",
    "exposed_communication_ns",
    "exposed_memory_ns",
)


def trace_totals(
    trace: Trace,
    where: EventFilter | None = None,
    launches: pl.DataFrame | None = None,
    calls: dict[str, int | None] | None = None,
    busy: int | pl.DataFrame | None = None,
) -> dict[str, int | None]:
    """The headline figures of one trace: kernel_launches, distinct_kernels, kernel_time_ns,
    gpu_busy_ns (util's busy time summed over devices: the time at least one kernel, copy,
    memset or graph replay ran, :func:`busy_ns`), memcpy/memset counts and bytes,
    runtime_calls, first_ns, last_ns, span_ns. ``launches``: the kernels of ``where`` in
    launch order (device, start_ns, end_ns, name_id: the demangled name's id), when already
    read; the kernel figures come from them, the rest from ``queries/trace_totals.sql``.
    ``busy``: the busy time when util found it (``Util.frame``'s busy_ns summed), or the
    GPU work of ``where`` read in GPU order (:func:`tracelens.util.work_in_order`) to sweep
    for it; None: the work is read here (with ``launches`` from it when not given).
    ``calls``: runtime_calls, first_ns and last_ns of the CUDA API calls of ``where``, when
    already read (:func:`tracelens.util.accounting_and_calls`): the query then skips its
    scan of them."""
    import polars as pl

    from ..filters import EventFilter
    from ..util_read import work_in_order
    from ..util_sweep import KERNEL

    where = where or EventFilter()
    if busy is None:
        busy = work_in_order(trace, where)
        if launches is None:
            launches = busy.filter(pl.col("kind") == KERNEL)
    totals = trace.query("trace_totals", **window(where), runtime=calls is None).to_dicts()[0]
    if calls is not None:
        first = [t for t in (totals["first_ns"], calls["first_ns"]) if t is not None]
        last = [t for t in (totals["last_ns"], calls["last_ns"]) if t is not None]
        totals["runtime_calls"] = calls["runtime_calls"]
        totals["first_ns"] = min(first) if first else None
        totals["last_ns"] = max(last) if last else None
    kernels = launches.select(
        kernel_launches=pl.len(),
        distinct_kernels=pl.col("name_id").n_unique(),
        kernel_time_ns=(pl.col("end_ns") - pl.col("start_ns")).sum(),
        first_ns=pl.col("start_ns").min(),
        last_ns=pl.col("end_ns").max(),
    ).row(0, named=True)
    first = [t for t in (kernels.pop("first_ns"), totals.pop("first_ns")) if t is not None]
    last = [t for t in (kernels.pop("last_ns"), totals.pop("last_ns")) if t is not None]
    totals = kernels | totals
    totals["first_ns"] = min(first) if first else None
    totals["last_ns"] = max(last) if last else None
    totals["span_ns"] = totals["last_ns"] - totals["first_ns"] if first and last else None
    totals["gpu_busy_ns"] = busy if isinstance(busy, int) else busy_ns(busy, where)
    return totals


def busy_ns(work: pl.DataFrame, where: EventFilter) -> int:
    """The GPU busy time of ``work`` (the GPU operations of ``where`` in GPU order:
    device, start_ns, end_ns), summed over devices, as ``tracelens util`` counts it: per
    device the union of its kernels, copies, memsets and graph replays, clipped to
    ``where``'s window (a sweep over the sorted rows, ~0.1 CPU s per million). What the
    diff shows when util is left out; util's own figure otherwise (the same time)."""
    import polars as pl

    from ..util_sweep import union_ns

    s, e = pl.col("start_ns"), pl.col("end_ns")
    if where.start_ns is not None:
        s = s.clip(lower_bound=where.start_ns)
    if where.end_ns is not None:
        e = e.clip(upper_bound=where.end_ns)
    intervals = work.select("device", s.alias("s"), e.alias("e"))
    return union_ns(intervals.filter(pl.col("e") > pl.col("s")))


def kept_totals(
    trace: Trace,
    where: EventFilter,
    launches: pl.DataFrame,
    calls: dict[str, int | None] | None,
    busy: int | pl.DataFrame,
) -> dict[str, int | None]:
    """:func:`trace_totals`; a cached trace read whole keeps them in its cache entry (one
    row, :mod:`.workfile`), and later diffs read them back: they depend on the trace alone
    (the totals query, and the busy time's sweep when util is left out)."""
    import polars as pl

    from . import workfile

    whole = all(v is None for v in where.params().values())
    if whole and (kept := workfile.kept(trace, (), workfile.TOTALS)) is not None:
        return kept.row(0, named=True)
    totals = trace_totals(trace, where, launches, calls, busy)
    if whole:
        schema = {key: pl.Int64 for key in totals}
        workfile.keep(trace, pl.DataFrame([totals], schema=schema), workfile.TOTALS)
    return totals


def util_accounting(trace, where, work):
    """(time, devices, util) of :class:`.collect.Side`, and the figures of the API calls util read
    for the totals (:func:`tracelens.util.accounting_and_calls`; None: not those of
    ``where``). GPU time accounting is the costliest part (util's sweeps over ``work``:
    about a census per million launches, bench/README.md): above ``util_max_launches`` the
    caller leaves it out, and the board says so."""
    from .. import util as util_module
    from ..util_listed import busy_devices

    # A cached trace read whole keeps its accounting in its cache entry, as util does: the
    # work of the whole trace, however read, gives the same figures; later diffs (and util,
    # findings, the report) read them back instead of sweeping again.
    util, calls = util_module.accounting_and_calls(trace, where, work, keep=True)
    # Summed over the devices busy in the window, as util's own figures: a device a process
    # opened and left idle has a row in util's frame but neither adds idle time nor counts.
    busy = busy_devices(util.frame, util.idle_causes)[0]
    time = {c: int(busy[c].sum()) for c in TIME_COLUMNS}
    return time, busy.height, util, calls


def window(where: EventFilter) -> dict:
    """The window and selection parameters of ``where``, as the per-trace queries take them.
    With a selection (--nvtx, --step), the window as asked: the filter's own is the selected
    GPU work's span (filters.window_to_selection), which the API calls that launched that
    work precede (the board counted 2 CUDA API calls for 4 launches, 0 for a step's); the
    selection already keeps only the selected work and the calls that launched it."""
    start, end = where.start_ns, where.end_ns
    if where.selection is not None and where.asked_window is not None:
        start, end = where.asked_window
    return {"start_ns": start, "end_ns": end, "selection": where.selection}
