"""Steps from the period of the kernel launch sequence (when a trace has no step markers).

Per device, on the kernel name ids in launch order (vectorized in polars, no loop per
kernel): the order the host launched them, by correlation id, each launching process's
launches in its own order and the processes that share a device one after another, by
their first launch there (:func:`tracelens.steps_order.process_ranks`: CUPTI numbers correlation ids per process,
so they say nothing of the order between two processes; where a process's host threads
interleaved so that no steps or steps off their motif came out, each thread's launches by
their own order: :mod:`tracelens.steps_threads`). A CUDA graph replay traced at graph level is a launch too, its token the replayed
graph (:func:`tracelens.steps_order.launch_tokens`): with torch.compile or vLLM's CUDA graphs a step is a few
kernels and one replay that holds nearly all its GPU time, and a period of the kernels
alone would make each step a few microseconds long.

1. candidates: for each kernel name, the most common distance between consecutive
   launches of it, kept when it holds for at least half of them (a kernel launched once
   per iteration is spaced exactly one period apart);
2. screening: for each candidate p, the share of positions with ``name[i] == name[i + p]``;
   among the candidates within ``prefer_smaller_within`` of the best share, the largest
   period (a step contains repeated layers, which can match about as well), reduced to
   its smallest divisor among them (a multiple of the period matches as well as the
   period itself);
3. the periodic stretch: from the first to the last full period of matching positions; it
   must repeat at least ``min_repeats`` times, match ``min_match`` and cover
   ``min_coverage`` of the device's kernels (``[period]`` in ``data/steps.toml``);
4. phase: steps start at the position of the motif with the longest idle time before it
   (a step boundary is where the host syncs, logs or prepares the next batch); when no
   position stands out on the GPU (a GPU-bound loop: its queue never drains), the position
   whose launch call the host made after the longest pause
   (:func:`tracelens.steps_phase.period_phase`); only complete periods are steps;
4b. a shorter motif whose steps may launch a few other kernels too replaces the period
   when its steps wait for the host as long, and is searched when no exact period holds
   (an optional kernel every few iterations makes the exact period a multiple of the
   iteration, or breaks it), or when the exact steps leave a period's worth of launches
   out (the iteration changed shape from some step on: a, b, c, then a, b, c, d; a motif
   of at most the period's length then holds them all:
   :func:`tracelens.steps_motif.changed_shape`); the iterations before the first step
   that launch the motif and more are warm-up steps (:mod:`tracelens.steps_motif`);
5. a step's GPU work: its launches, and the device's copies and memsets from its first
   launch up to the next step's
   (:func:`tracelens.steps_period_table._copies_in_steps`), as ``--step`` selects it;
   on a device another program used too (it launched there, or only copied or set memory:
   :func:`tracelens.steps_loops.copying_programs`), the loop's processes' only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .steps_loops import busiest_loop, busiest_process, copying_programs, passed_over
from .steps_motif import Anchored, step_shapes
from .steps_outside import Outside
from .steps_period_table import _per_step
from .steps_phase import HostGaps, period_phase, phase_tokens
from .steps_sequence import LaunchSequence
from .steps_threads import LaunchThreads, threaded_period

if TYPE_CHECKING:
    import polars as pl

    from .steps import Steps
    from .trace import Trace


def period_steps(
    trace: Trace,
    params: dict[str, Any],
    conf: dict[str, Any],
    launches: pl.DataFrame | None,
    phase: str | None = None,
) -> Steps | None:
    """Steps from the launch-sequence period of each device, or None when no device has one.
    ``launches``: ``queries/steps_launches.sql``'s rows for ``params``, when already read;
    ``phase``: the name of a kernel to start each device's steps at, where its motif
    launches it once (:func:`device_period`)."""
    import polars as pl

    from .steps import _finish

    if launches is None:
        sequence = LaunchSequence.read(trace, params)
    else:
        sequence = LaunchSequence.given(launches)
    tokens = phase_tokens(trace, phase)
    host, threads = HostGaps(trace, params), LaunchThreads(trace, params, sequence)
    found, launchers = {}, {}
    for device, offset, count in sequence.devices():
        period = _process_period(
            sequence, device, offset, count, conf["period"], tokens, host, threads
        )
        if period is not None:
            found[device] = period
            if period.pids is None and "pid" in sequence.rows.columns:
                launchers[device] = tuple(sorted(sequence.pids(offset, count)))
    if not found:
        return None
    found, other_loops = busiest_loop(trace, found, launchers, params, conf["period"])
    copies = trace.query("steps_period_copies", **params)
    found = copying_programs(found, launchers, copies)
    frames = _step_frames(found, copies)
    names = dict(trace.query_rows("util_kernel_names").data)
    motif_names = {d: tuple(_token_name(i, names) for i in f.motif) for d, f in found.items()}
    parts = "; ".join(_describe(device, f, names) for device, f in found.items())
    warm = {device: f.warmup for device, f in found.items() if f.warmup}
    extra = sorted({t for f in found.values() for t in f.warm_extra})
    reason = ""
    if warm:  # a warm-up step launches more than a step: other kernels, or the motif's more often
        reason = (
            f"they also launch kernels outside the motif: {_names(extra, names)}"
            if extra
            else "they launch the motif's kernels more often than a step does"
        )
    # the loops passed over: other processes' on the steps' devices, then other devices'
    said = [text for d, f in found.items() for text in passed_over(d, f, conf["period"])]
    said += other_loops
    others = "; not in the steps: " + "; ".join(said) if said else ""
    detail = "the period of the kernel launch sequence (" + parts + ")" + others
    frame = pl.concat(frames, how="diagonal_relaxed")
    shapes = step_shapes(found, lambda token: _token_name(token, names))
    before = sum(f.before for f in found.values())
    outside = Outside(before=before, after=sum(f.outside for f in found.values()) - before)
    aside = (warm, reason)
    # what the steps were found from, without the whole trace's step and launch counts
    source = (
        "the period of the kernel launch sequence ("
        + "; ".join(
            f"device {device}: a motif of {_launch_count(f.motif)}" for device, f in found.items()
        )
        + ")"
    )
    return _finish(
        "period", detail, frame, motif_names, set_aside=aside, shapes=shapes, outside=outside,
        source=source, processes={d: f.pids for d, f in found.items() if f.pids is not None},
    )  # fmt: skip


def _step_frames(found: dict[int, DevicePeriod], copies: pl.DataFrame) -> list[pl.DataFrame]:
    """Each device's steps (:func:`_per_step`) with its copies and memsets, which count in
    a step's end and busy time: on a device another program used too, the loop's processes'
    (``pids``) only (the other program's launches are in no step, nor its copies)."""
    import polars as pl

    frames = []
    for device, f in found.items():
        mine = True if f.pids is None else pl.col("pid").is_in(f.pids)
        steps = _per_step(f.steps, copies.filter(pl.col("device") == device, mine), f.bound)
        frames.append(steps.with_columns(device=pl.lit(device, dtype=pl.Int64)))
    return frames


def _process_period(
    sequence, device, offset, count, conf, tokens, host, threads
) -> DevicePeriod | None:
    """The period steps of one device's launches [offset, offset + count). When several
    processes launched there (each one's launches come one after another in launch order:
    :meth:`LaunchSequence.blocks`), only those that run the loop count: the processes whose
    own steps repeat the same kernels as the loop's process
    (:func:`tracelens.steps_loops.busiest_process`; two workers of one job: both, as one
    sequence, as before). Why: another program on the same GPU (a second job, a monitor) is
    no part of this loop, and taken as one sequence with it its launches were cut into more
    'steps' of the motif's length ('step time changed at step 41' where the other program's
    40 launches began). The other processes' own loops are kept as passed over."""

    def run(launches, o, c, seen):
        return device_period(
            launches.tokens(o, c),
            lambda: launches.times(o, c),
            conf,
            tokens,
            lambda seq, lo, hi: host.calls(device, seq, lo, hi),
            seen,
        )

    def search(o, c):  # by each host thread's own order where the threads' mix broke it
        return threaded_period(sequence, threads, o, c, run)

    blocks = sequence.blocks(offset, count)
    if len(blocks) == 1:
        return search(offset, count)
    own = [search(o, c) for o, c in blocks]
    if not any(f is not None and f.steps.height for f in own):
        return search(offset, count)  # no process alone has a period: as one sequence
    chosen = busiest_process(own, conf)
    best = own[chosen]
    kernels = sorted(best.motif)
    loop = [i for i, f in enumerate(own) if f is not None and sorted(f.motif) == kernels]
    if len(loop) == len(blocks):
        return search(offset, count)
    if loop != list(range(loop[0], loop[-1] + 1)):
        loop = [chosen]  # the loop's processes are not one stretch: the chosen one's
    # the other processes' loops of other kernels, named as passed over
    passed = tuple(
        (sequence.pids(*blocks[i])[0], f)
        for i, f in enumerate(own)
        if f is not None and i not in loop and sorted(f.motif) != kernels
    )
    lo, hi = blocks[loop[0]][0], blocks[loop[-1]][0] + blocks[loop[-1]][1]
    found = search(lo, hi - lo) if len(loop) > 1 else best
    if found is None:
        return None
    others = (count - (hi - lo), len(blocks) - len(loop))
    pids = tuple(sequence.pids(lo, hi - lo))
    return replace(found, others=others, pids=pids, passed_over=passed)


def _describe(device: int, found: DevicePeriod, names: dict[int, str]) -> str:
    """How one device's steps were found and how regular they are."""
    motif, outside = found.motif, found.outside
    text = f"device {device}: a motif of {_launch_count(motif)}"
    if found.others[0]:
        launches, processes = found.others
        # a process that runs a loop of its own is named as passed over (steps_loops)
        which = "" if found.passed_over else ", which run no such loop,"
        text += (
            f" (the {launches:,} launches of {processes:,} other process"
            f"{'es' if processes > 1 else ''} on it{which} in no step)"
        )
    if found.other_copies[0]:
        copies, processes = found.other_copies
        text += (
            f" (the {copies:,} copies and memsets of {processes:,} other process"
            f"{'es' if processes > 1 else ''} on it in no step)"
        )
    if found.host_phased:
        text += ", each step from the launch the host paused longest before (the GPU idled alike)"
    anchored = found.anchored
    if anchored is None:
        if outside:
            text += f" ({outside:,} {_launch_noun(motif, outside)} outside complete periods)"
        return text
    steps = len(anchored.starts)
    text += f", exactly in {anchored.exact:,} of its {steps:,} steps"
    if anchored.reordered:
        text += f", in another order in {anchored.reordered:,}"
    if anchored.optional:
        more = _names(anchored.extra, names) if anchored.extra else "more of its kernels"
        text += f", with {more} too in {anchored.optional:,}"
    if (other := steps - anchored.exact - anchored.reordered - anchored.optional) > 0:
        text += f", otherwise in {other:,}"
    if outside:
        text += f" ({outside:,} {_launch_noun(motif, outside)} outside the steps)"
    return text


def _names(tokens, names: dict[int, str]) -> str:
    shown = ", ".join(_token_name(t, names) for t in list(tokens)[:3])
    return shown + (f" and {len(tokens) - 3:,} more" if len(tokens) > 3 else "")


def _token_name(token: int, names: dict[int, str]) -> str:
    if token <= -2:
        return f"CUDA graph {-2 - token} (replay traced at graph level)"
    return names.get(token, str(token))


def _launch_count(motif: tuple[int, ...]) -> str:
    replays = sum(1 for t in motif if t <= -2)
    kernels = len(motif) - replays
    text = f"{kernels:,} kernel{'s' if kernels != 1 else ''}"
    if replays:
        text += f" and {replays:,} CUDA graph replay{'s' if replays != 1 else ''}"
    return text


def _launch_noun(motif: tuple[int, ...], count: int) -> str:
    noun = "launch" if any(t <= -2 for t in motif) else "kernel"
    return noun if count == 1 else noun + ("es" if noun == "launch" else "s")


def _gap_table(ids: pl.Series) -> pl.DataFrame:
    """Per token with at least two launches: name_id, total (its spacings), gap (the most
    common spacing, the smallest of equally common ones, when it holds for at least half of
    them; else the more common median) and c (how many spacings are that gap)."""
    import polars as pl

    # Each name's launch positions, in order, as one list: their differences are the gaps
    # between consecutive launches of it.
    gaps = (
        pl.DataFrame({"name_id": ids})
        .with_row_index("i")
        .group_by("name_id")
        .agg(gap=pl.col("i").cast(pl.Int64).diff().drop_nulls())
    )
    # Per name: its most common gap (the smallest of equally common ones) when that gap is
    # at least half of its gaps, else no candidate. Such a gap fills a run of at least half
    # the sorted gaps, so it is their lower or upper median: only those two are counted
    # (counting every (name, gap) pair cost 0.14 CPU s per 1.25M random launches, 0.06).
    gap, total = pl.col("gap"), pl.col("total")
    lower, upper = (pl.element().quantile(0.5, how) for how in ("lower", "higher"))
    per = (
        gaps.with_columns(total=gap.list.len())
        .filter(total > 0)
        .select(
            "name_id",
            "total",
            lo=gap.list.eval(lower).list.first().cast(pl.Int64),
            hi=gap.list.eval(upper).list.first().cast(pl.Int64),
            c_lo=gap.list.eval(pl.element() == lower).list.sum(),
            c_hi=gap.list.eval(pl.element() == upper).list.sum(),
        )
        .select(
            "name_id",
            "total",
            gap=pl.when(pl.col("c_hi") > pl.col("c_lo")).then("hi").otherwise("lo"),
            c=pl.max_horizontal("c_lo", "c_hi"),
        )
    )
    return per


def _candidates(per: pl.DataFrame, n: int, conf: dict[str, Any]) -> list[int]:
    """Candidate periods from :func:`_gap_table`: gaps that hold for at least half of a
    token's spacings, by how many spacings they explain."""
    import polars as pl

    gap, total, c = pl.col("gap"), pl.col("total"), pl.col("c")
    kept = per.filter(
        c * 2 >= total,
        gap >= conf["min_period"],
        gap * conf["min_repeats"] <= n,
    )
    ranked = (
        kept.group_by("gap").agg(support=c.sum()).sort("support", "gap", descending=[True, False])
    )
    return ranked.head(conf["max_candidates"])["gap"].to_list()


def _choose(shares: dict[int, float], within: float) -> int:
    """Among the periods matching (nearly) as well as the best, the largest: a step holds
    repeated layers, which match about as well but are not the iteration; then the smallest
    of its divisors that matches as well (a multiple of the period is not the period)."""
    best = max(shares.values())
    close = [q for q, s in shares.items() if s >= best - within]
    p = max(close)
    return min(q for q in close if p % q == 0)


def _match_share(ids: pl.Series, p: int) -> float:
    n = ids.len()
    return float((ids.head(n - p) == ids.slice(p)).mean())


def device_period(
    ids: pl.Series,
    launches,
    conf: dict[str, Any],
    start_at: frozenset[int] = frozenset(),
    host_gaps=lambda seq, lo, hi: None,
    seen: dict[str, int] | None = None,
) -> DevicePeriod | None:
    """The steps of one device's launch tokens ``ids`` in launch order, or None;
    ``launches()``: the same launches' start_ns, end_ns and token, asked for when the
    sequence has a period (or may have one with optional launches); ``start_at``: the ids of
    a kernel to start the steps at instead, when their motif launches it once
    (:func:`tracelens.steps_phase.rephase`; empty: phased by idle time); ``host_gaps(seq, lo,
    hi)``: the host's time before the launch calls of ``launches()``'s [lo, hi), or None
    (:meth:`tracelens.steps_phase.HostGaps.calls`), asked for when the GPU's idle time does
    not phase the steps (:func:`tracelens.steps_phase.period_phase`), once per device for
    every window asked (:class:`tracelens.steps_phase.HostPauses`); ``seen``: given, it
    gets the count of candidate periods (``candidates``).

    The exact period first (:func:`_exact_period`); then a shorter motif whose steps may
    launch a few other kernels too (:func:`tracelens.steps_motif.anchored_steps`): the
    iteration when the exact period is a multiple of it, the steps when the extra launches
    leave no exact period; then the warm-up iterations before the first step
    (:func:`tracelens.steps_motif.peel_warmup`)."""
    from .steps_motif import anchored_steps, changed_shape, idle_before, peel_warmup
    from .steps_phase import HostPauses, rephase

    n = ids.len()
    if n < conf["min_repeats"] * conf["min_period"]:
        return None
    gaps = _gap_table(ids)
    candidates = _candidates(gaps, n, conf)
    if seen is not None:
        seen["candidates"] = len(candidates)
    shares = {p: _match_share(ids, p) for p in candidates}
    if not shares:
        return None
    p = _choose(shares, conf["prefer_smaller_within"])
    stretch = _exact_stretch(ids, p, conf)
    seq = idle = None
    # the host's pauses, read once for both windows that may ask
    host = HostPauses.of(lambda lo, hi: host_gaps(seq, lo, hi), n, p, candidates, stretch, conf)
    starts, end, motif, anchored, step_idle, by_host = [], 0, (), None, None, False
    if stretch is not None:
        seq = launches()
        idle = idle_before(seq)
        phase, step_idle, by_host = period_phase(idle, *stretch, p, conf, host)
        first = stretch[0] + phase
        count = (stretch[1] - first) // p
        if count >= conf["min_repeats"]:
            starts, end = list(range(first, first + count * p, p)), first + count * p
            motif = tuple(ids.slice(first, p).to_list())
    shorter = sorted(q for q in candidates if not starts or q * 2 <= p)
    if shorter and (not starts or step_idle):
        if seq is None:
            seq = launches()
            idle = idle_before(seq)
        sample = min(n, max(p, *shorter) * conf["phase_sample_steps"])
        anchored = anchored_steps(
            ids, gaps, shorter, idle, step_idle if starts else None, conf,
            lambda: host(0, sample),
        )  # fmt: skip
        if anchored is not None:
            starts, end, motif = anchored.starts, anchored.end, anchored.motif
            by_host = anchored.by_host
    if starts and anchored is None and n - (end - starts[0]) >= p:
        anchored = changed_shape(ids, gaps, candidates, p, idle, step_idle, conf, starts, end)
        if anchored is not None:
            starts, end, motif = anchored.starts, anchored.end, anchored.motif
            by_host = False
    if not starts:
        return None
    if start_at:
        found = (starts, end, motif, anchored)
        starts, end, motif, anchored = rephase(ids, found, stretch, start_at, conf)
        by_host = by_host and starts == found[0]
    any_order = anchored is not None and anchored.any_order
    starts, warm, warm_extra = peel_warmup(ids, idle, starts, motif, conf, any_order)
    found = DevicePeriod.build(seq, n, starts, end, motif, anchored, warm, warm_extra)
    return replace(found, host_phased=by_host)


@dataclass(frozen=True)
class DevicePeriod:
    """One device's period steps. ``steps``: the launches of the steps with their step
    (start_ns, end_ns, token, step); ``bound``: the first start among the other launches
    after the last step's first launch (None: none), where the last step's window ends
    (:func:`tracelens.steps_period_table._per_step`); ``motif``: its tokens; ``outside``:
    launches in no step; ``anchored``: the steps of a motif with optional launches, else
    None (every step is the motif); ``warmup``: the warm-up steps' numbers and
    ``warm_extra`` the tokens they launch besides the motif; ``host_phased``: the steps
    start where the host paused, the GPU having idled alike before every launch
    (:func:`tracelens.steps_phase.period_phase`)."""

    steps: pl.DataFrame
    bound: int | None
    motif: tuple[int, ...]
    outside: int
    anchored: Anchored | None
    warmup: list[int]
    warm_extra: tuple[int, ...]
    host_phased: bool = False
    #: (launches, processes) of the other processes that launched on the device, whose
    #: launches are in no step (:func:`_process_period`); (0, 0): one process launched
    others: tuple[int, int] = (0, 0)
    #: of ``outside``, the launches before the first step (the others are after the last)
    before: int = 0
    #: the loop's processes when ``others`` launched on the device too, or other processes
    #: only copied or set memory there (``other_copies``); None: every process
    pids: tuple[int, ...] | None = None
    #: (copies and memsets, processes) of the processes that launched nothing on the
    #: device but copied there, in no step (:func:`.steps_loops.copying_programs`); (0, 0):
    #: none
    other_copies: tuple[int, int] = (0, 0)
    #: (pid, its own period steps) of each other process on the device whose launches
    #: repeat other kernels, a loop passed over (:func:`_process_period`)
    passed_over: tuple[tuple[int, DevicePeriod], ...] = ()

    @classmethod
    def build(cls, seq, n, starts, end, motif, anchored, warm, warm_extra) -> DevicePeriod:
        import polars as pl

        first = starts[0]
        index = pl.int_range(first, end, dtype=pl.Int64, eager=True)
        step = pl.Series(starts, dtype=pl.Int64).search_sorted(index, side="right")
        steps = seq.slice(first, end - first).select(
            "start_ns", "end_ns", "token", step=step.cast(pl.Int64)
        )
        last_start = steps["start_ns"].slice(starts[-1] - first).min()
        others = pl.concat([seq["start_ns"].head(first), seq["start_ns"].slice(end)])
        bound = others.filter(others > last_start).min()
        return cls(steps, bound, motif, n - (end - first), anchored, warm, warm_extra, before=first)


def _exact_stretch(ids: pl.Series, p: int, conf: dict[str, Any]) -> tuple[int, int] | None:
    """The periodic stretch [a, b) of period ``p``: from the first to the last full period
    of matching positions, when it repeats ``min_repeats`` times, matches ``min_match`` and
    covers ``min_coverage`` of the launches; else None."""
    import polars as pl

    n = ids.len()
    matches = (ids.head(n - p) == ids.slice(p)).cast(pl.Int8)
    full = matches.rolling_min(window_size=p).fill_null(0)
    ends = (full == 1).arg_true()
    if ends.len() == 0:
        return None
    a = int(ends[0]) - p + 1  # first position of the first full period of matches
    b = int(ends[-1]) + p + 1  # one past the last position that repeats it
    inside = matches.slice(a, b - p - a)
    if (
        (b - a) < conf["min_repeats"] * p
        or float(inside.mean()) < conf["min_match"]
        or (b - a) < conf["min_coverage"] * n
    ):
        return None
    return a, b
