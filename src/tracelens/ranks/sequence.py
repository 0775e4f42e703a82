"""Which of the reference rank's collective calls each rank's k-th call is, when the ranks'
captures did not start at the same call.

Calls are numbered per communicator from each capture's start (``ranks_collectives``), so
the k-th calls of two ranks are one instance only when both captures started at the same
call. A rank whose capture started two steps late (nsys started later on its node,
``--capture-range``) would have its first call paired with the reference's first, and
the clock correction would absorb the two steps (-200 ms where the clocks differ by
0.3 ms). Where every rank recorded its UTC session start, the clocks are already close
(``ranks.toml`` ``[clocks] error_max_ns``): a larger correction means other calls were
paired, and the rank's calls are renumbered by the one offset that pairs each with the
reference call ending nearest to it, when that offset pairs every call (its ends then
agree within ``suspect_residual_ns``); else they stay as they are (a skipped or extra
call, which ``reduce._unpaired_ranks`` names). Steps follow: the rank's steps are
renumbered by the offset between its steps and the reference's holding the same calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .rules import ranks_rules

if TYPE_CHECKING:
    import polars as pl


def session_offsets(ranks: pl.DataFrame) -> pl.DataFrame:
    """rank, session_offset_ns: its session start minus the earliest one (0 for every rank
    when any lacks a recorded start)."""
    import polars as pl

    starts = ranks["session_start_utc_ns"]
    if ranks.height and starts.null_count() == 0:
        return ranks.select("rank", (starts - starts.min()).alias("session_offset_ns"))
    return ranks.select("rank", pl.lit(0, pl.Int64).alias("session_offset_ns"))


def separate_sessions(ranks: pl.DataFrame) -> list[int]:
    """The ranks whose session is not the run's: where every rank recorded its session
    start, the starts are cut into sessions wherever two in start order are more than
    ``session_gap_max_ns`` apart; the session of most ranks (of equals, the one holding the
    lowest rank) is the run, and the ranks of the others are returned, in rank order."""
    starts = ranks["session_start_utc_ns"] if ranks.height else None
    if starts is None or starts.null_count():
        return []
    gap = ranks_rules().session_gap_max_ns
    sessions: list[list[tuple[int, int]]] = []
    for start, rank in sorted(zip(starts.to_list(), ranks["rank"].to_list(), strict=True)):
        if sessions and start - sessions[-1][-1][0] <= gap:
            sessions[-1].append((start, rank))
        else:
            sessions.append([(start, rank)])
    run = max(sessions, key=lambda s: (len(s), -min(rank for _, rank in s)))
    return sorted(rank for s in sessions if s is not run for _, rank in s)


def separate_sessions_finding(ranks: pl.DataFrame, separate: list[int]) -> list[str]:
    """One line naming the ranks of other sessions than the run's (:func:`separate_sessions`)
    and how far from the run's sessions theirs started."""
    import polars as pl

    from .findings import rank_list

    if not separate:
        return []
    starts = dict(ranks.select("rank", "session_start_utc_ns").iter_rows())
    run = ranks.filter(~pl.col("rank").is_in(separate))["session_start_utc_ns"]
    first, last = run.min(), run.max()
    hours = [
        f"{(starts[r] - last) / _HOUR_NS:,.1f} h after" if starts[r] > last
        else f"{(first - starts[r]) / _HOUR_NS:,.1f} h before"
        for r in separate
    ]  # fmt: skip
    hours = list(dict.fromkeys(hours))
    when = " and ".join(hours) if len(hours) <= 3 else f"{hours[0]} to {hours[-1]}"
    one, n = len(separate) == 1, run.len()
    names = rank_list(separate) if len(separate) > 20 else (
        ", ".join(map(str, separate[:-1])) + f" and {separate[-1]}"
    )  # fmt: skip
    who = f"rank {separate[0]}" if one else f"ranks {names}"
    its = "its" if one else "their"
    theirs = f"the sessions of the other {n} ranks" if n > 1 else "the other rank's session"
    return [
        f"{who} {'is a separate session' if one else 'are separate sessions'}: started "
        f"{when} {theirs} "
        f"(the ranks of one run start within {ranks_rules().session_gap_max_ns / _HOUR_NS:g} h "
        f"of each other), as another run's capture or a host clock off by as much would, so "
        f"{its} clock{' is' if one else 's are'} not aligned and {its} collectives are not "
        "paired with the run's"
    ]


_HOUR_NS = 3_600_000_000_000


def ranks_call_shifts(
    ranks: pl.DataFrame, colls: pl.DataFrame, reference: int | None
) -> pl.DataFrame:
    """:func:`call_shifts` where the session starts put the clocks on one base
    (every rank recorded its start); without them a capture's start is not known."""
    import polars as pl

    if ranks.height and ranks["session_start_utc_ns"].null_count() == 0:
        based = colls.join(session_offsets(ranks), on="rank").with_columns(
            end_b=pl.col("end_ns") + pl.col("session_offset_ns")
        )
        return call_shifts(based, reference)
    return call_shifts(colls.clear(), None)


