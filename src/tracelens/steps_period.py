"""Steps from the period of the kernel launch sequence (when a trace has no step markers).

Per device, on the kernel name ids in launch order (vectorized in polars, no loop per
kernel): the order the host launched them, by correlation id, each launching process's
launches in its own order and the processes that share a device one after another, by
their first launch there (:func:`tracelens.steps_order.process_ranks`: CUPTI numbers correlation ids per process,
so they say nothing of the order between two processes). A CUDA graph replay traced at graph level is a launch too, its token the replayed
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
   (a step boundary is where the host syncs, logs or prepares the next batch); only
   complete periods are steps;
5. a step's GPU work: its launches, and the device's copies and memsets from its first
   launch up to the next step's (:func:`_copies_in_steps`), as ``--step`` selects it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .steps_order import (
    PROCESS_COLUMNS,
    host_order,
    launch_order,
    launch_tokens,
    one_process_devices,
)

if TYPE_CHECKING:
    import polars as pl

    from .steps import Steps
    from .trace import Trace


def period_steps(
    trace: Trace, params: dict[str, Any], conf: dict[str, Any], launches: pl.DataFrame | None
) -> Steps | None:
    """Steps from the launch-sequence period of each device, or None when no device has one.
    ``launches``: ``queries/steps_launches.sql``'s rows for ``params``, when already read."""
    import polars as pl

    from .steps import _finish

    if launches is None:
        sequence = LaunchSequence.read(trace, params)
    else:
        sequence = LaunchSequence.given(launches)
    periods, motifs, parts = [], {}, []
    for device, offset, count in sequence.devices():
        found = device_period(
            sequence.tokens(offset, count),
            lambda o=offset, c=count: sequence.times(o, c),
            conf["period"],
        )
        if found is None:
            continue
        steps, bound, motif, outside = found
        periods.append((device, steps, bound))
        motifs[device] = motif
        parts.append(
            f"device {device}: a motif of {_launch_count(motif)}"
            + (
                f" ({outside:,} {_launch_noun(motif, outside)} outside complete periods)"
                if outside
                else ""
            )
        )
    if not periods:
        return None
    # A step holds its device's copies and memsets too (its end and busy time count them).
    copies = trace.query("steps_period_copies", **params)
    frames = [
        _per_step(steps, copies.filter(pl.col("device") == device), bound).with_columns(
            device=pl.lit(device, dtype=pl.Int64)
        )
        for device, steps, bound in periods
    ]
    names = dict(trace.query_rows("util_kernel_names").data)
    motif_names = {d: tuple(_token_name(i, names) for i in ids) for d, ids in motifs.items()}
    detail = "the period of the kernel launch sequence (" + "; ".join(parts) + ")"
    return _finish("period", detail, pl.concat(frames, how="diagonal_relaxed"), motif_names)


