"""The reduce step: per-rank summaries -> one :class:`RanksResult` for the whole run.

Clocks first. Each export counts from its own session start, and hosts' clocks disagree,
so times are put on one base in two moves: the recorded session starts (UTC) first, then
the ranks are aligned on collective *end* times, because a collective completes on every
rank at once (each rank gets the correction that makes its ends agree, at the median, with
the reference rank's: the lowest rank that runs collectives).

A capture that started at another call than the reference's (a late ``nsys start`` on one
node) has its calls renumbered first (:mod:`.sequence`), so that the k-th calls pair.

Then waits. The k-th call on a communicator is one collective instance across ranks (the
calls of another collective than most ranks' k-th are left out of the clocks and the waits:
that rank skipped or added a call, which ``consistency`` names; so is a rank whose ends
still disagree with the reference's after aligning); the spread of its (aligned) start
times is how long the earliest rank waited for the last one. Each rank's wait in an
instance is the last start minus its own; the last rank "caused" the instance's spread.
Summed per rank and collective kind, divided by the steps, that is "rank 5 made the others
wait 38 ms per step in AllReduce"; summed per rank and step, the rank x step matrix
(:mod:`.step_waits`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..escape import encodable
from ..results import Result
from .comms import match_communicators
from .consistency import inconsistencies
from .findings import findings
from .rules import ranks_rules
from .sequence import (
    capture_findings,
    ranks_call_shifts,
    renumber,
    separate_sessions,
    session_offsets,
)
from .step_waits import run_step_count, step_stragglers, steps_with_waits
from .summary import stack_ranks

if TYPE_CHECKING:
    import polars as pl

    from .processes import SetAside
    from .summary import RankFailure, RankSummary


@dataclass(frozen=True)
class RanksResult(Result):
    """A run seen across its ranks. Times in ns; frames are polars.

    - ``ranks``: one row per analysed rank: rank, path, rank_source (where the rank number
      came from: 'MPI_RANKS', 'NCCL ncclCommInitRank', 'environment RANK', 'file name',
      '--rank-regex', 'GPU order', 'file, then GPU order', 'the only export'), the summary's overview columns
      (span, busy, compute, exposed communication, top kernel, danger, steps,
      steady step time...), ``waited_ns`` (time it waited for later ranks in collectives),
      ``caused_ns`` (the spreads of the instances it was last in), ``clock_correction_ns``.
    - ``steps``: the rank x step matrix, long form: rank, step, warmup, duration_ns,
      wait_ns (waiting in collectives that started in the step), active_ns (duration -
      wait), caused_ns; :meth:`step_matrix` pivots it.
    - ``step_stragglers``: per step, the rank the others waited for (straggler_rank,
      caused_ns = its lateness summed over the step's collectives; null when on time) and
      the spread of active time (slowest_active_ns - median_active_ns; slowest_active_rank
      null when no rank is slower than the median).
    - ``collectives``: one row per instance: comm, seq, kind, ranks, first_rank and
      late_rank (null when on time), spread_ns, total_wait_ns (summed over ranks).
    - ``waits``: rank x collective kind: late_calls, caused_ns, caused_per_step_ns (over
      the run's steps its calls cover: its share of the calls most ranks make), waited_ns.
    - ``clock``: rank, session_offset_ns (from the recorded session starts),
      correction_ns (added after that, from collective ends; null when none of its calls
      paired with the reference's), matched (instances used), residual_ns (largest end
      disagreement left).
    - ``inconsistencies``: rank, what ('kernel set', 'collectives'), detail.
    - ``failures``: path, rank (from its file name; null when the names do not carry the
      ranks), reason (files that could not be analysed).
    - ``set_aside``: the processes of an export that ran kernels but are not ranks (a
      data-loader worker...), each with its path, pid, kernels, GPU and why
      (:mod:`.processes`).
    """

    ranks: pl.DataFrame
    steps: pl.DataFrame
    step_stragglers: pl.DataFrame
    collectives: pl.DataFrame
    waits: pl.DataFrame
    clock: pl.DataFrame
    inconsistencies: pl.DataFrame
    failures: pl.DataFrame
    missing_ranks: tuple[int, ...]
    reference_rank: int | None
    findings: tuple[str, ...]
    set_aside: tuple[SetAside, ...] = ()

    def rank_sources(self) -> list[tuple[str, int]]:
        """Where the rank numbers came from (``rank_source``) and for how many ranks, the
        most common first: [('file name', 8)]."""
        counts = Counter(s for s in self.ranks["rank_source"].to_list() if s is not None)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def step_matrix(self, value: str = "duration_ns") -> pl.DataFrame:
        """One row per rank, one column per step of ``value`` (a column of :attr:`steps`),
        named ``step_1_ns``... (the unit suffix kept so that renderers convert it). A rank
        with no steps (a capture too short to find steps in) has its row, of nulls."""
        import polars as pl

        wide = self.steps.select(
            "rank", pl.format("step_{}_ns", "step").alias("col"), pl.col(value)
        ).pivot(on="col", index="rank", values=value)
        return every_rank(wide, self.ranks)

    def tables(self) -> dict[str, pl.DataFrame]:
        """ranks (one row per rank, the main table), steps, step_stragglers, collectives,
        waits, clock, inconsistencies."""
        return {
            "ranks": self.ranks,
            "steps": self.steps,
            "step_stragglers": self.step_stragglers,
            "collectives": self.collectives,
            "waits": self.waits,
            "clock": self.clock,
            "inconsistencies": self.inconsistencies,
        }


def every_rank(wide: pl.DataFrame, ranks: pl.DataFrame) -> pl.DataFrame:
    """``wide`` (a rank x step matrix: ``rank``, then a column per step) with a row for
    every rank of ``ranks``, of nulls for the ranks it lacks, in rank order."""
    return ranks.select("rank").join(wide, on="rank", how="left").sort("rank")


def reduce(
    summaries: list[tuple[int, RankSummary]],
    failures: list[tuple[int | None, RankFailure]],
    sources: dict[str, str] | None = None,
    set_aside: tuple[SetAside, ...] = (),
    *,
    gaps_known: bool = True,
) -> RanksResult:
    """Combine the summaries of one run's ranks (``(rank, summary)``) and the files that
    failed; deterministic whatever order they come in. ``sources``: path -> where its rank
    came from (the ranks table's rank_source; null when not given); ``set_aside``: the
    processes that ran kernels but are not ranks (:mod:`.processes`). ``gaps_known``: the
    numbers say which ranks are missing (False: numbers taken from file names of no one
    pattern, whose gaps say nothing: no rank is called missing)."""
    import polars as pl

    summaries = sorted(summaries, key=lambda rs: rs[0])
    ranks = _ranks_frame(summaries, sources or {})
    # another run's capture (a session hours apart) has no call in common with this run's
    separate = separate_sessions(ranks)
    colls = _collectives(summaries).filter(~pl.col("rank").is_in(separate))
    # a capture that started inside a step numbers its streams in another order: its
    # communicators take the reference's numbers first (:mod:`.comms`); then the captures
    # that started at other calls are renumbered, before the k-th calls are paired
    colls = match_communicators(colls, _reference(ranks, colls))
    shifts = ranks_call_shifts(ranks, colls, _reference(ranks, colls))
    colls = renumber(colls, shifts)
    clock = _clock(ranks, colls)
    colls = colls.join(clock.select("rank", "shift_ns"), on="rank").with_columns(
        start_a=pl.col("start_ns") + pl.col("shift_ns")
    )
    # A rank whose calls do not pair with the reference's would make nonsense waits: out.
    unpaired = _unpaired_ranks(clock)
    instances, calls = _instances(_same_kind(colls).filter(~pl.col("rank").is_in(unpaired)))
    moved = sorted(set(shifts["rank"].to_list()))
    steps, step_moves = steps_with_waits(summaries, calls, moved, _reference(ranks, colls))
    n_steps = run_step_count(ranks)
    waits = _waits(calls, n_steps)
    ranks = _with_waits_and_clock(ranks, calls, clock)
    spans = {
        rank: (first, last)
        for rank, first, last in steps.group_by("rank")
        .agg(first=pl.col("step").min(), last=pl.col("step").max())
        .iter_rows()
    }
    # the inconsistencies: of every call, the odd ones included
    result = RanksResult(
        ranks=ranks,
        steps=steps,
        step_stragglers=step_stragglers(steps),
        collectives=instances,
        waits=waits,
        clock=clock.drop("shift_ns"),
        inconsistencies=inconsistencies(
            summaries,
            colls,
            spans,
            placed=ranks["session_start_utc_ns"].null_count() == 0,
            unpaired=unpaired,
        ),
        failures=_failures_frame(failures),
        missing_ranks=_missing_ranks(ranks, failures) if gaps_known else (),
        reference_rank=_reference(ranks, colls),
        findings=(),
        set_aside=set_aside,
    )
    captures = capture_findings(shifts, steps, step_moves, result.reference_rank, colls)
    return replace(result, findings=findings(result, n_steps, unpaired, captures, separate))


def _with_waits_and_clock(
    ranks: pl.DataFrame, calls: pl.DataFrame, clock: pl.DataFrame
) -> pl.DataFrame:
    """The ranks table with each rank's waited_ns and caused_ns summed over its calls in
    the waits (null without any: not measured, not 0) and its clock_correction_ns."""
    import polars as pl

    per_rank = calls.group_by("rank").agg(
        waited_ns=pl.col("wait_ns").sum(), caused_ns=pl.col("caused_ns").sum()
    )
    return (
        ranks.join(per_rank, on="rank", how="left")
        .join(
            clock.select("rank", pl.col("correction_ns").alias("clock_correction_ns")),
            on="rank",
            how="left",
        )
        .sort("rank")
    )


def _missing_ranks(
    ranks: pl.DataFrame, failures: list[tuple[int | None, RankFailure]]
) -> tuple[int, ...]:
    """The ranks between the lowest and the highest seen (analysed, or named by a failed
    file) that were not analysed; none when those are further apart than any run's ranks
    (``ranks.toml`` ``[missing] max_span``: process ids or time stamps, not ranks)."""
    found = set(ranks["rank"].to_list())
    expected = found | {r for r, _ in failures if r is not None}
    if not expected or max(expected) - min(expected) >= ranks_rules().missing_max_span:
        return ()  # (not len(range): past 2**63 numbers it overflows)
    return tuple(r for r in range(min(expected), max(expected) + 1) if r not in found)


def _failures_frame(failures: list[tuple[int | None, RankFailure]]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(
        {
            "path": [encodable(f.path) for _, f in failures],
            "rank": [r for r, _ in failures],
            "reason": [f.reason for _, f in failures],
        },
        schema={"path": pl.String, "rank": pl.Int64, "reason": pl.String},
    ).sort("path")


def _ranks_frame(summaries, sources: dict[str, str]) -> pl.DataFrame:
    import polars as pl

    rows = []
    for rank, s in summaries:
        row = s.overview.to_pylist()[0]
        # a file name that is not UTF-8 (surrogate escapes) as \xNN: polars cannot hold it
        path = encodable(s.path)
        rows.append({"rank": rank, "path": path, "rank_source": sources.get(s.path), **row})
    if not rows:
        from .summary import OVERVIEW_COLUMNS, TEXT_COLUMNS

        frame = pl.DataFrame(
            schema={"rank": pl.Int64, "path": pl.String, "rank_source": pl.String}
            | {n: pl.String if n in TEXT_COLUMNS else pl.Int64 for n, _ in OVERVIEW_COLUMNS}
        )
    else:
        frame = pl.DataFrame(rows)
    # pid tells apart the ranks of one export; with one rank per export the path does
    if frame["pid"].null_count() == frame.height:
        frame = frame.drop("pid")
    return frame


# Narrow types: a run can have hundreds of thousands of calls per rank times 1,000 ranks.
_COLL_SCHEMA = {
    "rank": "Int64",
    "comm": "Int16",
    "seq": "Int32",
    "kind": "Categorical",
    "start_ns": "Int64",
    "end_ns": "Int64",
}


def _collectives(summaries) -> pl.DataFrame:
    """Every collective call of every rank, on the UTC session base (ns from the earliest
    session start) where every rank recorded one, else on each trace's own clock."""
    import polars as pl

    return stack_ranks(
        summaries, "collectives", {k: getattr(pl, v) for k, v in _COLL_SCHEMA.items()}
    )


def _clock(ranks: pl.DataFrame, colls: pl.DataFrame) -> pl.DataFrame:
    """Per rank: session_offset_ns (session start minus the earliest one, 0 when any rank
    lacks it), correction_ns (median of reference end - own end over shared instances;
    null when none is shared: not measured, not 0), matched, residual_ns, and shift_ns =
    the two summed (what to add to its times; the offset alone without a correction)."""
    import polars as pl

    offsets = session_offsets(ranks)
    based = colls.join(offsets, on="rank").with_columns(
        end_b=pl.col("end_ns") + pl.col("session_offset_ns")
    )
    ref = _reference(ranks, colls)
    if ref is None:
        return offsets.with_columns(
            correction_ns=pl.lit(None, pl.Int64),
            matched=pl.lit(0, pl.Int64),
            residual_ns=pl.lit(None, pl.Int64),
            shift_ns=pl.col("session_offset_ns"),
        )
    ref_ends = based.filter(pl.col("rank") == ref).select(
        "comm", "seq", ref_end="end_b", ref_kind=pl.col("kind").cast(pl.String)
    )
    # A call of another collective than the reference's k-th is not the same instance (a
    # rank skipped or added a call): its end says nothing about the clocks.
    pairs = (
        based.join(ref_ends, on=["comm", "seq"])
        .filter(pl.col("kind").cast(pl.String) == pl.col("ref_kind"))
        .with_columns(delta=pl.col("ref_end") - pl.col("end_b"))
    )
    corr = pairs.group_by("rank").agg(
        correction_ns=pl.col("delta").median().round().cast(pl.Int64),
        matched=pl.len().cast(pl.Int64),
    )
    resid = (
        pairs.join(corr, on="rank")
        .group_by("rank")
        .agg(residual_ns=(pl.col("delta") - pl.col("correction_ns")).abs().max())
    )
    return (
        offsets.join(corr, on="rank", how="left")
        .join(resid, on="rank", how="left")
        .with_columns(pl.col("matched").fill_null(0))
        .with_columns(shift_ns=pl.col("session_offset_ns") + pl.col("correction_ns").fill_null(0))
        .sort("rank")
    )


def _unpaired_ranks(clock: pl.DataFrame) -> list[int]:
    """Ranks whose collective ends still differ from the reference's by more than
    ``clock_suspect_ns`` after aligning: their k-th calls are not the reference's k-th
    (skipped or extra calls of the same collective), so neither their correction nor
    their waits mean anything."""
    import polars as pl

    limit = ranks_rules().clock_suspect_ns
    return sorted(clock.filter(pl.col("residual_ns") > limit)["rank"].to_list())


def _reference(ranks: pl.DataFrame, colls: pl.DataFrame) -> int | None:
    return colls["rank"].min() if colls.height else None


def _same_kind(colls: pl.DataFrame) -> pl.DataFrame:
    """The calls that are their instance's collective (the kind most ranks run as their
    k-th call on the communicator): a rank that skipped a call would otherwise be matched
    with the others' next one, and its wait and theirs would be nonsense. The odd calls
    are named by ``consistency``."""
    import polars as pl

    kind = pl.col("kind").cast(pl.String)
    usual = colls.group_by("comm", "seq").agg(usual_kind=kind.mode().sort().first())
    return (
        colls.join(usual, on=["comm", "seq"])
        .filter(kind == pl.col("usual_kind"))
        .drop("usual_kind")
    )


def _instances(colls: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(one row per instance, every call with wait_ns, is_last and caused_ns)."""
    import polars as pl

    on_time = ranks_rules().on_time_ns
    key = ["comm", "seq"]
    bounds = (
        colls.group_by(key)
        .agg(first_start=pl.col("start_a").min(), last_start=pl.col("start_a").max())
        .with_columns(spread_ns=pl.col("last_start") - pl.col("first_start"))
    )
    calls = colls.join(bounds, on=key)
    late = pl.col("spread_ns") >= on_time
    # The last rank to arrive (the lowest rank among equals); none when the call is on time.
    last = (
        calls.filter(late & (pl.col("start_a") == pl.col("last_start")))
        .group_by(key)
        .agg(late_rank=pl.col("rank").min())
    )
    # The first rank to arrive likewise: on time, every rank started together, and the
    # lowest of them would be named first of every call of a run without a straggler.
    first = (
        calls.filter(late & (pl.col("start_a") == pl.col("first_start")))
        .group_by(key)
        .agg(first_rank=pl.col("rank").min())
    )
    calls = (
        calls.join(last, on=key, how="left")
        .with_columns(
            wait_ns=pl.when(late).then(pl.col("last_start") - pl.col("start_a")).otherwise(0),
            is_last=(pl.col("rank") == pl.col("late_rank")).fill_null(False),
        )
        .with_columns(caused_ns=pl.when(pl.col("is_last")).then(pl.col("spread_ns")).otherwise(0))
        .drop("late_rank", "first_start", "last_start")
    )
    instances = (
        calls.group_by(key)
        .agg(
            kind=pl.col("kind").cast(pl.String).mode().sort().first(),
            ranks=pl.len().cast(pl.Int64),
            spread_ns=pl.col("spread_ns").first(),
            total_wait_ns=pl.col("wait_ns").sum(),
        )
        .join(first, on=key, how="left")
        .join(last, on=key, how="left")
        .select(
            pl.col("comm", "seq").cast(pl.Int64),
            "kind",
            "ranks",
            pl.col("first_rank", "late_rank").cast(pl.Int64),
            "spread_ns",
            "total_wait_ns",
        )  # fmt: skip
        .sort("comm", "seq")
    )
    return instances, calls


def _waits(calls: pl.DataFrame, n_steps: int) -> pl.DataFrame:
    """Per rank and collective: its calls, the late ones, what it caused and waited, and
    what it caused per step of the run's ``n_steps`` that its calls cover: a rank whose
    capture holds 2 of the 6 AllReduces most ranks hold covers 2 steps (its 76 ms over
    the 6 were 12.67 ms 'per step', as if it had been on time in the 4 steps not seen)."""
    import polars as pl

    per_kind = (
        calls.with_columns(pl.col("kind").cast(pl.String))
        .group_by("rank", "kind")
        .agg(
            calls=pl.len().cast(pl.Int64),
            late_calls=pl.col("is_last").sum().cast(pl.Int64),
            caused_ns=pl.col("caused_ns").sum(),
            waited_ns=pl.col("wait_ns").sum(),
        )
    )
    # the kind's calls in a whole capture: the count most ranks hold (the larger of equals)
    usual = per_kind.group_by("kind").agg(usual=pl.col("calls").mode().max())
    steps_seen = n_steps * pl.col("calls") / pl.col("usual")
    return (
        per_kind.join(usual, on="kind")
        .with_columns(
            caused_per_step_ns=(pl.col("caused_ns") / steps_seen).round().cast(pl.Int64)
            if n_steps
            else pl.lit(None, pl.Int64)
        )
        .select(
            "rank", "kind", "calls", "late_calls", "caused_ns", "caused_per_step_ns", "waited_ns"
        )
        .sort("rank", "kind")
    )
