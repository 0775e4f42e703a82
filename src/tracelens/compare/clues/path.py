"""The launch-order clue: the device whose launch sequence differs most, what changed in
every step, and the GPU time the changed launches moved that no other clue counts."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...units import fmt_signed_ns
from ..model import Clue
from .context import Context, count, name_pair, short_name
from .devices import moved_launches
from .kernels import calls_per_step
from .spec import make, prose
from .variants import danger_only_kernels, explained_by_variants

if TYPE_CHECKING:
    from ..model import SequenceAlignment


def launch_structure(x: Context) -> list[Clue]:
    """The device whose launch order differs most (captures of the same work aside): the
    same kernels as often in another order, same count with other kernels, or sequences
    that diverge; with steps, what changed in every step."""
    al = path_alignment(x.alignment)
    if al is None or moved_launches(x):  # launches placed on other devices: devices_differ
        return []
    at = f"launch #{al.first_divergence + 1:,}" + _step_of_a(x, al)
    where = f"first divergence at {at} on {al.where}"
    if al.a_at_divergence and al.b_at_divergence:
        names = name_pair(al.a_at_divergence, al.b_at_divergence)
        where += f" ({names[0]} in A, {names[1]} in B)"
    matched = _in_order(al)
    per_step = ""
    if al.step_changes and al.steps_a and al.steps_b:
        pos, was, now = al.step_changes[0]
        steps = min(al.steps_a, al.steps_b)
        change = (
            " → ".join(name_pair(was, now, 40))
            if was and now
            else (f"{short_name(now, 40)} added" if now else f"{short_name(was, 40)} left out")
        )
        more = len(al.step_changes) - 1
        more_said = f"{more}{'+' if more >= 9 else ''} more change{'s' if more != 1 else ''}"
        if _repeats_are_steps(x, al):
            matched += f"; in every step, launch #{pos:,} changed: {change} ({steps:,} steps" + (
                f", {more_said} per step)" if more else ")"
            )
        else:
            matched += (
                f"; in every repeat of its launch motif ({count(al.step_launches_a or 0)} "
                f"launches, {steps:,} repeats), launch #{pos:,} changed: {change}"
                + (f" ({more_said} per repeat)" if more else "")
            )
    # Launches of kernels only one run has are the variant clue's time, extra or missing
    # calls of a kernel per step the calls-per-step clue's: the path clue counts the rest
    # (kernels both runs have, reordered), and says what the others explain.
    explained = dict.fromkeys(
        explained_by_variants(x), "the variant clues (kernels only one run launches)"
    )
    danger = danger_only_kernels(x)["name"].to_list()
    explained.update(dict.fromkeys(danger, "the determinism-risk clues"))
    for c in calls_per_step(x):
        explained.update(dict.fromkeys(c.rows, "the calls-per-step clue"))
    rest, counted = _path_ns(x, al, explained)
    impact = x.per_unit(rest) if rest or not counted else None
    # A share that rounds to 0 ns says nothing (a replaced launch as long as the one before).
    note = "".join(
        f"; {fmt_signed_ns(x.per_unit(ns))}{'/step' if x.steps else ''} of the time these "
        f"launches moved is counted by {who}"
        for who, ns in counted.items()
        if round(x.per_unit(ns))
    )
    return [
        _unsure(c) if al.relation == "shifted" else _same_step(c, al)
        for c in _path_clue(x, al, where, matched, per_step, impact, note)
    ]


def _repeats_are_steps(x: Context, al: SequenceAlignment) -> bool:
    """Whether the repeats the alignment found in A's launches (its period) are A's steps
    as the board counts them: a selection of one step (--step 2) repeats its 28 layers,
    which the board's '1 step' must not read as '28 steps'. A step more or less is the same
    steps (the board's may be re-phased, a step cut at an end); twice as many repeats or
    more are a motif inside the step. Without steps found, the period is the only step."""
    steps = x.sa.steps
    return steps is None or not steps.count or (al.steps_a or 0) < 2 * steps.count


def _same_step(clue: Clue, al: SequenceAlignment) -> Clue:
    """A path clue of two runs that repeat the same step (periodic both, no kernel changed
    or called another number of times in it): the launches differ in some steps only, and
    the verdict says so rather than "different paths from that launch on"."""
    if clue.id == "launch_order_changed" or not (al.steps_a and al.steps_b):
        return clue
    if al.step_changes or al.step_calls:
        return clue
    return replace(clue, verdict=prose("launch_sequence_diverges", "verdict_same_step"))


def path_alignment(alignment: tuple[SequenceAlignment, ...]) -> SequenceAlignment | None:
    """The device the launch-order clue speaks of: the one whose launch order differs most
    (captures of the same work aside); None when none differs."""
    diverged = [al for al in alignment if not al.identical and not al.capture_difference]
    if not diverged:
        return None
    return max(diverged, key=lambda a: a.compared - a.matched_in_order)


def _step_of_a(x: Context, al: SequenceAlignment) -> str:
    """`` (step 12 of A)``: A's step that holds its first differing launch, when A's steps
    hold every launch of the device's sequence one step after another (so the launch's place
    in the sequence is its step's); else nothing: launches outside every step (the period
    search's warm-up), or several processes' ranges per step (the sequence takes each
    process's launches in turn), leave the step unknown."""
    import polars as pl

    steps = x.sa.steps
    sequence = x.sa.sequences.get(al.device)
    if steps is None or sequence is None or not steps.frame.height:
        return ""
    if steps.ranges is not None and steps.ranges.height > steps.count:
        return ""
    rows = steps.frame.filter(pl.col("device") == al.device).sort("step")
    if not rows.height or rows["kernels"].sum() != len(sequence):
        return ""
    held = rows["kernels"].cum_sum()
    step = rows["step"][int((held <= al.first_divergence).sum())]
    return f" (step {step:,} of A)"


def _in_order(al: SequenceAlignment) -> str:
    """How many launches match in order, of those compared: with a capture that starts
    later or ends earlier, which, and the other's launches outside it (not compared)."""
    step = {"A": al.step_launches_a, "B": al.step_launches_b}
    outside = [
        f"{short}'s capture starts later: {long}'s first {count(n)} launches (to #{n:,}) are "
        f"before its start, not compared{_or_a_step(long, 'first', n, step[long])}"
        for short, long, n in (("B", "A", al.before_start_a), ("A", "B", al.before_start_b))
        if n
    ] + [
        f"{short}'s capture ends earlier: {long}'s last {count(n)} launches "
        f"(#{held - n + 1:,} on) are past its end, not compared"
        f"{_or_a_step(long, 'last', n, step[long])}"
        for short, long, n, held in (
            ("B", "A", al.past_end_a, al.launches_a),
            ("A", "B", al.past_end_b, al.launches_b),
        )
        if n
    ]
    if not outside:
        return f"{count(al.matched_in_order)} of {count(al.aligned)} launches match in order"
    return (
        f"{count(al.matched_in_order)} of the {count(al.compared)} launches both captures hold "
        "match in order; " + "; ".join(outside)
    )


def _or_a_step(long: str, which: str, n: int, step: int | None) -> str:
    """Said of ``n`` launches outside the other capture when they are under one step of
    ``long``'s (``step`` launches): its first (last) step may have launched them, which the
    launch order alone cannot tell from a capture that started later (ended earlier)."""
    if not step or n >= step:
        return ""
    return f" (or {long}'s {which} step launched them: the launch order alone cannot tell)"


def _unsure(clue: Clue) -> Clue:
    """A path clue of two runs whose launches also read as two captures of one run from
    other points (relation ``shifted``, :func:`tracelens.compare.align.align_tokens`):
    the launches cannot tell which, and the board says so."""
    return replace(
        clue,
        evidence=f"{clue.evidence}; {SHIFTED}",
        verdict=f"unsure: {clue.verdict}, or the captures started at other points of one run "
        "(a capture difference, not a path change)",
    )


# Why the diff is unsure of a path change that the captures' windows could also explain.
SHIFTED = (
    "both runs repeat one step and one capture's end is the other's beginning: two "
    "captures of one run started at other points would differ the same way"
)


def _path_clue(
    x: Context,
    al: SequenceAlignment,
    where: str,
    matched: str,
    per_step: str,
    impact: float | None,
    note: str,
) -> list[Clue]:
    """The path clue's id and wording: the same kernels in another order, the same launch
    count with other kernels, or sequences that diverge."""
    differing = al.compared - al.matched_in_order
    reordered = _same_kernels_as_often(x, al)
    if reordered is not None:
        return [
            make(
                "launch_order_changed",
                f"{where}; {_in_order(al)}; {reordered}{note}",
                impact_ns=impact,
                rows=(al.device,),
            )
        ]
    if x.launches_a == x.launches_b:
        return [
            make(
                "same_count_different_path",
                f"{where}; {matched}, {count(differing)} differ{per_step}{note}",
                impact_ns=impact,
                rows=(al.device,),
                launches=count(x.launches_a),
            )
        ]
    return [
        make(
            "launch_sequence_diverges",
            f"{where}; {matched}{per_step}{note}",
            impact_ns=impact,
            rows=(al.device,),
        )
    ]


def _same_kernels_as_often(x: Context, al: SequenceAlignment) -> str | None:
    """How B launches the same kernels as A as often, in another order (None when it does
    not): per step when both runs repeat a step and their steps differ (every kernel as many
    times in B's step as in A's), else in the whole capture (every kernel as many launches,
    the same total). Two equal steps say nothing here: the order changed in some steps only
    (partway through the run), not in every step."""
    if al.steps_a and al.steps_b and (al.step_changes or al.step_calls):
        if al.step_calls:
            return None
        return (
            f"every step launches the same kernels as often ({count(al.step_launches_b or 0)} "
            f"launches per step), in another order"
        )
    if x.launches_a != x.launches_b:
        return None
    counts = zip(x.kernels["a_instances"], x.kernels["b_instances"], strict=True)
    if any(ca != cb for ca, cb in counts):
        return None
    return f"every kernel launched as often ({count(x.launches_b)} launches), in another order"


def _path_ns(
    x: Context, al: SequenceAlignment, explained: dict[str, str]
) -> tuple[float, dict[str, float]]:
    """GPU time the changed launches moved: each replaced launch's mean time in B minus its
    predecessor's in A, plus launches only one side makes. Split: the launches of kernels
    not in ``explained`` (name -> the clue that counts it), and per explaining clue the
    time of the launches involving its kernels."""
    avg_a = dict(zip(x.kernels["name"], x.kernels["a_avg_ns"], strict=True))
    avg_b = dict(zip(x.kernels["name"], x.kernels["b_avg_ns"], strict=True))
    rest = 0.0
    counted: dict[str, float] = {}

    def add(names: tuple[str, ...], ns: float) -> None:
        nonlocal rest
        who = next((explained[n] for n in names if n in explained), None)
        if who is None:
            rest += ns
        else:
            counted[who] = counted.get(who, 0.0) + ns

    for a, y, n in al.replaced:
        add((a, y), n * ((avg_b.get(y) or 0) - (avg_a.get(a) or 0)))
    for y, n in al.only_in_b:
        add((y,), n * (avg_b.get(y) or 0))
    for a, n in al.only_in_a:
        add((a,), -n * (avg_a.get(a) or 0))
    return rest, counted
