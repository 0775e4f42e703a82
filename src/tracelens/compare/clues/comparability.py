"""Clues about whether, and how far, the two runs compare: not the same program, one
capture a part of the other, work hidden in CUDA graphs, different amounts of work. The
caveats sit first on the board."""

from __future__ import annotations

from ...units import fmt_ns, fmt_ratio
from ..model import Clue, ratio
from .context import Context, count, short_name
from .spec import make, prose, threshold


def not_comparable(x: Context) -> list[Clue]:
    """Why the runs are not compared clue by clue: their kernels are too unlike
    (``not_comparable``, strong: the score says so), or a side's work mostly ran in CUDA
    graph replays traced at graph level (``kernels_in_graphs``): its kernels are in no
    table, so the score says nothing of whether these are different programs, and the clue
    says only what it knows, that the kernel sequences cannot be compared."""
    s = x.score
    hidden = _hidden_in_graphs(x)
    score = f"comparability {s.score:.2f} (bar {s.bar:.2f})" + (f": {s.reason}" if s.reason else "")
    if hidden:
        sides = [side for side, _n, _ns, _kernel_ns in hidden]
        return [
            make(
                "kernels_in_graphs",
                "; ".join(
                    f"most of {side}'s GPU time is in {count(n)} CUDA graph replay"
                    f"{'s' if n != 1 else ''} traced at graph level ({fmt_ns(ns)} vs "
                    f"{fmt_ns(kernel_ns)} of kernels): the kernels they ran are not listed"
                    for side, n, ns, kernel_ns in hidden
                )
                + f"; so the kernels listed hardly match ({count(x.launches_a)} vs "
                f"{count(x.launches_b)} launches, {score})",
                sides=f"{sides[0]}'s" if len(sides) == 1 else "both sides'",
                again=sides[0] if len(sides) == 1 else "both",
            )
        ]
    return [
        make(
            "not_comparable",
            f"only {s.factors['shared_launches']:.0%} of kernel launches are of kernels both "
            f"traces run ({count(x.launches_a)} vs {count(x.launches_b)} launches); {score}",
        )
    ]


def incomparable_note(clues) -> str | None:
    """The one sentence a page puts above a board whose runs were not compared clue by clue
    (:func:`not_comparable`'s clue), as that clue knows it: None when there is none."""
    for c in clues:
        if c.id == "not_comparable":
            return prose("not_comparable", "page_note")
        if c.id == "kernels_in_graphs":
            return c.clue[0].upper() + c.clue[1:] + "."
    return None


def low_comparability(x: Context) -> list[Clue]:
    """Comparable, but only just (under ``sure_comparable_score``): the board says it is
    unsure the two traces are one program before any clue that reads them as one."""
    s = x.score
    if s.score >= threshold("sure_comparable_score"):
        return []
    return [
        make(
            "low_comparability",
            f"comparability {s.score:.2f} (bar {s.bar:.2f}, sure from "
            f"{threshold('sure_comparable_score'):.2f})" + (f": {s.reason}" if s.reason else ""),
        )
    ]


def _hidden_in_graphs(x: Context) -> list[tuple[str, int, float, float]]:
    """Why the kernels in common can be few: each side whose CUDA graph replays, traced at
    graph level, took more GPU time than its kernels (their kernels are in no table, so
    the two runs' kernels cannot be matched): (side, replays, their GPU time, kernel time)."""
    return [
        (side, n, ns, kernel_ns)
        for side, (n, ns), kernel_ns in (("A", x.sa.graph, x.time_a), ("B", x.sb.graph, x.time_b))
        if n and ns > kernel_ns
    ]