class LaunchSequence:
    """Each device's launches in launch order (device, then the host's order: the
    launching process, by its first launch on the device, then its correlation id, then
    start, stream, end, kernels before replays and replays by graph, as
    ``queries/steps_launches.sql`` orders them: :func:`tracelens.steps_order.launch_order`).

    ``rows``: device, start_ns, end_ns and token (:func:`tracelens.steps_order.launch_tokens`) of every launch;
    ``order``: their row numbers in launch order (None: ``rows`` are in it). Columns are
    gathered in that order only when asked: the tokens of every launch, the times of a
    device that has a period (on the bench trace, gathering all four columns of the 5M
    launches cost 0.3 CPU s; most devices of most traces have no period)."""

    def __init__(self, rows: pl.DataFrame, order: pl.Series | None = None) -> None:
        self.rows, self.order = rows, order
        self._tokens = rows["token"] if order is None else rows["token"].gather(order)

    @classmethod
    def read(cls, trace: Trace, params: dict[str, Any]) -> LaunchSequence:
        """The launches of ``params`` (``queries/steps_launch_rows.sql``), ordered. Read
        without their streams, which order only launches that tie on device, process,
        correlation id and start; read again with them when some do
        (:func:`tracelens.steps_order.launch_order`). Without their processes too when the
        filter names one, or when the export's context table lists one process on each
        device read (:func:`tracelens.steps_order.one_process_devices`; a device it does not
        list: read again with them)."""
        single = None if params["pid"] is not None else one_process_devices(trace)
        pids = params["pid"] is None and single is None
        rows = trace.query("steps_launch_rows", **params, streams=False, pids=pids)
        if single is not None and not rows["device"].unique().is_in(list(single)).all():
            pids = True
            rows = trace.query("steps_launch_rows", **params, streams=False, pids=pids)
        if all(value is None for value in params.values()):
            # every kept kernel (tokens >= -1; replays below): the count of damaged records
            # then needs no scan of its own (Trace.kept_whole)
            trace.kept_whole({"kernel": int((rows["token"] >= -1).sum())})
        order = launch_order(rows, streams=False)
        if order is None:
            del rows
            rows = trace.query("steps_launch_rows", **params, streams=True, pids=pids)
            order = launch_order(rows)
        return cls(rows.drop("pid"), order)  # the process orders them only

    @classmethod
    def given(cls, launches: pl.DataFrame) -> LaunchSequence:
        """``launches`` as ``queries/steps_launches.sql`` lists them (or without graph_id:
        kernels only). With a correlation_id column (and the launching process's, pid or
        global_pid, when several processes may share a device), the rows are in GPU order
        (``util.ORDER``, as the diff reads its work) and are put in launch order
        (:func:`tracelens.steps_order.host_order`); without, they are taken as ordered, by device first (a
        stable sort keeps each device's order otherwise)."""
        rows = launches.select("device", "start_ns", "end_ns", token=launch_tokens(launches))
        if "correlation_id" in launches.columns:
            keys = ("device", "start_ns", "correlation_id", *PROCESS_COLUMNS)
            return cls(rows, host_order(launches.select(c for c in keys if c in launches.columns)))
        if not rows["device"].is_sorted():
            rows = rows.sort("device", maintain_order=True)
        return cls(rows)

    def devices(self) -> list[tuple[int, int, int]]:
        """(device, offset, count) of each device's launches, in device order."""
        counts = self.rows.group_by("device").len().sort("device").rows()
        offsets = [0]
        for _, count in counts:
            offsets.append(offsets[-1] + count)
        return [(d, o, c) for (d, c), o in zip(counts, offsets, strict=False)]

    def tokens(self, offset: int, count: int) -> pl.Series:
        return self._tokens.slice(offset, count)

    def times(self, offset: int, count: int) -> pl.DataFrame:
        """start_ns, end_ns and token of launches [offset, offset + count), in order."""
        times = self.rows.select("start_ns", "end_ns", "token")
        if self.order is None:
            return times.slice(offset, count)
        return times[self.order.slice(offset, count)]


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


def _candidates(ids: pl.Series, conf: dict[str, Any]) -> list[int]:
    import polars as pl

    n = ids.len()
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
            "total",
            gap=pl.when(pl.col("c_hi") > pl.col("c_lo")).then("hi").otherwise("lo"),
            c=pl.max_horizontal("c_lo", "c_hi"),
        )
    )
    c = pl.col("c")
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


