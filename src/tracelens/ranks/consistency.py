"""Which ranks run something else: another kernel set, another numerical path (the
fingerprint), another number or order of collective calls."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .rules import ranks_rules

if TYPE_CHECKING:
    import polars as pl

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
            if first is None and diff.capture is not None:
                # the same path over a shorter or shifted capture: a capture difference
                rows.append(_capture_row(rank, model, diff.capture, spans or {}, by_rank))
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
    rank: int, model: int, capture: str, spans: dict[int, tuple[int, int]], summaries: dict
) -> dict[str, object]:
    """A rank whose capture holds the common path over other steps (fewer, later, cut
    inside one): said as a capture difference, in the ranks' names (the comparison's A is
    the model rank, its B this one). ``summaries``: rank -> its summary."""
    said = capture.removeprefix("same path; ").replace("B holds", f"rank {rank} holds")
    said = said.replace(" of A ", f" of rank {model} ").replace(
        "in A only", f"in rank {model} only"
    )
    said = said.replace(" of B ", f" of rank {rank} ").replace("in B only", f"in rank {rank} only")
    if rank in spans and model in spans:
        said = _at_start(said, rank, model, spans)
        said = _at_both_ends(said, rank, model, spans, summaries)
    return {"rank": rank, "what": "capture", "detail": f"rank {model}'s path; {said}"}


def _at_start(said: str, rank: int, model: int, spans: dict[int, tuple[int, int]]) -> str:
    """``said`` with the launches one capture holds beyond the other put at its start
    where the ranks' paired calls say that capture started earlier and both ended
    together. A launch sequence that repeats every step is a slice of the longer one at
    its start as well as at its end (the comparison reports its first occurrence: "the
    last N launches"); the collectives' times tell which."""
    import re

    (first, last), (model_first, model_last) = spans[rank], spans[model]
    if last != model_last or first == model_first:
        return said
    earlier, later = (model, rank) if first > model_first else (rank, model)
    said = re.sub(
        rf"the last ([\d,]+) launches of rank {earlier}\b",
        rf"the first \1 launches of rank {earlier}",
        said,
    )
    return said.replace(
        "a shorter capture)" if earlier == model else "a longer capture)",
        f"a capture that started {'later' if earlier == model else 'earlier'})",
    )


def _at_both_ends(
    said: str, rank: int, model: int, spans: dict[int, tuple[int, int]], summaries: dict
) -> str:
    """``said`` with the launches one capture holds beyond the other split between its
    start and its end where the ranks' paired calls say the other capture started later
    and ended earlier (the comparison reports them as "the last N launches", see
    :func:`_at_start`): the first and the last launches of the wider capture's steps
    before and after the other's, where they add up to N; else N launches at both ends."""
    import re

    (first, last), (model_first, model_last) = spans[rank], spans[model]
    if first > model_first and last < model_last:
        wider, inner, lead = model, (first, last), "a capture that started later and ended earlier)"
    elif first < model_first and last > model_last:
        wider, inner, lead = (
            rank,
            (model_first, model_last),
            "a capture that started earlier and ended later)",
        )
    else:
        return said
    head, tail = _launches_outside(summaries[wider].steps, spans[wider][0], inner)

    def split(match: re.Match) -> str:
        if int(match.group(1).replace(",", "")) == head + tail:
            return f"the first {head:,} and the last {tail:,} launches of rank {wider}"
        return f"{match.group(1)} launches of rank {wider}, at its start and end,"

    said = re.sub(rf"the last ([\d,]+) launches of rank {wider}\b", split, said)
    return said.replace("a shorter capture)" if wider == model else "a longer capture)", lead)


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
