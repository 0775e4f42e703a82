"""Which ranks run something else: another kernel set, another numerical path (the
fingerprint), another number or order of collective calls."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .rules import ranks_rules

if TYPE_CHECKING:
    import polars as pl

    from ..fingerprint.ends import CaptureEnds

_DETAIL_CHARS = 240  # a path difference's "where" is cut to this many characters


def inconsistencies(
    summaries,
    calls: pl.DataFrame,
    spans: dict[int, tuple[int, int]] | None = None,
    *,
    placed: bool = True,
    unpaired=(),
) -> pl.DataFrame:
    """Ranks whose kernel set differs from the most common one, and ranks whose
    collective calls differ in number or kind from the other ranks'. ``spans``: each
    rank's first and last step in the run's numbering (where its capture started and
    ended, once the ranks' calls are paired); ``placed``: whether the calls are numbered
    as the run's (every rank recorded its session start, so that a capture that started
    later has its calls renumbered), else each from its capture's start; ``unpaired``: the
    ranks whose collective ends disagree with the reference's after aligning."""
    import polars as pl

    rows: list[dict[str, object]] = []
    sets = {rank: frozenset(s.kernels.column("name").to_pylist()) for rank, s in summaries}
    if sets:
        common, _ = Counter(sets.values()).most_common(1)[0]
        for rank, names in sets.items():
            if names != common:
                extra, missing = sorted(names - common), sorted(common - names)
                rows.append(
                    {"rank": rank, "what": "kernel set", "detail": _set_detail(extra, missing)}
                )
    rows += _path_differences(summaries, spans or {})
    if calls.height:
        calls = calls.with_columns(pl.col("kind").cast(pl.String))
        odd = _odd_calls(calls)
        paired = set(calls["rank"].unique().to_list()) - set(unpaired) - set(odd["rank"])
        rows += _call_counts(calls, placed, paired)
        for rank, first, kind, usual_kind, n in odd.iter_rows():
            rows.append(
                {
                    "rank": rank,
                    "what": "collectives",
                    "detail": f"call #{first} is {kind} where the others run {usual_kind} "
                    f"({n} calls differ)",
                }
            )
    return pl.DataFrame(
        rows, schema={"rank": pl.Int64, "what": pl.String, "detail": pl.String}
    ).sort("rank", "what")


def _odd_calls(calls: pl.DataFrame) -> pl.DataFrame:
    """Per rank whose k-th call on a communicator is another collective than most ranks'
    k-th: its first such call, that call's kind and the usual one, and how many differ."""
    import polars as pl

    modal = calls.group_by("comm", "seq").agg(usual_kind=pl.col("kind").mode().sort().first())
    return (
        calls.join(modal, on=["comm", "seq"])
        .filter(pl.col("kind") != pl.col("usual_kind"))
        .group_by("rank")
        .agg(
            first=pl.col("seq").min(),
            kind=pl.col("kind").sort_by("seq").first(),
            usual=pl.col("usual_kind").sort_by("seq").first(),
            n=pl.len(),
        )
        .sort("rank")
    )


def _call_counts(calls: pl.DataFrame, placed: bool, paired: set[int]) -> list[dict[str, object]]:
    """Ranks that make another number of collective calls than most ranks. A rank among
    ``paired`` (each of its calls is the same collective as the others' call of that
    number, and ends with it once the clocks are aligned: none skipped or added) holds
    fewer or more calls because its capture started or ended elsewhere, which is said,
    with the calls it holds; else the counts alone are said."""
    import polars as pl

    ranges = calls.group_by("rank", "comm").agg(lo=pl.col("seq").min(), hi=pl.col("seq").max())
    per_rank = calls.group_by("rank").agg(n=pl.len())
    usual = Counter(per_rank["n"].to_list()).most_common(1)[0][0]
    usual_range = {
        comm: Counter(zip(part["lo"], part["hi"], strict=True)).most_common(1)[0][0]
        for (comm,), part in ranges.partition_by("comm", as_dict=True).items()
    }
    rows = []
    for rank, n in per_rank.sort("rank").iter_rows():
        if n == usual:
            continue
        detail = f"{n} collective calls where most ranks make {usual}"
        mine = ranges.filter(pl.col("rank") == rank).sort("comm").iter_rows(named=True)
        elsewhere = [r for r in mine if (r["lo"], r["hi"]) != usual_range[r["comm"]]]
        if rank in paired and elsewhere:
            first = elsewhere[0]
            detail += _capture_extent(first, usual_range[first["comm"]], n < usual, placed)
        rows.append({"rank": rank, "what": "collectives", "detail": detail})
    return rows


