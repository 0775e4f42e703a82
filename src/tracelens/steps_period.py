"""Steps from the period of the kernel launch sequence (when a trace has no step markers).

Per device, on the kernel name ids in launch order (vectorized in polars, no loop per
kernel): the order the host launched them, by correlation id, each launching process's
launches in its own order and the processes that share a device one after another, by
their first launch there (:func:`process_ranks`: CUPTI numbers correlation ids per process,
so they say nothing of the order between two processes). A CUDA graph replay traced at graph level is a launch too, its token the replayed
graph (:func:`launch_tokens`): with torch.compile or vLLM's CUDA graphs a step is a few
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
    ``queries/steps_launches.sql`` orders them: :func:`launch_order`).

    ``rows``: device, start_ns, end_ns and token (:func:`launch_tokens`) of every launch;
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
        (:func:`launch_order`)."""
        rows = trace.query("steps_launch_rows", **params, streams=False)
        if all(value is None for value in params.values()):
            # every kept kernel (tokens >= -1; replays below): the count of damaged records
            # then needs no scan of its own (Trace.kept_whole)
            trace.kept_whole({"kernel": int((rows["token"] >= -1).sum())})
        order = launch_order(rows, streams=False)
        if order is None:
            del rows
            rows = trace.query("steps_launch_rows", **params, streams=True)
            order = launch_order(rows)
        return cls(rows.drop("pid"), order)  # the process orders them only

    @classmethod
    def given(cls, launches: pl.DataFrame) -> LaunchSequence:
        """``launches`` as ``queries/steps_launches.sql`` lists them (or without graph_id:
        kernels only). With a correlation_id column (and the launching process's, pid or
        global_pid, when several processes may share a device), the rows are in GPU order
        (``util.ORDER``, as the diff reads its work) and are put in launch order
        (:func:`host_order`); without, they are taken as ordered, by device first (a
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


# Tokens of the launch sequence: a kernel's demangled-name id (>= 0), -1 for a kernel
# without a name, and -2 - graphId for a replay of that graph.
NO_NAME = -1


def launch_tokens(launches: pl.DataFrame) -> pl.Expr:
    """The token of each of ``launches`` (``name_id`` and, when present, ``graph_id``, as
    ``queries/steps_launches.sql``), as ``queries/steps_launch_rows.sql`` gives it."""
    import polars as pl

    name = pl.col("name_id").fill_null(NO_NAME)
    if "graph_id" not in launches.columns:
        return name
    return pl.when(pl.col("graph_id").is_null()).then(name).otherwise(-2 - pl.col("graph_id"))


def launch_order(rows: pl.DataFrame, streams: bool = True) -> pl.Series | None:
    """The row numbers of ``queries/steps_launch_rows.sql``'s rows in launch order: by
    device, then the launching process (:func:`process_ranks`), then the order that process
    launched them (correlation id, NULL last), then start, stream, end, kernels before
    replays and replays by graph, as ``steps_launches.sql`` orders them. Host order, not
    GPU start: two streams' kernels interleave on the GPU as timing has it, so the same
    program's GPU start order differs from run to run; the kernels of one CUDA graph
    launch share its correlation id and keep their GPU order. ``streams`` False: the rows
    were read without their streams (``$streams`` false); None when two launches tie on
    device, process, correlation id and start, whose order the stream decides (read them
    with it).

    Sorted on one 64-bit key of device, process and correlation id (polars' sort by all
    six keys of the bench trace's 5M launches cost 1.45 CPU s, an arg-sort of one key
    0.27): when they and the row number fit in it together, the key holds the row number
    in its low bits and a plain sort of it is the order (0.12); launches that tie on
    device, process and correlation id are then ordered among themselves by the other
    keys."""
    import polars as pl

    n = rows.height
    if not n:
        return pl.Series("row", [], dtype=pl.UInt32)
    process = process_ranks(rows)
    if process is not None:
        rows = rows.with_columns(process=process)
    device, launched = pl.col("device"), pl.col("correlation_id")
    graph = pl.when(pl.col("token") <= -2).then(-2 - pl.col("token"))
    keys = [device, launched, pl.col("start_ns"), pl.col("stream"), pl.col("end_ns"), graph]
    nulls_last = [False, True, False, False, False, False]
    if process is not None:
        keys.insert(1, pl.col("process"))
        nulls_last.insert(1, False)
    if not streams:
        at = 3 if process is None else 4  # the stream's place
        del keys[at], nulls_last[at]
    order, key = _by_device_and_launch(rows, process)
    if key is None:
        ordered = rows.with_row_index("row").sort(keys, nulls_last=nulls_last)
        return ordered["row"] if streams or not _start_ties(ordered) else None
    tied = (key == key.shift(1)) | (key == key.shift(-1))
    positions = tied.arg_true()
    if positions.len():
        # Rows that share (device, process, correlation id) hold consecutive positions:
        # sorting them by all the keys and putting them back in the same positions orders
        # each run.
        rows_at = order.gather(positions)
        ties = rows[rows_at].with_columns(row=rows_at).sort(keys, nulls_last=nulls_last)
        if not streams and _start_ties(ties):
            return None
        order = order.scatter(positions, ties["row"])
    return order


def _start_ties(ordered: pl.DataFrame) -> bool:
    """Whether two consecutive rows of ``ordered`` (launches sorted by device, process,
    correlation id and start) share all four: only their streams would order them."""
    import polars as pl

    same = pl.lit(True)
    names = ("device", "process", "correlation_id", "start_ns")
    for name in (n for n in names if n in ordered.columns):
        same = same & pl.col(name).eq_missing(pl.col(name).shift(1))
    return bool(ordered.select(same.fill_null(False).any()).item())


def host_order(launches: pl.DataFrame) -> pl.Series:
    """The row numbers of ``launches`` (device, correlation_id and, with several launching
    processes, their process and start_ns (:func:`process_ranks`); each device's rows in
    GPU order, :data:`tracelens.util.ORDER`) in launch order: by device, then process, then
    correlation id (NULL last), rows that tie keeping their GPU order (a stable sort): the
    order of :func:`launch_order`, for rows read in GPU order (the diff's work)."""
    import polars as pl

    process = process_ranks(launches)
    order, key = _by_device_and_launch(launches, process)
    if key is None:
        keys = (
            ["device", "correlation_id"]
            if process is None
            else ["device", "process", "correlation_id"]
        )
        return (
            launches.select("device", "correlation_id")
            .with_columns(() if process is None else [process.alias("process")])
            .select(
                pl.arg_sort_by(
                    keys, nulls_last=[False] * (len(keys) - 1) + [True], maintain_order=True
                )
            )
            .to_series()
        )
    return order


#: The column that names a launch's process, by the name each reader gives it: the OS pid
#: (the diff's work) or the globalPid (the step search's and the fingerprint's reads).
PROCESS_COLUMNS = ("pid", "global_pid")


def process_ranks(launches: pl.DataFrame) -> pl.Series | None:
    """Each launch's process as its rank among the processes that launched on its device,
    from 0: in the order of their first launch there (start_ns), then of their id; None
    when one process launched every launch of each device (or none is named: no pid or
    global_pid column), the usual case: one pass over the ids, a group-by by device when
    several processes launched (a process per GPU, as the 5M-kernel bench trace's 4 ranks,
    would rank every launch 0: a group-by and a join of every launch, ~0.3 CPU s and
    100 MB there, for the same order).

    Why: CUPTI numbers correlation ids per process, so two processes' launches on one
    device interleave by those numbers as their counters happen to run; the host order
    takes each process's launches in its own order, one process after the other, so a
    step of one process holds none of another's. Their first launch orders them (not their
    ids, which differ from run to run of one program), so the order does not depend on
    the order the export lists them in."""
    import polars as pl

    column = next((c for c in PROCESS_COLUMNS if c in launches.columns), None)
    if column is None or launches.height < 2:
        return None
    pid = pl.col(column)
    lo, hi, nulls = launches.select(lo=pid.min(), hi=pid.max(), nulls=pid.null_count()).row(0)
    if lo is None or (lo == hi and not nulls):
        return None
    one = (pid.min() == pid.max()) & (pid.null_count() == 0)
    per_device = launches.lazy().group_by("device").agg(one=one | pid.is_null().all()).collect()
    if per_device["one"].fill_null(False).all():
        return None
    firsts = (
        launches.lazy()
        .group_by("device", column)
        .agg(first=pl.col("start_ns").min())
        .sort("device", "first", column, nulls_last=True)
        .with_columns(process=pl.int_range(pl.len(), dtype=pl.Int64).over("device"))
        .drop("first")
    )
    found = (
        launches.lazy()
        .select("device", column)
        .join(firsts, on=["device", column], how="left", nulls_equal=True, maintain_order="left")
        .collect()
    )
    return found["process"]


def _by_device_and_launch(rows: pl.DataFrame, process: pl.Series | None = None):
    """(row order by device, ``process`` (:func:`process_ranks`; None: one) and
    correlation id (NULL last), rows that tie in row order; the packed key of each row in
    that order) from one sort of an Int64 key with the row number in its low bits; (None,
    None) when they do not fit in it."""
    import polars as pl

    n = rows.height
    device, launched = pl.col("device"), pl.col("correlation_id")
    d0, d1, c0, c1 = rows.select(
        d0=device.min(), d1=device.max(), c0=launched.min(), c1=launched.max()
    ).row(0)
    if d0 is None:
        return None, None
    c0 = 0 if c0 is None else c0
    c1 = c0 if c1 is None else c1
    launch_bits, row_bits = (c1 - c0 + 1).bit_length(), max(n - 1, 1).bit_length()
    device_bits = (d1 - d0).bit_length()
    process_bits = 0 if process is None else int(process.max()).bit_length()
    if device_bits + process_bits + launch_bits + row_bits > 63:
        return None, None
    key = device.cast(pl.Int64) - d0
    if process is not None:
        key = key * (1 << process_bits) + pl.lit(process)
    key = key * (1 << launch_bits) + (launched.fill_null(c1 + 1) - c0)
    packed = rows.select(key * (1 << row_bits) + pl.int_range(n, dtype=pl.Int64)).to_series()
    packed = packed.sort()
    order = (packed % (1 << row_bits)).cast(pl.UInt32)
    return order, packed // (1 << row_bits)


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