def call_shifts(based: pl.DataFrame, reference: int | None) -> pl.DataFrame:
    """(rank, comm, shift, clock_ns): what to add to a rank's call numbers on a
    communicator so that they number its calls as the reference's do, for the calls that
    need it, and the clock correction its calls as numbered would have taken instead (what
    its clock would be off by, were its capture not elsewhere). ``based``: every call
    (rank, comm, seq, kind, end_b) with ``end_b`` on the UTC session base."""
    import polars as pl

    schema = {"rank": pl.Int64, "comm": pl.Int16, "shift": pl.Int64, "clock_ns": pl.Int64}
    if reference is None or not based.height:
        return pl.DataFrame(schema=schema)
    rules = ranks_rules()
    ref = based.filter(pl.col("rank") == reference).select(
        "comm", ref_seq="seq", ref_end="end_b", ref_kind=pl.col("kind").cast(pl.String)
    )
    others = based.filter(pl.col("rank") != reference).with_columns(
        kind=pl.col("kind").cast(pl.String)
    )
    as_numbered = _corrections(others.with_columns(ref_seq=pl.col("seq")), ref)
    far = as_numbered.filter(pl.col("correction").abs() > rules.clock_error_max_ns)
    if not far.height:
        return pl.DataFrame(schema=schema)
    suspects = others.join(far.select("rank", "comm"), on=["rank", "comm"])
    nearest = (
        suspects.sort("end_b")
        .join_asof(
            ref.sort("ref_end"),
            left_on="end_b",
            right_on="ref_end",
            by="comm",
            strategy="nearest",
            check_sortedness=False,
        )  # fmt: skip
        .filter(pl.col("kind") == pl.col("ref_kind"))
        .group_by("rank", "comm")
        .agg(shift=(pl.col("ref_seq") - pl.col("seq")).mode().sort().first().cast(pl.Int64))
    )
    shifted = suspects.join(nearest, on=["rank", "comm"]).with_columns(
        ref_seq=pl.col("seq") + pl.col("shift")
    )
    fits = _corrections(shifted, ref).filter(
        (pl.col("correction").abs() <= rules.clock_error_max_ns)
        & (pl.col("spread") <= rules.clock_suspect_ns)
        & (pl.col("pairs") == pl.col("calls"))
    )
    clock = far.select("rank", "comm", clock_ns=pl.col("correction").round().cast(pl.Int64))
    return (
        nearest.join(fits.select("rank", "comm"), on=["rank", "comm"])
        .join(clock, on=["rank", "comm"])
        .select("rank", pl.col("comm").cast(pl.Int16), "shift", "clock_ns")
    )


def _corrections(calls: pl.DataFrame, ref: pl.DataFrame) -> pl.DataFrame:
    """Per (rank, comm): the median end difference to the reference calls ``ref_seq``
    names (same collective), the spread of the differences around it, and how many of
    the rank's calls paired (``pairs``) of its ``calls`` that the reference's span holds."""
    import polars as pl

    held = ref.group_by("comm").agg(lo=pl.col("ref_seq").min(), hi=pl.col("ref_seq").max())
    inside = calls.join(held, on="comm").filter(pl.col("ref_seq").is_between("lo", "hi"))
    delta = pl.col("ref_end") - pl.col("end_b")
    paired = (
        inside.join(ref, on=["comm", "ref_seq"])
        .filter(pl.col("kind") == pl.col("ref_kind"))
        .group_by("rank", "comm")
        .agg(
            correction=delta.median(),
            spread=(delta - delta.median()).abs().max(),
            pairs=pl.len(),
        )
    )
    counts = inside.group_by("rank", "comm").agg(calls=pl.len())
    return paired.join(counts, on=["rank", "comm"])


def renumber(colls: pl.DataFrame, shifts: pl.DataFrame) -> pl.DataFrame:
    """``colls`` with each rank's calls renumbered by ``shifts`` (relative to the
    reference), all moved so that the earliest capture's first call is #1 again."""
    import polars as pl

    if not shifts.height:
        return colls
    base = shifts.group_by("comm").agg(base=pl.col("shift").min().clip(upper_bound=0))
    return (
        colls.join(shifts.select("rank", "comm", "shift"), on=["rank", "comm"], how="left")
        .join(base, on="comm", how="left")
        .with_columns(
            seq=(pl.col("seq") + pl.col("shift").fill_null(0) - pl.col("base").fill_null(0)).cast(
                pl.Int32
            )
        )
        .drop("shift", "base")
    )