def _capture_extent(mine: dict, usual: tuple[int, int], fewer: bool, placed: bool) -> str:
    """The words for a rank whose calls on communicator ``mine["comm"]`` are the run's
    calls ``mine["lo"]``-``mine["hi"]``, each paired with the others', where most ranks
    hold the calls ``usual``."""
    (lo, hi), comm = usual, mine["comm"]
    if not placed:
        # numbered from each capture's start: where its capture started is not known
        ends = "a shorter capture" if fewer else "a longer capture"
    else:
        moves = []
        if mine["lo"] != lo:
            moves.append(f"started {'later' if mine['lo'] > lo else 'earlier'}")
        if mine["hi"] != hi:
            moves.append(f"ended {'earlier' if mine['hi'] < hi else 'later'}")
        ends = "a capture that " + " and ".join(moves)
    return (
        f": it holds calls #{mine['lo']:,}-{mine['hi']:,} of communicator {comm}, each paired "
        f"with the others', where most ranks hold #{lo:,}-{hi:,} ({ends}, not "
        f"{'skipped' if fewer else 'extra'} calls)"
    )


def _path_differences(
    summaries, spans: dict[int, tuple[int, int]] | None = None
) -> list[dict[str, object]]:
    """Ranks whose numerical path (the fingerprint) differs from the most common one, with
    where it first diverges from the lowest rank that has the common path."""
    from .. import fingerprint
    from ..fingerprint.board import divergence_text

    docs = {rank: s.fingerprint for rank, s in summaries if s.fingerprint}
    by_rank = dict(summaries)
    if len(set(docs.values())) < 2:
        return []
    common, _ = Counter(docs.values()).most_common(1)[0]
    model = min(rank for rank, doc in docs.items() if doc == common)
    base = fingerprint.loads(common)
    limit = ranks_rules().path_alignment_pairs
    rows = []
    for rank, doc in sorted(docs.items()):
        if doc == common:
            continue
        other = fingerprint.loads(doc)
        pairs = alignment_pairs(base, other)
        if pairs > limit:
            where = _unaligned(base, other, pairs)
        else:
            diff = fingerprint.compare(base, other)
            first = diff.first_math or diff.first
            if first is None and diff.ends is not None:
                # the same path over a shorter or shifted capture: a capture difference
                rows.append(_capture_row(rank, model, diff.ends, spans or {}, by_rank))
                continue
            short = _too_short_for_steps(base, other)
            if first is not None and short is not None:
                rows.append({"rank": rank, "what": "capture", "detail": short(rank, model)})
                continue
            where = (
                divergence_text(first, diff.nvtx_regions)
                if first is not None
                else "same kernels, other counts"
            )
        if len(where) > _DETAIL_CHARS:  # NVTX labels can be whole JSON documents (dlprof)
            where = where[: _DETAIL_CHARS - 3] + "..."
        rows.append(
            {"rank": rank, "what": "path", "detail": f"differs from rank {model}'s: {where}"}
        )
    return rows


def _too_short_for_steps(base: dict, other: dict):
    """When ``other`` (a rank's fingerprint) found no steps where ``base`` (the common
    path's) found some, and each of its kernels, device by device, runs no more often than
    in ``base``: a function (rank, model) -> the capture difference in words; else None.
    A capture too short to find steps in (two steps of six) has its NVTX ranges or the
    whole capture as regions where the others have their steps, so no region of one is a
    region of the other and every launch would read as removed from a region: compared as
    a shorter capture, by the launches of each kernel, it claims no path change."""
    steps, mine = base["steps"], other["steps"]
    if mine["count"] or not steps["count"]:
        return None
    theirs, held = _kernel_launches(base), _kernel_launches(other)
    if any(n > theirs.get(key, 0) for key, n in held.items()):
        return None
    launches = f"{other['launches']:,} launch{'es' if other['launches'] != 1 else ''}"

    def said(rank: int, model: int) -> str:
        return (
            f"rank {model}'s path over a shorter capture: rank {rank}'s is too short to find "
            f"steps in ({launches}; rank {model}'s: {base['launches']:,} launches, "
            f"{steps['count']:,} steps by {steps['method']}), and each of its kernels runs "
            f"no more often than in rank {model}'s; not compared region by region"
        )

    return said


