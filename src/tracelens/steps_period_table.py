"""The per-step table of the period steps (:mod:`tracelens.steps_period`): per step, its GPU
start and end, busy time, kernels and kernel time, from the step's launches and the
device's copies and memsets in its window (:func:`_copies_in_steps`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


def _per_step(steps: pl.DataFrame, copies: pl.DataFrame, bound: int | None) -> pl.DataFrame:
    """Per step: GPU start (its first launch), end, duration, busy (the union of its
    launches and of the copies and memsets in its window: :func:`_copies_in_steps`),
    kernels and kernel time (kernels only: a replay's kernels are not in the export)."""
    import polars as pl

    kernel = pl.col("is_kernel")
    held = pl.concat(
        [
            steps.select("step", "start_ns", "end_ns", is_kernel=pl.col("token") > -2),
            _copies_in_steps(steps, copies, bound).with_columns(is_kernel=pl.lit(False)),
        ]
    )
    return (
        held.group_by("step")
        .agg(
            start_ns=pl.col("start_ns").min(),
            end_ns=pl.col("end_ns").max(),
            kernels=kernel.sum().cast(pl.Int64),
            kernel_ns=(pl.col("end_ns") - pl.col("start_ns")).filter(kernel).sum(),
        )
        .join(_busy(held), on="step")
        .with_columns(
            cpu_start_ns=pl.lit(None, dtype=pl.Int64),
            cpu_end_ns=pl.lit(None, dtype=pl.Int64),
            duration_ns=pl.col("end_ns") - pl.col("start_ns"),
        )
        .sort("step")
    )


def _copies_in_steps(steps: pl.DataFrame, copies: pl.DataFrame, bound: int | None) -> pl.DataFrame:
    """The ``copies`` (one device's memcpys and memsets: start_ns, end_ns, in start order)
    in some step's window, with their step (step, start_ns, end_ns): those that start from
    the step's first launch up to, not including, the next step's in time (as ``stepwork``
    selects a step's work, ``queries/steps_window_work.sql``). No next step bounds the last one:
    its copies are those that run within the median step length (from one step's start to
    the next's) of its start, and start before ``bound`` (the next launch outside the
    steps, if any): the copy that reads the loss back is the step's, the copy of the
    results after the loop is not."""
    import polars as pl

    # In time: with several processes on the device, the steps are numbered one process
    # after another and run at once; windows must not overlap (stepwork._period_windows).
    windows = (
        steps.group_by("step")
        .agg(start=pl.col("start_ns").min())
        .sort("start", "step")
        .with_columns(end=pl.col("start").shift(-1))
    )
    last = windows.row(-1, named=True)
    length = windows.select((pl.col("end") - pl.col("start")).median()).item()
    fits = last["start"] + int(length)
    end = fits if bound is None else min(fits, bound)
    windows = windows.with_columns(end=pl.col("end").fill_null(end))
    found = copies.select("start_ns", "end_ns").join_asof(
        windows, left_on="start_ns", right_on="start", strategy="backward"
    )
    inside = pl.col("step").is_not_null() & (pl.col("start_ns") < pl.col("end"))
    last_fits = (pl.col("step") != last["step"]) | (pl.col("end_ns") <= fits)
    return found.filter(inside & last_fits).select("step", "start_ns", "end_ns")


def _busy(held: pl.DataFrame) -> pl.DataFrame:
    """Per step (step, busy_ns): the length of the union of its operations' intervals, a
    sweep in GPU start order: each operation adds what it runs past the latest end before
    it. Why not the islands of overlapping operations, each one's span summed: a loop's
    kernels rarely overlap, so nearly every kernel is an island of its own, and grouping by
    (step, island) took 0.95 s per 1.25M operations in 1,250 steps, this 0.1 s
    (bench/make_trace.py --loop)."""
    import polars as pl

    ordered = held.sort("step", "start_ns", maintain_order=True)
    latest = pl.col("end_ns").cum_max().shift(1).over("step")
    gain = (pl.col("end_ns") - pl.max_horizontal("start_ns", latest)).clip(lower_bound=0)
    return ordered.group_by("step").agg(busy_ns=gain.sum())
