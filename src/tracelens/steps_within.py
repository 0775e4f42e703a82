"""The trace's steps restricted to some of its work: ``tracelens steps`` with
``--device/--pid/--stream`` or a ``--start/--end`` window, ``trace.steps(where=...)``, and
the steps figures of ``util`` and ``diff`` with filters (:func:`tracelens.steps.find_steps`
with a filter comes here).

Every other command's ``--step N`` is the trace's step N (the number ``tracelens steps``
prints without filters) narrowed to the device, process, stream or window
(:func:`tracelens.stepwork.select_steps`). So the steps of some of the work are the same
steps, not the steps of a search inside it (whose own period or ranges would become steps
numbered from 1: with two processes on one GPU, process 200's iterations would be steps 1
to 6 there and steps 7 to 12 everywhere else; a window from the trace's step 3 would call
it step 1, and find a period in a few steps that the whole trace does not have). Each
step's row on a device is then the filtered work of the step there, as ``--step N`` with
the same filters selects it; steps that hold none of it are left out, and the title says
which, and which steps a window holds only in part.

``--device`` alone keeps the steps table's rows of that device (a step's row on a device is
its work there). A process, a stream, a window or a selection of the work recount each
step's row from its work that passes (``queries/steps_passing_work.sql``; a window passes
an operation as nsys does: it ends at or after the window's start and starts before its
end): first start, last end, busy (the union of its operations), kernels and their time;
for NVTX steps the CPU span is that of the step's ranges in the processes whose work
passes. Warm-up and outlier
flags stay the trace's (a step is warm-up or an outlier of the program, not of one of its
streams or of a stretch of the capture).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .filters import EventFilter
from .steps import FRAME_COLUMNS, Steps, _list

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["restrict", "steps_within"]


def steps_within(
    trace: Trace,
    range: str | None = None,  # noqa: A002
    where: EventFilter | None = None,
    top_kernels: int = 3,
) -> Steps:
    """The steps of ``trace`` (with ``range``: :func:`tracelens.stepwork.step_report`)
    restricted to ``where`` (see the module docstring); ``top_kernels`` per step and
    device, of that work."""
    from .stepwork import step_report

    where = where or EventFilter()
    whole = EventFilter()
    if where.is_whole():
        return step_report(trace, range=range, where=whole, top_kernels=top_kernels)
    # the device's rows of the whole trace's top kernels are the device's top kernels
    found = step_report(
        trace, range=range, where=whole, top_kernels=0 if _by_work(where) else top_kernels
    )
    return restrict(trace, found, where, top_kernels)


def restrict(trace: Trace, found: Steps, where: EventFilter, top_kernels: int = 0) -> Steps:
    """``found`` (the steps of the whole trace) restricted to ``where`` (see the module
    docstring): the rows of each step's work that passes it, the trace's flags, and with
    ``top_kernels``, the kernels with the most time in that work per step and device
    (from ``found.top_kernels`` with ``where`` a device alone, else counted here)."""
    if where.is_whole() or not found.count:
        return found
    import polars as pl

    totals = None
    if _by_work(where):
        frame, top = _recounted(trace, found, where, top_kernels)
    else:
        frame, top = _on_device(found, where.device)
        if found.kernel_totals is not None:
            totals = found.kernel_totals.filter(pl.col("device") == where.device)
    return replace(
        found,
        frame=frame,
        detail=found.detail + _restriction(found, frame, where),
        top_kernels=top,
        kernel_totals=totals,
    )


def _by_work(where: EventFilter) -> bool:
    """Whether ``where`` keeps part of a device's work (a process, a stream, a window, a
    selection): each step's row is then recounted from its work that passes."""
    return any(v is not None for k, v in where.params().items() if k != "device")


def _on_device(found: Steps, device: int) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The steps table's rows of ``device``, and their top kernels."""
    import polars as pl

    on = pl.col("device") == device
    top = found.top_kernels
    return found.frame.filter(on), None if top is None else top.filter(on)


def _restriction(found: Steps, frame: pl.DataFrame, where: EventFilter) -> str:
    """'; restricted to process 200: each step's GPU work there (steps 1, 2, ... hold none,
    left out)' for the title; a window also names the steps it holds only in part."""
    from .stepwork import _window_text

    what = [
        f"{noun} {value}"
        for noun, value in (("device", where.device), ("process", where.pid),
                            ("stream", where.stream))
        if value is not None
    ]  # fmt: skip
    if where.selection is not None:
        what.append("the selected GPU work")
    t0, t1 = _asked_window(where)
    if t0 is not None or t1 is not None:
        what.append(f"the {_window_text(t0, t1)}")
    on = " and ".join(what)
    every = sorted(found.frame["step"].unique().to_list())
    held = set(frame["step"].unique().to_list())
    if not held:
        return f"; restricted to {on}: none of them holds GPU work there"
    empty = [s for s in every if s not in held]
    said = []
    if part := _in_part(found, where, held):
        said.append(f"{_steps(part)} only in part")
    if empty:
        said.append(f"{_steps(empty)} {'holds' if len(empty) == 1 else 'hold'} none, left out")
    more = f" ({'; '.join(said)})" if said else ""
    return f"; restricted to {on}: each step's GPU work there{more}"


def _steps(numbers: list[int]) -> str:
    return f"{'step' if len(numbers) == 1 else 'steps'} {_list(numbers)}"


def _in_part(found: Steps, where: EventFilter, held: set[int]) -> list[int]:
    """The steps of ``held`` whose GPU span (on ``where``'s device, if any) reaches out of
    ``where``'s window as asked: the window holds only part of their work."""
    import polars as pl

    t0, t1 = _asked_window(where)
    if t0 is None and t1 is None:
        return []
    rows = found.frame.filter(pl.col("step").is_in(list(held)))
    if where.device is not None:
        rows = rows.filter(pl.col("device") == where.device)
    out = pl.lit(False)
    if t0 is not None:
        out = out | (pl.col("start_ns") < t0)
    if t1 is not None:
        out = out | (pl.col("end_ns") > t1)
    return sorted(rows.filter(out)["step"].unique().to_list())