def _kernel_launches(doc: dict) -> dict[tuple[int, str], int]:
    """Launches per (device, kernel variant) of a fingerprint document: each entry's
    sequence (or its variant counts, when only those are kept) times its steps."""
    import json

    variants = {
        v["id"]: json.dumps({k: x for k, x in v.items() if k != "id"}, sort_keys=True)
        for v in doc["variants"]
    }
    out: dict[tuple[int, str], int] = {}
    for entry in doc["paths"]:
        times = max(len(entry["steps"]), 1)
        counts = entry.get("counts") or Counter(entry["sequence"]).items()
        for variant, n in counts:
            key = (entry["device"], variants[variant])
            out[key] = out.get(key, 0) + n * times
    return out


def _capture_row(
    rank: int, model: int, ends: CaptureEnds, spans: dict[int, tuple[int, int]], summaries: dict
) -> dict[str, object]:
    """A rank whose capture holds the common path over other steps (fewer, later, cut
    inside one): said as a capture difference, in the ranks' names, from the comparison's
    :class:`tracelens.fingerprint.ends.CaptureEnds` (its A is the model rank, its B this
    one). Where the comparison cannot tell at which end the launches are (every step the
    same program), the ranks' paired calls (``spans``) place them (:func:`_placed`).
    ``summaries``: rank -> its summary."""
    names = {"A": f"rank {model}", "B": f"rank {rank}"}
    kind = "a shorter capture" if ends.more_steps < 0 else "a longer capture"
    parts = [
        (f"the {where} {_launches(count)} of {names[side]}", side, count)
        for count, where, side in (
            (ends.before_start_a, "first", "A"),
            (ends.past_end_a, "last", "A"),
            (ends.before_start_b, "first", "B"),
            (ends.past_end_b, "last", "B"),
        )
        if count
    ]
    if ends.ambiguous and rank in spans and model in spans:
        kind, parts = _placed(ends, rank, model, spans, summaries, kind) or (kind, parts)
    sides = {side for _text, side, _n in parts}
    only = f"in {names[sides.pop()]} only" if len(sides) == 1 else "in one capture only"
    are = "is" if [n for *_words, n in parts] == [1] else "are"
    said = f"{_held(ends, rank, model, kind)}: {' and '.join(p[0] for p in parts)} {are} {only}"
    return {"rank": rank, "what": "capture", "detail": f"rank {model}'s path; {said}"}


def _launches(n: int) -> str:
    return "launch" if n == 1 else f"{n:,} launches"


def _held(ends: CaptureEnds, rank: int, model: int, kind: str) -> str:
    """``rank 3 holds 2 fewer steps (4 vs 6: KIND)``, or the steps of each when they were
    found otherwise, or the same count."""
    mine, theirs = ends.steps_b, ends.steps_a
    if ends.method_a != ends.method_b:
        return (
            f"rank {rank} holds {mine:,} steps by {ends.method_b}, rank {model} {theirs:,} "
            f"by {ends.method_a} (another capture)"
        )
    more = ends.more_steps
    if more == 0:
        return (
            f"rank {rank} holds the same {mine:,} steps (a capture that starts or ends inside one)"
        )
    fewer = "fewer" if more < 0 else "more"
    return f"rank {rank} holds {abs(more):,} {fewer} steps ({mine:,} vs {theirs:,}: {kind})"