def step_shifts(
    placed: pl.DataFrame, shifted_ranks: list[int], reference: int | None
) -> dict[int, int]:
    """Per rank whose calls were renumbered (and the reference, and every rank when the
    numbers all move), what to add to its step numbers: the most common difference
    between the reference's step and its own holding the same call (``placed``: rank,
    comm, seq, step), all moved so that the smallest is 0. Empty when no rank moved."""
    import polars as pl

    if not shifted_ranks or reference is None:
        return {}
    ref = placed.filter(pl.col("rank") == reference).select("comm", "seq", ref_step="step")
    found = (
        placed.filter(pl.col("rank").is_in(shifted_ranks))
        .join(ref, on=["comm", "seq"])
        .group_by("rank")
        .agg(shift=(pl.col("ref_step") - pl.col("step")).mode().sort().first())
    )
    shifts = {reference: 0} | dict(found.iter_rows())
    base = min(shifts.values())
    ranks = placed["rank"].unique().to_list()
    return {r: shifts.get(r, 0) - base for r in ranks if shifts.get(r, 0) - base}


def capture_findings(
    shifts: pl.DataFrame,
    steps: pl.DataFrame,
    step_moves: dict[int, int],
    reference,
    colls: pl.DataFrame | None = None,
) -> tuple[str, ...]:
    """Where the captures that started at other calls than the reference's were placed in
    the run (``shifts``: :func:`call_shifts`; ``steps``: the rank x step matrix, steps
    renumbered by ``step_moves``; ``colls``: every call, renumbered). When every other
    rank's capture started earlier by the same calls, the reference's started later: said
    of it once. A capture placed with both ends on the same side of the reference's is
    what a clock off by that many calls looks like too: said as unsure (:func:`_unsure`)."""
    import polars as pl

    def placed(rank: int) -> str:
        own = steps.filter(pl.col("rank") == rank)["step"]
        if not own.len() or rank not in step_moves:
            return ""
        return f"; its {own.len()} steps are the run's steps {own.min()}-{own.max()}"

    firsts = shifts.sort("rank", "comm").unique("rank", keep="first", maintain_order=True)
    others = steps["rank"].n_unique() - 1
    if firsts.height == others > 1 and firsts["shift"].n_unique() == 1 and firsts["shift"][0] < 0:
        comm, shift = firsts["comm"][0], firsts["shift"][0]
        where = f"its first collective is their call #{1 - shift} (communicator {comm})"
        if _both_sides(colls, reference, firsts["rank"][0], comm):
            clock = -int(firsts["clock_ns"].median())
            return (_unsure(reference, "the other ranks'", where, "later", clock, "theirs")
                    + placed(reference),)  # fmt: skip
        return (
            f"rank {reference}'s capture started later than the other ranks': {where}, "
            f"paired from there{placed(reference)}",
        )
    out = []
    for rank, comm, shift, clock in firsts.rows():
        if shift > 0:
            said = f"its first collective is rank {reference}'s call #{shift + 1}"
        else:
            said = f"its call #{1 - shift} is rank {reference}'s first collective"
        said += f" (communicator {comm})"
        later = "later" if shift > 0 else "earlier"
        if _both_sides(colls, rank, reference, comm):
            whose = f"rank {reference}'s"
            out.append(_unsure(rank, whose, said, later, clock, whose) + placed(rank))
            continue
        out.append(
            f"rank {rank}'s capture started {later} than rank {reference}'s: {said}, paired "
            f"from there{placed(rank)}"
        )
    return tuple(out)


def _unsure(rank: int, whose: str, where: str, later: str, clock_ns: int, theirs: str) -> str:
    """The words for a capture whose calls pair with ``whose`` by time at ``where`` and
    that holds calls past both ends of theirs on one side (``later``): a capture that
    started and ended ``later``, or the same capture with a clock off by ``clock_ns`` (the
    correction its calls as numbered take: a clock off by whole steps pairs each call with
    another of the same collective, and the exports tell the two apart by nothing)."""
    from ..units import fmt_ns

    ahead = "ahead of" if clock_ns < 0 else "behind"
    return (
        f"rank {rank}'s collectives pair with {whose} by their times, where {where}: its "
        f"capture started and ended {later} than {theirs}, or its clock runs "
        f"{fmt_ns(abs(clock_ns))} {ahead} {theirs} (about a whole number of steps: each call "
        "then ends with another of the same collective); the exports cannot tell which, and "
        f"its calls are paired as a capture that started {later}"
    )


def _both_sides(colls, rank: int, other: int, comm: int) -> bool:
    """Whether ``rank``'s calls on ``comm`` (renumbered: ``colls``) start and end on the
    same side of ``other``'s (later, or earlier, at both ends)."""
    import polars as pl

    if colls is None:
        return False
    held = (
        colls.filter((pl.col("comm") == comm) & pl.col("rank").is_in([rank, other]))
        .group_by("rank")
        .agg(lo=pl.col("seq").min(), hi=pl.col("seq").max())
    )
    ends = {r: (lo, hi) for r, lo, hi in held.iter_rows()}
    if len(ends) < 2:
        return False
    (lo, hi), (other_lo, other_hi) = ends[rank], ends[other]
    # one end shared, or one capture inside the other: started (or ended) elsewhere only
    return (lo - other_lo) * (hi - other_hi) > 0