def capture_difference(x: Context) -> list[Clue]:
    """One capture is the other cut short, its end or a slice of it, or both are windows of
    one run repeating the same step (relation ``capture``): different amounts of the same
    work. Not ``shifted`` (an overlap that may as well be a path change: the path clue says
    it is unsure), nor a device only one run launched on."""
    # a device one run alone launched on is no shorter capture: devices_differ says it
    cut = [al for al in x.alignment if al.capture_difference and al.launches_a and al.launches_b]
    if not cut:
        return []
    al = max(cut, key=lambda a: abs(a.launches_a - a.launches_b))
    fewer_b = al.launches_b <= al.launches_a
    if other := _other_work(x, al, "A" if fewer_b else "B"):
        return [other]
    share = abs(al.launches_a - al.launches_b) / (max(al.launches_a, al.launches_b) or 1)
    # B is the run under review: "B holds 25% fewer", or "B holds 3.00× the" launches
    amount = (
        {"share": f"{share:.0%}", "fewer": "fewer"}
        if fewer_b
        else {"share": fmt_ratio(al.launches_b / (al.launches_a or 1)), "fewer": "the"}
    )
    if round(share, 2) == 0:  # "0% fewer", "1.00× the": the count says it
        amount = {
            "share": count(abs(al.launches_a - al.launches_b)),
            "fewer": "fewer" if fewer_b else "more",
        }
    steps = (
        f"; {count(al.steps_a)} → {count(al.steps_b)} steps"
        if al.steps_a and al.steps_b and al.relation != "capture"
        else ""
    )
    how = {
        "prefix": "B is A cut short" if fewer_b else "A is B cut short",
        "suffix": "B is the end of A" if fewer_b else "A is the end of B",
        "slice": "B is a slice of A" if fewer_b else "A is a slice of B",
        "capture": f"both repeat one step: {al.steps_a:,} steps in A, {al.steps_b:,} in B"
        if al.steps_a and al.steps_b
        else "both repeat one step",
    }[al.relation]
    return [
        make(
            "capture_difference",
            f"{al.where}: {count(al.launches_a)} → {count(al.launches_b)} launches; "
            f"{count(al.matched_in_order)} in common, in order{steps}",
            impact_ns=None,
            rows=(al.device,),
            side="B",
            how=how,
            verdict=_part_of_a_step(al) or _same_steps(al, how),
            **amount,
        )
    ]


def _other_work(x: Context, al, longer: str) -> Clue | None:
    """When the longer capture's extra launches on ``al``'s device are all of kernels the
    other run never launches (another process on the GPU, or a new part of the program
    beside the same steps), the clue that says so (``other_work``): not more of the same
    sequence, and which of the two when the processes that launched them tell
    (:func:`_extra_source`); else None."""
    import polars as pl

    extra = al.only_in_b if longer == "B" else al.only_in_a
    if al.relation == "capture" or not extra:
        return None
    only = x.kernels.filter(pl.col("status") == f"only_{longer.lower()}")["name"].to_list()
    names = [name for name, _ in extra]
    if not set(names) <= set(only):
        return None
    launches = sum(n for _, n in extra)
    if launches != abs(al.launches_a - al.launches_b):
        return None
    steps = (
        f"; {count(al.steps_a)} → {count(al.steps_b)} steps" if al.steps_a and al.steps_b else ""
    )
    shown = ", ".join(f"{short_name(n)} ({count(c)})" for n, c in extra[:3])
    # the longer side's device (B's own when the two runs' one devices were paired)
    device = al.device_b if longer == "B" and al.device_b is not None else al.device
    source, verdict = _extra_source(x, longer, names, device)
    return make(
        "other_work",
        f"{al.where}: {count(al.launches_a)} → {count(al.launches_b)} launches; "
        f"{count(al.matched_in_order)} in common, in order{steps}; only in {longer}: {shown}"
        + (f" and {len(extra) - 3} more" if len(extra) > 3 else ""),
        impact_ns=None,
        rows=(al.device,),
        side=longer,
        other="AB"[longer == "A"],
        n=count(launches),
        source=source,
        verdict=verdict,
    )