def _placed(ends: CaptureEnds, rank: int, model: int, spans: dict, summaries: dict, kind: str):
    """(the kind of capture, [(words, side, launches)]) with the launches only one capture
    holds put where the ranks' paired calls (``spans``: each rank's first and last step in
    the run) say they are, when only the capture that started earlier or ended later holds
    some: at its start where both ended together (the comparison puts the launches of a
    sequence that repeats every step at the end: "the last N launches"), or split between
    its start and its end where the other started later and ended earlier: the first and
    the last launches of its steps before and after the other's, where they add up to N;
    else N launches at both ends. None when the calls place nothing. ``kind``: the
    comparison's kind of capture (a shorter or a longer one), said as the calls say it."""
    (first, last), (model_first, model_last) = spans[rank], spans[model]
    wider = None
    if last == model_last and first != model_first:
        wider = model if first > model_first else rank
        at, moves = "start", "started"
    elif first > model_first and last < model_last:
        wider, at, moves = model, "both", "started later and ended"
    elif first < model_first and last > model_last:
        wider, at, moves = rank, "both", "started earlier and ended"
    side = "A" if wider == model else "B"
    if wider is None or ends.only_in("B" if side == "A" else "A"):
        return None  # the calls place nothing, or each capture holds launches the other lacks
    n, name = ends.only_in(side), f"rank {wider}"
    if at == "start":
        words = f"the first {n:,} launches of {name}"
        moves += " later" if wider == model else " earlier"
    else:
        inner = spans[rank] if wider == model else spans[model]
        head, tail = _launches_outside(summaries[wider].steps, spans[wider][0], inner)
        if head + tail == n:
            words = f"the first {head:,} and the last {tail:,} launches of {name}"
        else:
            words = f"{n:,} launches of {name}, at its start and end,"
        moves += " earlier" if wider == model else " later"
    expected = "a shorter capture" if wider == model else "a longer capture"
    if kind == expected:
        kind = f"a capture that {moves}"
    return kind, [(words, side, n)]


def _launches_outside(steps, run_first: int, inner: tuple[int, int]) -> tuple[int, int]:
    """The kernels of a rank's steps (its summary's, numbered from its own first step,
    which is the run's step ``run_first``) before and after the run's steps ``inner``."""
    rows = steps.select(["step", "kernels"]).to_pylist() if steps.num_rows else []
    if not rows:
        return 0, 0
    offset = run_first - min(row["step"] for row in rows)
    head = sum(row["kernels"] for row in rows if row["step"] + offset < inner[0])
    tail = sum(row["kernels"] for row in rows if row["step"] + offset > inner[1])
    return head, tail


def alignment_pairs(a: dict, b: dict) -> int:
    """The launch pairs of the sequences ``fingerprint.compare`` aligns: per (device,
    region, step), or per (device, region) over all steps when the two documents' steps
    differ, the product of the two sequences' lengths. An upper bound of its work: its
    minimal edit script costs about (n + m) x the launches that differ (near-linear when
    the ranks differ in few places), and past fingerprint.edits._EDITS_MAX differing
    launches difflib (n x m) or windows of it take over. Linear in the documents' size."""
    from ..fingerprint.compare import steps_note

    flatten = steps_note(a, b) is not None
    sa, sb = _sequence_lengths(a, flatten), _sequence_lengths(b, flatten)
    return sum(n * sb.get(key, 0) for key, n in sa.items())


def _sequence_lengths(doc: dict, flatten: bool) -> dict[tuple, int]:
    lengths: dict[tuple, int] = {}
    for entry in doc["paths"]:
        n, region = len(entry["sequence"]), tuple(entry["region"])
        if flatten:
            key = (entry["device"], region, None)
            lengths[key] = lengths.get(key, 0) + n * max(len(entry["steps"]), 1)
            continue
        for step in entry["steps"] or [None]:
            lengths[(entry["device"], region, step)] = n
    return lengths


def _unaligned(base: dict, other: dict, pairs: int) -> str:
    """The detail of a path difference too long to align launch by launch."""
    sa, sb = base["steps"], other["steps"]
    steps = ""
    if (sa["method"], sa["count"]) != (sb["method"], sb["count"]):
        steps = f", steps {sa['count']} by {sa['method']} vs {sb['count']} by {sb['method']}"
    return (
        f"not aligned launch by launch: {pairs:,} launch pairs (limit "
        f"{ranks_rules().path_alignment_pairs:,}){steps}; tracelens diff compares the two ranks"
    )


def _set_detail(extra: list[str], missing: list[str]) -> str:
    def some(names: list[str]) -> str:
        shown = ", ".join(n if len(n) <= 60 else n[:57] + "..." for n in names[:2])
        return shown + (f" and {len(names) - 2} more" if len(names) > 2 else "")

    parts = []
    if extra:
        parts.append(f"runs {len(extra)} kernel(s) the others do not: {some(extra)}")
    if missing:
        parts.append(f"lacks {len(missing)} kernel(s) the others run: {some(missing)}")
    return "; ".join(parts)