def device_period(ids: pl.Series, launches, conf: dict[str, Any]):
    """(steps, last step's bound, motif tokens, launches outside complete periods) for one
    device's launch tokens ``ids`` in launch order, or None; ``launches()``: the same
    launches' start_ns, end_ns and token, asked for when the sequence has a period.
    ``steps``: the launches of complete periods with their step (start_ns, end_ns, token,
    step); the bound: the first start among the other launches after the last step's
    first launch (None: none), where the last step's window ends (:func:`_per_step`)."""
    import polars as pl

    n = ids.len()
    if n < conf["min_repeats"] * conf["min_period"]:
        return None
    shares = {p: _match_share(ids, p) for p in _candidates(ids, conf)}
    if not shares:
        return None
    p = _choose(shares, conf["prefer_smaller_within"])
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
    seq = launches()
    phase = _phase(seq, a, b, p)
    first = a + phase
    count = (b - first) // p
    if count < conf["min_repeats"]:
        return None
    steps = seq.slice(first, count * p).with_columns(
        step=(pl.int_range(0, count * p, dtype=pl.Int64) // p) + 1
    )
    last_start = steps["start_ns"].tail(p).min()
    others = pl.concat([seq["start_ns"].head(first), seq["start_ns"].slice(first + count * p)])
    bound = others.filter(others > last_start).min()
    motif = tuple(ids.slice(first, p).to_list())
    return steps, bound, motif, n - count * p


def _phase(seq: pl.DataFrame, a: int, b: int, p: int) -> int:
    """The motif position with the longest mean idle time before it, within [a, b)."""
    import polars as pl

    gaps = seq.select(
        gap=(pl.col("start_ns") - pl.col("end_ns").cum_max().shift(1)).clip(lower_bound=0)
    ).slice(a, b - a)
    by_phase = (
        gaps.with_columns(phase=pl.int_range(0, b - a, dtype=pl.Int64) % p)
        .group_by("phase")
        .agg(pl.col("gap").mean())
        .sort("gap", "phase", descending=[True, False])
    )
    return int(by_phase["phase"][0])


def _per_step(steps: pl.DataFrame, copies: pl.DataFrame, bound: int | None) -> pl.DataFrame:
    """Per step: GPU start (its first launch), end, duration, busy (the union of its
    launches and of the copies and memsets in its window: :func:`_copies_in_steps`),
    kernels and kernel time (kernels only: a replay's kernels are not in the export)."""
    import polars as pl

    kernel = pl.col("is_kernel")
    held = pl.concat(
        [
            steps.select("step", "start_ns", "end_ns", is_kernel=pl.col("token") > -2),
            _copies_in_steps(steps, copies, bound).with_columns(is_kernel=pl.lit(False)),
        ]
    )
    return (
        held.group_by("step")
        .agg(
            start_ns=pl.col("start_ns").min(),
            end_ns=pl.col("end_ns").max(),
            kernels=kernel.sum().cast(pl.Int64),
            kernel_ns=(pl.col("end_ns") - pl.col("start_ns")).filter(kernel).sum(),
        )
        .join(_busy(held), on="step")
        .with_columns(
            cpu_start_ns=pl.lit(None, dtype=pl.Int64),
            cpu_end_ns=pl.lit(None, dtype=pl.Int64),
            duration_ns=pl.col("end_ns") - pl.col("start_ns"),
        )
        .sort("step")
    )


def _copies_in_steps(steps: pl.DataFrame, copies: pl.DataFrame, bound: int | None) -> pl.DataFrame:
    """The ``copies`` (one device's memcpys and memsets: start_ns, end_ns, in start order)
    in some step's window, with their step (step, start_ns, end_ns): those that start from
    the step's first launch up to, not including, the next step's in time (as ``stepwork``
    selects a step's work, ``queries/steps_window_work.sql``). No next step bounds the last one:
    its copies are those that run within the median step length (from one step's start to
    the next's) of its start, and start before ``bound`` (the next launch outside the
    steps, if any): the copy that reads the loss back is the step's, the copy of the
    results after the loop is not."""
    import polars as pl

    # In time: with several processes on the device, the steps are numbered one process
    # after another and run at once; windows must not overlap (stepwork._period_windows).
    windows = (
        steps.group_by("step")
        .agg(start=pl.col("start_ns").min())
        .sort("start", "step")
        .with_columns(end=pl.col("start").shift(-1))
    )
    last = windows.row(-1, named=True)
    length = windows.select((pl.col("end") - pl.col("start")).median()).item()
    fits = last["start"] + int(length)
    end = fits if bound is None else min(fits, bound)
    windows = windows.with_columns(end=pl.col("end").fill_null(end))
    found = copies.select("start_ns", "end_ns").join_asof(
        windows, left_on="start_ns", right_on="start", strategy="backward"
    )
    inside = pl.col("step").is_not_null() & (pl.col("start_ns") < pl.col("end"))
    last_fits = (pl.col("step") != last["step"]) | (pl.col("end_ns") <= fits)
    return found.filter(inside & last_fits).select("step", "start_ns", "end_ns")


def _busy(held: pl.DataFrame) -> pl.DataFrame:
    """Per step (step, busy_ns): the length of the union of its operations' intervals, a
    sweep in GPU start order."""
    import polars as pl

    ordered = held.sort("step", "start_ns", maintain_order=True)
    islands = ordered.with_columns(
        prev_end=pl.col("end_ns").cum_max().shift(1).over("step")
    ).with_columns(
        island=(pl.col("prev_end").is_null() | (pl.col("start_ns") > pl.col("prev_end")))
        .cast(pl.Int64)
        .cum_sum()
        .over("step")
    )
    return (
        islands.group_by("step", "island")
        .agg(span=pl.col("end_ns").max() - pl.col("start_ns").min())
        .group_by("step")
        .agg(busy_ns=pl.col("span").sum())
    )