def _extra_source(x: Context, longer: str, names: list[str], device) -> tuple[str, str | None]:
    """(what the ``other_work`` clue adds after its kernels, its verdict) when the data
    tells who launched the ``longer`` side's extra kernels ``names`` on ``device``:
    processes that launch none of the kernels both runs share (another process on the GPU),
    or the process that launches them (a new part of the program); ("", None) when it
    cannot tell (no process ids, both kinds, or CUDA graph replays traced at graph level,
    whose kernels no table lists: the shared kernels' processes are not all known)."""
    import polars as pl

    from ..launchers import extra_launchers, process_list

    side = x.sb if longer == "B" else x.sa
    if x.sa.graph[0] or x.sb.graph[0]:
        return "", None
    shared = x.kernels.filter(pl.col("status") == "both")["name"].to_list()
    who = extra_launchers(side.launchers, side.process_names, names, shared, device)
    if who is None:
        return "", None
    listed = process_list(who.processes)
    several = len(who.processes) > 1
    if who.own:
        key = "verdict_own_process"
        source = f", from the program's own process{'es' if several else ''} {listed}: "
        source += "a new part of the program"
    else:
        key = "verdict_other_process"
        lead = f"{count(len(who.processes))} other processes" if several else "another process"
        source = f", from {lead}: {listed}"
    verdict = prose(
        "other_work",
        key,
        side=longer,
        who="those processes launch" if several else "that process launches",
    )
    return source, verdict


def _same_steps(al, how: str) -> str | None:
    """The verdict when both captures hold as many steps (windows of one run from other
    points, relation ``capture``): not "capture the same number of steps"; else None."""
    if al.relation != "capture" or not al.steps_a or al.steps_a != al.steps_b:
        return None
    return prose("capture_difference", "verdict_windows", how=how)


def _part_of_a_step(al) -> str | None:
    """The verdict when one capture holds the other's launches and fewer than one step's
    more, all at its end (``prefix``) or its start (``suffix``): the other capture may have
    ended earlier (started later), or the run's last (first) step launched them, and the
    launch order alone cannot tell which; None otherwise (the verdict as the data says)."""
    extra = abs(al.launches_a - al.launches_b)
    step = al.step_launches_b if al.launches_b > al.launches_a else al.step_launches_a
    if al.relation not in ("prefix", "suffix") or not step or not 0 < extra < step:
        return None
    short, long = ("A", "B") if al.launches_b > al.launches_a else ("B", "A")
    end = al.relation == "prefix"
    return prose(
        "capture_difference",
        "verdict_part_of_step",
        short=short,
        long=long,
        n=count(extra),
        launches="launch" if extra == 1 else "launches",
        step=count(step),
        where="end" if end else "start",
        cut="ends earlier" if end else "starts later",
        which="last" if end else "first",
    )


def graph_replays_hidden(x: Context) -> list[Clue]:
    """Work the kernel tables do not show: CUDA graphs traced at graph level."""
    (ga, ga_ns), (gb, gb_ns) = x.sa.graph, x.sb.graph
    if not (ga or gb):
        return []
    return [
        make(
            "graph_replays_hidden",
            f"A: {count(ga)} replays ({fmt_ns(ga_ns)}), B: {count(gb)} replays ({fmt_ns(gb_ns)}) "
            "traced at graph level; their kernels, copies and memsets are in no table",
        )
    ]


def weak_evidence(x: Context) -> list[Clue]:
    """Different amounts of work: totals mislead, per-call figures don't. (Same launch
    count with a longer span is the same work taking longer: the question itself.)"""
    launch_r = ratio(x.launches_a, x.launches_b) or 1.0
    limit = threshold("work_ratio")
    if 1 / limit <= launch_r <= limit or any(al.capture_difference for al in x.alignment):
        return []
    return [
        make(
            "weak_evidence",
            f"launches {count(x.launches_a)} → {count(x.launches_b)} ({fmt_ratio(launch_r)}), "
            f"wall span {fmt_ns(x.sa.totals['span_ns'])} → {fmt_ns(x.sb.totals['span_ns'])}",
            rows=("kernel launches", "wall span"),
        )
    ]
