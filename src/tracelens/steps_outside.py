"""What the steps leave out, said rather than dropped silently (:attr:`tracelens.steps.Steps.
outside`): the GPU launches in no step, before the first step (a capture that started in
the middle of an iteration, or the set-up before the loop), between steps and after the
last step (the work after the loop: an evaluation, a checkpoint), and the step ranges of
threads that do not define the steps.

Steps from NVTX ranges are numbered per thread (``queries/_step_ranges.sql``). In one
process, on each GPU, the thread whose step ranges launched the most GPU work there
defines the steps; the matching ranges of its other threads that launched less there (a
data loader's own ``step N`` ranges, run beside the training loop's) are left out and
counted, rather than numbered into one sequence with the launching thread's (which
interleaved them: 12 'steps' of 6 iterations). A process that drives each GPU from a loop
thread of its own keeps every loop, each defining its GPU's steps, as each rank of a
multi-process job defines its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .views import plural

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Outside:
    """The launches in no step and the step ranges left out. ``before``, ``between``,
    ``after``: GPU launches (kernels, copies, memsets, graph replays; for steps from the
    launch period, the launches the period is searched in: kernels and graph replays)
    before the first step, between two steps and after the last one (for NVTX steps, those
    launched from the steps' threads: before the first step range of their thread, ...).
    ``left_ranges``, ``left_threads``: step ranges of threads that do not define the steps
    (another thread of the process launched more in its own, to the same GPUs), and how
    many threads;
    ``left_launches``: the GPU launches made inside those ranges (in no step)."""

    before: int = 0
    between: int = 0
    after: int = 0
    left_ranges: int = 0
    left_threads: int = 0
    left_launches: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def words(self) -> str:
        """For NVTX steps: '; 12 launches before step 1's range, 3 after the last step: in
        no step' (a capture that started inside an iteration, or the set-up before the
        loop; the work after it) and the ranges left out; '' when nothing is."""
        text = ""
        where = [
            (self.before, "before step 1's range"),
            (self.between, "between steps"),
            (self.after, "after the last step"),
        ]
        # the first count says what is counted: '3 launches between steps, 4 after the last'
        parts = [f"{n:,} {place}" for n, place in where if n]
        if parts:
            first = next(n for n, _ in where if n)
            parts[0] = f"{plural(first, 'launch', 'launches')} {parts[0].split(' ', 1)[1]}"
            text += "; " + ", ".join(parts) + ": in no step"
        if self.left_ranges:
            launched = (
                f", which launched {plural(self.left_launches, 'GPU operation')} in them "
                "(in no step)"
                if self.left_launches
                else ", which launched no GPU work in them"
            )
            text += (
                f"; {plural(self.left_ranges, 'matching range')} of "
                f"{plural(self.left_threads, 'other thread')}{launched}, left out: on each "
                "GPU, a process's steps are those of its thread whose ranges launched the most "
                "there"
            )
        return text


def launching_threads(steps: pl.DataFrame, ops: pl.DataFrame) -> pl.Series:
    """The threads (globalTids) that define the steps: per process (globalTid >> 24) and
    device, the thread whose step ranges hold the most of ``ops`` launched to it (their
    ``range``, none NULL: a 1-based row of ``steps``, steps_range_list's rows; and
    ``device``; the first-starting thread of equals). A process that drives each GPU from
    a thread of its own (one training loop per GPU) keeps every loop, each on its device,
    also when a loop launches a little to another loop's GPU; a data loader's ranges beside
    the loop (less work on the loop's device) stay out. A process whose ranges hold work on
    no known device keeps the thread whose ranges hold the most; one none of whose ranges
    holds work keeps all its threads (nothing to choose by)."""
    import polars as pl

    tid = pl.col("globalTid")
    owner = ops.select(globalTid=steps["globalTid"].gather(ops["range"] - 1), device="device")
    first = steps.group_by("globalTid").agg(first=pl.col("range").min())

    def busiest(work: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        # per ``keys``, the thread whose ranges hold the most of ``work``
        held = work.group_by("globalTid", *keys[1:]).agg(held=pl.len())
        return (
            held.join(first, on="globalTid", how="left")
            .with_columns(process=tid // (1 << 24))
            .sort(["held", "first"], descending=[True, False])  # equals: the first to start
            .group_by(keys, maintain_order=True)
            .first()
        )

    # not "the busiest thread, then those launching only to other GPUs": a loop that also
    # launched to the other loop's GPU took that GPU's steps, the other loop left out
    per_device = busiest(owner.drop_nulls("device"), ["process", "device"])
    per_process = busiest(owner, ["process"])
    chosen = pl.concat(
        [
            per_device["globalTid"],
            per_process.filter(~pl.col("process").is_in(per_device["process"].implode()))[
                "globalTid"
            ],
        ]
    ).unique()
    kept = chosen.cast(pl.Int64)
    threads = first.with_columns(process=tid // (1 << 24))
    idle = threads.filter(~pl.col("process").is_in((kept // (1 << 24)).implode()))
    return pl.concat([kept, idle["globalTid"].cast(pl.Int64)]).sort()


def range_outside(
    steps: pl.DataFrame, ops: pl.DataFrame, tids: list[int], kept: pl.Series
) -> Outside:
    """What the NVTX steps leave out: ``ops`` (the operations launched from the threads
    ``tids``: thread, a 1-based position in it, call_key, and range, NULL in none) that are
    in no step, on the threads ``kept`` (those that define the steps), by where their call
    lies against its thread's step ranges (``steps``: steps_range_list's rows); and the
    ranges of the other threads with steps, and the operations in them."""
    import polars as pl

    bounds = (
        steps.filter(pl.col("globalTid").is_in(kept.implode()))
        .group_by("globalTid")
        .agg(first=pl.col("start").min() * 3, last=pl.col("end").max() * 3 + 1)
    )
    positions = pl.DataFrame(
        {"globalTid": tids, "thread": range(1, len(tids) + 1)},
        schema={"globalTid": pl.Int64, "thread": pl.Int32},
    )
    bounds = bounds.join(positions, on="globalTid").drop("globalTid")
    loose = ops.select("thread", "call_key", "range").filter(pl.col("range").is_null())
    where = loose.join(bounds, on="thread").select(
        before=(pl.col("call_key") < pl.col("first")).sum(),
        after=(pl.col("call_key") > pl.col("last")).sum(),
        all=pl.len(),
    )
    before, after, total = where.row(0)
    left = steps.filter(~pl.col("globalTid").is_in(kept.implode()))
    in_left = 0
    if left.height:
        owner = steps["globalTid"].gather(ops["range"].drop_nulls() - 1)
        in_left = int((~owner.is_in(kept.implode())).sum())
    return Outside(
        before=int(before or 0),
        between=int((total or 0) - (before or 0) - (after or 0)),
        after=int(after or 0),
        left_ranges=left.height,
        left_threads=left["globalTid"].n_unique(),
        left_launches=in_left,
    )
