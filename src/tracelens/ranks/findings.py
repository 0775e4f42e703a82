"""The headline sentences of a :class:`~.reduce.RanksResult`, most important first: who
made the others wait, how far the clocks were moved (and where aligning them failed),
which ranks run something else, which processes are not ranks, which ranks are missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .processes import set_aside_finding
from .rules import ranks_rules
from .sequence import separate_sessions_finding

if TYPE_CHECKING:
    from .reduce import RanksResult


def findings(
    result: RanksResult, n_steps: int, unpaired=(), captures=(), separate=()
) -> tuple[str, ...]:
    """The headline sentences of ``result`` (its findings aside), most important first
    (``n_steps``: the run's step count, what the waits per step divide by; ``unpaired``:
    the ranks left out of the waits because their calls do not pair with the reference's;
    ``captures``: where the captures that started at other calls were placed, said after
    the clocks; ``separate``: the ranks of other sessions than the run's, whose calls were
    not paired, said with the clocks). The processes set aside are said before the
    missing ranks."""
    import polars as pl

    from ..units import fmt_ns

    waits, clock, reference = result.waits, result.clock, result.reference_rank
    missing, set_aside = result.missing_ranks, result.set_aside
    if result.ranks.height < 2:
        # Waiting is between ranks: one rank's collectives say nothing about stragglers.
        return (
            "one rank cannot have a straggler: waits in collectives are between ranks "
            "(pass every rank's export, or one export holding every rank's process)",
            *set_aside_finding(set_aside),
            *_missing(missing),
        )
    out: list[str] = []
    on_time = ranks_rules().on_time_ns
    culprits = waits.filter(pl.col("caused_ns") >= on_time).sort(
        "caused_ns", "rank", descending=[True, False]
    )
    for row in culprits.iter_rows(named=True):
        per = (
            f"{fmt_ns(row['caused_per_step_ns'])} per step"
            if n_steps
            else f"{fmt_ns(row['caused_ns'])} in all"
        )
        out.append(
            f"rank {row['rank']} made the others wait {per} in {row['kind']} "
            f"(last to arrive in {row['late_calls']} of {row['calls']} calls)"
        )
    measured = waits["rank"].unique().sort().to_list()
    if not culprits.height and len(measured) > 1:
        out.append(f"no straggler: every collective started within {fmt_ns(on_time)} on all ranks")
    elif len(measured) == 1:
        # one rank's calls alone start "together" with themselves: no straggler is no claim
        out.append(
            f"only rank {measured[0]}'s collective calls pair (the others ran none, or theirs "
            "do not pair): who waited for whom cannot be measured"
        )
    if reference is None:
        # no rank ran a collective: nothing to pair, so neither waits nor clocks
        out.append(
            "no rank ran a collective (no NCCL kernels in the exports): who waited for whom "
            "cannot be measured, and the clocks are not aligned"
        )
    out += separate_sessions_finding(result.ranks, list(separate))
    if reference is not None and clock.height > 1:
        out += _clock_findings(
            clock.filter(~pl.col("rank").is_in(list(separate))), reference, unpaired
        )
    out += captures
    for row in result.inconsistencies.iter_rows(named=True):
        out.append(f"rank {row['rank']} differs ({row['what']}): {row['detail']}")
    out += set_aside_finding(set_aside)
    out += _missing(missing)
    return tuple(out)


def _missing(missing) -> list[str]:
    return [f"missing ranks: {rank_list(missing)} (not analysed)"] if missing else []


#: Up to this many missing ranks are listed one by one; more are said as ranges.
MISSING_LISTED = 20


def rank_list(ranks) -> str:
    """'4, 5, 6'; past :data:`MISSING_LISTED` ranks, their runs as ranges and the count
    ('12346-12376, 12378-4012344: 3,999,998 ranks'). File names numbered otherwise than
    by rank (nsys -o report_%p: process ids) leave millions between two numbers, which
    listed one by one made a 70 MB headline."""
    if len(ranks) <= MISSING_LISTED:
        return ", ".join(map(str, ranks))
    runs: list[list[int]] = []
    for rank in ranks:
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    text = ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)
    return f"{text}: {len(ranks):,} ranks"


def _clock_findings(clock, reference: int, unpaired) -> list[str]:
    """How far the clocks were moved, and the ranks whose collective ends still disagree
    with the reference's after the move (``reduce._unpaired_ranks``)."""
    import polars as pl

    from ..units import fmt_ns, fmt_signed_ns

    out = []
    # the corrections said first are the trusted ones: an unpaired rank's is said apart,
    # as unreliable, not as the largest correction whose ends "then agree within" its gap
    trusted = clock.filter(~pl.col("rank").is_in(list(unpaired)))
    moved = trusted.filter(pl.col("correction_ns") != 0)
    if moved.height:
        big = moved.sort(pl.col("correction_ns").abs(), descending=True).row(0, named=True)
        out.append(
            f"clocks aligned on collective ends (reference rank {reference}): "
            f"{moved.height} rank(s) corrected, the most rank {big['rank']} by "
            f"{fmt_signed_ns(big['correction_ns'])}; ends then agree within "
            f"{fmt_ns(trusted['residual_ns'].max())}"
        )
    elif trusted.filter(pl.col("correction_ns").is_not_null()).height > 1:
        # (said only when another rank's ends were compared with the reference's)
        out.append(f"clocks agree: collective ends match rank {reference}'s as recorded")
    out += _unaligned(clock, reference)
    for row in clock.filter(pl.col("rank").is_in(list(unpaired))).iter_rows(named=True):
        out.append(
            f"rank {row['rank']}'s collective ends still differ from rank {reference}'s by up "
            f"to {fmt_ns(row['residual_ns'])} after aligning: its calls do not pair with the "
            "others' (skipped or extra calls?), so its clock correction is unreliable and "
            "its calls are left out of the waits"
        )
    return out


def _unaligned(clock, reference: int) -> list[str]:
    """The ranks none of whose collective calls paired with the reference's (a rank that
    ran no collective): their clocks were not aligned, which "clocks agree" must not
    claim of them."""
    import polars as pl

    ranks = clock.filter(pl.col("correction_ns").is_null())["rank"].to_list()
    if not ranks:
        return []
    if len(ranks) == 1:
        return [
            f"rank {ranks[0]}'s clock is not aligned: none of its collective calls pairs "
            f"with rank {reference}'s (it ran none, or only other ones), so its correction "
            "is unknown"
        ]
    names = rank_list(ranks) if len(ranks) > MISSING_LISTED else (
        ", ".join(map(str, ranks[:-1])) + f" and {ranks[-1]}"
    )  # fmt: skip
    return [
        f"ranks {names}'s clocks are not aligned: none of their collective calls pairs with "
        f"rank {reference}'s (they ran none, or only other ones), so their corrections are "
        "unknown"
    ]
