"""``tracelens steps --device/--pid/--stream``: the trace's steps, restricted to that work.

Every other command's ``--step N`` is the trace's step N (the number ``tracelens steps``
prints without filters) narrowed to the device, process or stream
(:func:`tracelens.stepwork.select_steps`). So ``steps`` with those filters shows the same
steps, not the steps of a search inside the filtered work (whose own period or ranges would
become steps numbered from 1: with two processes on one GPU, process 200's iterations
would be steps 1 to 6 there and steps 7 to 12 everywhere else). Each step's row on a device
is then the filtered work of the step there, as ``--step N`` with the same filters
selects it; steps that hold none of it are left out, and the title says which.

``--device`` alone keeps the steps table's rows of that device (a step's row on a device is
its work there). ``--pid`` and ``--stream`` recount each step's row from its work that
passes (``queries/steps_passing_work.sql``): first start, last end, busy (the union of its
operations), kernels and their time; for NVTX steps the CPU span is that of the step's
ranges in the processes whose work passes. Warm-up and outlier flags stay the trace's
(a step is warm-up or an outlier of the program, not of one of its streams). A
``--start/--end`` window still bounds the search, as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .filters import EventFilter
from .steps import FRAME_COLUMNS, Steps, _list

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["steps_within"]


def steps_within(
    trace: Trace,
    range: str | None = None,  # noqa: A002
    where: EventFilter | None = None,
    top_kernels: int = 3,
) -> Steps:
    """The steps of ``trace`` (searched within ``where``'s window alone, with ``range``:
    :func:`tracelens.stepwork.step_report`) restricted to ``where``'s device, process and
    stream (see the module docstring); ``top_kernels`` per step and device, of that work."""
    from .stepwork import step_report

    where = where or EventFilter()
    if where.device is None and where.pid is None and where.stream is None:
        return step_report(trace, range=range, where=where, top_kernels=top_kernels)
    rest = replace(where, device=None, pid=None, stream=None)
    by_work = where.pid is not None or where.stream is not None
    found = step_report(trace, range=range, where=rest, top_kernels=0 if by_work else top_kernels)
    if not found.count:
        return found
    if by_work:
        frame, top = _recounted(trace, found, where, top_kernels)
    else:
        frame, top = _on_device(found, where.device)
    return replace(
        found,
        frame=frame,
        detail=found.detail + _restriction(found, frame, where),
        top_kernels=top,
        kernel_totals=None,
    )


def _on_device(found: Steps, device: int) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The steps table's rows of ``device``, and their top kernels."""
    import polars as pl

    on = pl.col("device") == device
    top = found.top_kernels
    return found.frame.filter(on), None if top is None else top.filter(on)


def _restriction(found: Steps, frame: pl.DataFrame, where: EventFilter) -> str:
    """'; restricted to process 200: each step's GPU work there (steps 1, 2, ... hold none,
    left out)' for the title."""
    what = [
        f"{noun} {value}"
        for noun, value in (("device", where.device), ("process", where.pid),
                            ("stream", where.stream))
        if value is not None
    ]  # fmt: skip
    on = " and ".join(what)
    every = sorted(found.frame["step"].unique().to_list())
    held = set(frame["step"].unique().to_list())
    if not held:
        return f"; restricted to {on}: none of them holds GPU work there"
    empty = [s for s in every if s not in held]
    if not empty:
        return f"; restricted to {on}: each step's GPU work there"
    noun = "step" if len(empty) == 1 else "steps"
    verb = "holds" if len(empty) == 1 else "hold"
    return f"; restricted to {on}: each step's GPU work there ({noun} {_list(empty)} {verb} none, left out)"


def _recounted(
    trace: Trace, found: Steps, where: EventFilter, top_kernels: int
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Each step's rows counted from its work that passes ``where`` (one per step and
    device that holds some), with the trace's flags; and the top kernels of that work."""
    from . import _resources
    from .stepwork import _registered, _step_work

    first, last = int(found.frame["step"].min()), int(found.frame["step"].max())
    query, bounds, params = _step_work(found, first, last)
    con = trace.db
    with _registered(trace, bounds):
        con.execute("CREATE OR REPLACE TEMP TABLE step_work AS " + _resources.query(query), params)
    try:
        ops = trace.query("steps_passing_work", **where.params())
        top = None
        if top_kernels > 0:
            top = trace.query("steps_top_kernels", top=top_kernels, **where.params())
    finally:
        con.execute("DROP TABLE IF EXISTS step_work")
    return _rows(ops, found), top


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
