"""The run's steps across its ranks: the rank x step matrix with the waits of the
collectives that started in each step, the rank each step waited for, and the run's step
count (what the waits per step divide by). Made by :func:`.reduce.reduce` once the calls are
paired into instances and their waits known.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .rules import ranks_rules
from .sequence import step_shifts
from .summary import stack_ranks

if TYPE_CHECKING:
    import polars as pl


def steps_with_waits(
    summaries, calls: pl.DataFrame, moved: list[int], reference: int | None
) -> tuple[pl.DataFrame, dict[int, int]]:
    """The rank x step matrix (long form) with the waits of the collectives that started
    in each step (on the rank's own clock), and what was added to the step numbers of the
    ranks whose captures started at other steps (``moved``: the ranks whose calls were
    renumbered; :func:`.sequence.step_shifts`)."""
    import polars as pl

    steps = stack_ranks(
        summaries, "steps", {"rank": pl.Int64, "step": pl.Int64, "warmup": pl.Boolean}
        | {c: pl.Int64 for c in ("start_ns", "end_ns", "duration_ns")},
    )  # fmt: skip
    if steps.is_empty():
        return pl.DataFrame(
            schema={
                "rank": pl.Int64,
                "step": pl.Int64,
                "warmup": pl.Boolean,
                "duration_ns": pl.Int64,
                "wait_ns": pl.Int64,
                "active_ns": pl.Int64,
                "caused_ns": pl.Int64,
            }
        ), {}
    steps = steps.sort("rank", "start_ns")
    placed = (
        calls.select("rank", "comm", "seq", "start_ns", "wait_ns", "caused_ns")
        .sort("rank", "start_ns")
        .join_asof(
            steps.select("rank", "step", pl.col("start_ns").alias("step_start"), "end_ns"),
            left_on="start_ns",
            right_on="step_start",
            by="rank",
            strategy="backward",
            check_sortedness=False,  # sorted by (rank, start) above
        )
        .filter(pl.col("start_ns") <= pl.col("end_ns"))
    )
    moves = step_shifts(placed, moved, reference)
    if moves:
        move = pl.col("rank").replace_strict(moves, default=0, return_dtype=pl.Int64)
        steps = steps.with_columns(step=pl.col("step") + move)
        placed = placed.with_columns(step=pl.col("step") + move)
    per_step = placed.group_by("rank", "step").agg(
        pl.col("wait_ns").sum(), pl.col("caused_ns").sum()
    )
    frame = (
        steps.join(per_step, on=["rank", "step"], how="left")
        .with_columns(pl.col("wait_ns", "caused_ns").fill_null(0))
        .with_columns(active_ns=pl.col("duration_ns") - pl.col("wait_ns"))
        .select("rank", "step", "warmup", "duration_ns", "wait_ns", "active_ns", "caused_ns")
        .sort("step", "rank")
    )
    return frame, moves


def step_stragglers(steps: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    on_time = ranks_rules().on_time_ns
    worst = pl.col("caused_ns") == pl.col("caused_ns").max()
    return (
        steps.group_by("step")
        .agg(
            ranks=pl.len().cast(pl.Int64),
            straggler_rank=pl.when(pl.col("caused_ns").max() >= on_time).then(
                pl.col("rank").filter(worst).min()
            ),
            caused_ns=pl.col("caused_ns").max(),
            # none when no rank is slower than the median (every rank as active: naming the
            # lowest of equals would call rank 0 the slowest of a run without one)
            slowest_active_rank=pl.when(
                pl.col("active_ns").max() > pl.col("active_ns").median()
            ).then(pl.col("rank").filter(pl.col("active_ns") == pl.col("active_ns").max()).min()),
            slowest_active_ns=pl.col("active_ns").max(),
            median_active_ns=pl.col("active_ns").median().round().cast(pl.Int64),
            median_duration_ns=pl.col("duration_ns").median().round().cast(pl.Int64),
        )
        .sort("step")
    )


def run_step_count(ranks: pl.DataFrame) -> int:
    """The run's step count: the most common count across ranks (0 without steps)."""
    counts = [c for c in ranks["steps"].to_list() if c] if ranks.height else []
    return Counter(counts).most_common(1)[0][0] if counts else 0