def _asked_window(where: EventFilter) -> tuple[int | None, int | None]:
    """``where``'s window as the caller asked it: an NVTX or step selection narrows the
    filter's window to the selected work's span (filters.window_to_selection), which is
    neither asked nor a cut through any step's selected work."""
    if where.asked_window is not None:
        return where.asked_window
    return where.start_ns, where.end_ns


def _candidates(found: Steps, where: EventFilter) -> list[int]:
    """The steps whose GPU span (on ``where``'s device, if any) is in ``where``'s window,
    as an event passes it (:func:`tracelens.filters.in_window`). Only their work is listed
    and recounted (a window over a few of thousands of steps reads a few)."""
    import polars as pl

    from .filters import in_window

    rows = found.frame
    if where.device is not None:
        rows = rows.filter(pl.col("device") == where.device)
    if where.start_ns is not None or where.end_ns is not None:
        start, end = pl.col("start_ns"), pl.col("end_ns")
        rows = rows.filter(in_window(start, end, where.start_ns, where.end_ns))
    return sorted(rows["step"].unique().to_list())


def _recounted(
    trace: Trace, found: Steps, where: EventFilter, top_kernels: int
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Each step's rows counted from its work that passes ``where`` (one per step and
    device that holds some), with the trace's flags; and the top kernels of that work."""
    import polars as pl

    from . import _resources
    from .stepwork import _registered, _step_work

    steps = _candidates(found, where)
    if not steps:
        return found.frame.clear(), None
    # the window in the work's scan: a window over a few of thousands of steps reads their
    # work there, not all of theirs (steps_passing_work keeps only that anyway)
    query, bounds, params = _step_work(found, steps[0], steps[-1], where, window=True)
    # the windows of period steps are computed before this (each to the next step's start)
    bounds = bounds.filter(pl.col("step").is_in(steps))
    con = trace.db
    with _registered(trace, bounds):
        con.execute("CREATE OR REPLACE TEMP TABLE step_work AS " + _resources.query(query), params)
    try:
        ops = trace.query("steps_passing_work", **where.params())
    finally:
        con.execute("DROP TABLE IF EXISTS step_work")
    return _rows(ops, found), _top_kernels(trace, ops, top_kernels)


def _top_kernels(trace: Trace, ops: pl.DataFrame, top: int) -> pl.DataFrame | None:
    """The ``top`` kernels per step and device of ``ops`` (the rows of
    ``steps_passing_work``), as ``queries/steps_top_kernels.sql`` ranks them over the same
    work (its kernels joined with step_work), from these rows: that query read every
    kernel of the trace again (~1.8 CPU s of the 5M-kernel bench trace). None for 0."""
    import polars as pl

    from .steps_ranges import ranked_kernels

    if top <= 0:
        return None
    totals = (
        ops.filter("is_kernel")
        .group_by("step", "device", "name_id")
        .agg(
            calls=pl.len().cast(pl.Int64),
            total_ns=(pl.col("end") - pl.col("start")).sum().cast(pl.Int64),
        )
    )
    return ranked_kernels(trace, totals, top)


def _rows(ops: pl.DataFrame, found: Steps) -> pl.DataFrame:
    """The steps table (:data:`tracelens.steps.FRAME_COLUMNS`) of ``ops`` (the rows of
    ``steps_passing_work``), with the warm-up and outlier flags of ``found``'s rows."""
    import polars as pl

    from .steps_ranges import _busy

    if ops.is_empty():
        return found.frame.clear()
    kernel, start, end = pl.col("is_kernel"), pl.col("start"), pl.col("end")
    rows = (
        ops.group_by("step", "device")
        .agg(
            start_ns=start.min(),
            end_ns=end.max(),
            kernels=kernel.sum().cast(pl.Int64),
            kernel_ns=(end - start).filter(kernel).sum().cast(pl.Int64),
        )
        .join(_busy(ops), on=["step", "device"])
        .join(_cpu_spans(ops, found.ranges), on=["step", "device"], how="left")
        .join(
            found.frame.select("step", "device", "warmup", "outlier"),
            on=["step", "device"],
            how="left",
        )
        .with_columns(
            pl.col("warmup", "outlier").fill_null(False),
            duration_ns=pl.col("end_ns") - pl.col("start_ns"),
        )
        .sort("step", "device")
    )
    return rows.select(FRAME_COLUMNS).cast(found.frame.schema)


def _cpu_spans(ops: pl.DataFrame, ranges: pl.DataFrame | None) -> pl.DataFrame:
    """Per step and device (step, device, cpu_start_ns, cpu_end_ns): for NVTX steps, the
    earliest start and latest end of the step's ranges in the processes whose work in it
    passes; for period steps (no ranges) none."""
    import polars as pl

    keys = ops.select("step", "device", "pid").unique()
    if ranges is None:
        return keys.select(
            "step",
            "device",
            cpu_start_ns=pl.lit(None, dtype=pl.Int64),
            cpu_end_ns=pl.lit(None, dtype=pl.Int64),
        ).unique()
    of_process = ranges.select(
        "step", "cpu_start_ns", "cpu_end_ns", pid=(pl.col("global_tid") // (1 << 24)) % (1 << 24)
    )
    return (
        keys.join(of_process, on=["step", "pid"])
        .group_by("step", "device")
        .agg(pl.col("cpu_start_ns").min(), pl.col("cpu_end_ns").max())
    )
