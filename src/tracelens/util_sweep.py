"""The sweeps behind util: unions of intervals, idle gaps and hidden communication, over the
GPU operations of ``util.operations`` (:data:`OPS_COLUMNS`: one row per operation, sorted
by device and start), in vectorized polars.

Why not SQL: each union needs the running maximum of the earlier operations' ends, which
DuckDB 1.5 computes as a framed window aggregate (a segment tree per frame). On the 5M-kernel
benchmark the five maxima of ``util`` took ~16 CPU s there; here they are cumulative maxima
over columns that are already sorted. Each device is a contiguous slice of the operations
(zero-copy), swept on its own: no ``over()`` window or group-by over millions of rows (those
scatter and gather every row: ~1 CPU s more per sweep on that trace). Nothing runs per
operation in Python; the loops are over devices and collective kinds.

How, per device, with M the latest end of the earlier operations of a set: an operation
adds ``max(0, e - max(s, M))`` to the union of that set, so running maxima give the unions
of compute (C), memory and all operations. The few communication kernels (N) are merged
into disjoint islands, and the compute time inside each island is read off C's running
union (``_cover``): exposed communication ``|N| - |N and C|`` is ``|C+N| - |C|``, exposed
memory ``|all| - |C+N|``, so the parts add up to the span exactly; the communication table
per collective kind reads the same compute sweep. An operation that starts after M of all
operations ends an idle gap ``[M, s]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .util_project import inside, stretch

if TYPE_CHECKING:
    import polars as pl

    from .util_calls import LaunchIndex

__all__ = [
    "ACCOUNTING_COLUMNS",
    "DEVICE_COLUMNS",
    "OPS_COLUMNS",
    "Swept",
    "device_sweep",
    "has_launches",
    "union_ns",
]

# Classes of work (the ``cls`` column of the operations).
COMPUTE, COMMUNICATION, MEMORY = 0, 1, 2
# Kinds of GPU operation (``kind`` of queries/work_in_order.sql).
KERNEL, MEMCPY, MEMSET, GRAPH = 0, 1, 2, 3

#: The operations the sweeps read, one row each, sorted by device and s (rows that start
#: together in any order: no result depends on it): device; s, e (start and end clipped to
#: the window, ns, e > s); cls (:data:`COMPUTE`, :data:`COMMUNICATION` or :data:`MEMORY`:
#: memcpys, memsets, copy kernels; graph replays are compute); collective (communication
#: kernels: 1 + the index of their collective kind; else 0); pid (of the launching process);
#: correlation_id (with pid, it names the launching API call: :mod:`tracelens.util_calls`);
#: optionally launch_start and launch_tid (the start and the thread of that call, when the
#: work holds them: then the sweeps look no call up).
OPS_COLUMNS = ("device", "s", "e", "cls", "collective", "pid", "correlation_id")

#: The time accounting of a device (times in ns), in order: what ``Util.frame`` shows.
ACCOUNTING_COLUMNS = (
    "device",
    "span_ns",
    "busy_ns",
    "idle_ns",
    "compute_ns",
    "communication_ns",
    "exposed_communication_ns",
    "memory_ns",
    "exposed_memory_ns",
    "utilization",
)

#: Columns of :func:`device_sweep` (times in ns), in order: the accounting, then the
#: first and last work and the idle time by cause.
DEVICE_COLUMNS = (
    *ACCOUNTING_COLUMNS,
    "first_ns",
    "last_ns",
    "before_first_ns",
    "after_last_ns",
    "sync_ns",
    "sync_gaps",
    "launch_bound_ns",
    "launch_bound_gaps",
    "unexplained_ns",
    "unexplained_gaps",
)


def _added(s: pl.Expr, e: pl.Expr, earlier: pl.Expr) -> pl.Expr:
    """What each operation adds to a union whose earlier operations end at ``earlier``
    (NULL: there are none): ``max(0, e - max(s, earlier))``."""
    import polars as pl

    return (e - pl.max_horizontal(s, earlier.fill_null(s))).clip(lower_bound=0)


def _union(mask: pl.Expr | None = None) -> pl.Expr:
    """The union of the operations of one device (those where ``mask`` holds), ns."""
    import polars as pl

    s, e = pl.col("s"), pl.col("e")
    if mask is not None:
        s, e = s.filter(mask), e.filter(mask)
    return _added(s, e, e.cum_max().shift(1)).sum()


def _device_slices(ops: pl.DataFrame) -> list[tuple[int, pl.DataFrame]]:
    """(device, its rows) for each device of ``ops`` (sorted by device): zero-copy slices."""
    import polars as pl

    runs = ops.select(pl.col("device").rle()).unnest("device")
    out, offset = [], 0
    for length, device in runs.iter_rows():
        out.append((device, ops.slice(offset, length)))
        offset += length
    return out


def union_ns(intervals: pl.DataFrame) -> int:
    """The time covered by at least one of ``intervals`` (device, s, e; sorted by device
    and s), summed over devices: overlaps on one device count once."""
    return sum(int(part.select(_union()).item()) for _, part in _device_slices(intervals))


class Swept(NamedTuple):
    """What :func:`device_sweep` gives: ``devices`` (one row per device with operations,
    :data:`DEVICE_COLUMNS`, by device) and ``communication`` (per device and collective
    kind: device, collective, calls, time_ns, busy_ns, exposed_ns; by device, then time)."""

    devices: pl.DataFrame
    communication: pl.DataFrame


def _device_row(
    device: int,
    part: pl.DataFrame,
    syncs: pl.DataFrame,
    launches: LaunchIndex | None,
    window: tuple[int, int, pl.DataFrame | None],
) -> tuple[tuple, list[pl.DataFrame]]:
    """One device's row of :data:`DEVICE_COLUMNS` (utilization None: the caller divides
    once for every device) and its communication islands per collective kind, from its
    operations ``part`` (sorted by s); ``window``: t0, t1 and the device's projection
    intervals (None: the whole window counts); see :func:`device_sweep`."""
    import polars as pl

    cls = pl.col("cls")
    t0, t1, intervals = window
    span = t1 - t0 if intervals is None else stretch(intervals, t0, t1)
    # The latest end of the earlier operations of the device: the busy time and the
    # idle gaps (_gap_causes) both read it, computed once.
    e = pl.col("e")
    part = part.with_columns(e.cum_max().shift(1).alias("earlier"))
    u = part.select(
        pl.col("s").min().alias("first"),
        e.max().alias("last"),
        _added(pl.col("s"), e, pl.col("earlier")).sum().alias("all"),
        _union(cls == MEMORY).alias("m"),
    ).row(0, named=True)
    compute = _compute_cover(part)
    c = compute["covered"][-1] if compute.height else 0
    comm = part.filter(cls == COMMUNICATION).select("device", "collective", "s", "e")
    n = exposed_n = 0
    comm_parts: list[pl.DataFrame] = []
    if comm.height:
        islands = _islands(comm)  # of every kind together
        n = int(islands.select((pl.col("b") - pl.col("a")).sum()).item())
        exposed_n = n - int(_hidden(compute, islands).sum())
        comm_parts = _collective_islands(comm, compute)
    busy = u["all"]
    row = (
        device,
        span,
        busy,
        span - busy,
        c,
        n,
        exposed_n,
        u["m"],
        busy - (c + exposed_n),
        None,  # utilization: as polars divides (by the reciprocal), in device_sweep
        u["first"],
        u["last"],
        u["first"] - t0 if intervals is None else stretch(intervals, t0, u["first"]),
        t1 - u["last"] if intervals is None else stretch(intervals, u["last"], t1),
        *_gap_causes(part, syncs, launches, intervals),
    )
    return row, comm_parts


def device_sweep(
    ops: pl.DataFrame,
    sync_calls: pl.DataFrame,
    launches: LaunchIndex | None,
    t0: int,
    t1: int,
    kinds: list[str] | tuple[str, ...] = (),
    projection: pl.DataFrame | None = None,
) -> Swept:
    """The time accounting of each device with operations and its communication per
    collective kind (:class:`Swept`), in one pass over each device's operations.

    ``ops``: :data:`OPS_COLUMNS`, sorted by device and s.
    ``sync_calls``: global_tid, start, end of the synchronizing API calls
    (``HostCalls.syncs``).
    ``launches``: the start and thread of each operation's launching call, looked up for
    the operations that end a gap only (``HostCalls.launches``); None when ``ops`` has the
    ``launch_start`` and ``launch_tid`` columns.
    ``kinds``: ``kinds[k - 1]`` names collective ``k`` of ``ops``
    (:func:`tracelens.util_ops.collective_kinds`).
    ``projection``: where each device's time counts (device, a, b, before:
    :func:`tracelens.util_project.projection`, an --nvtx selection's GPU projection); a
    device's span is the time its projection covers and each idle gap counts for its part
    inside it; None: the whole window, t0 to t1, on every device.
    Idle gaps are split by cause: the next operations (those starting when the gap ends)
    were launched after the gap began, by a thread that had been blocked in a
    synchronizing call during the gap ('sync': the first such call of the launching thread
    to end after the gap began, if it started before that launch; another thread's sync
    did not hold that launch back) or not ('launch_bound'); else the work was already
    queued ('unexplained').

    The union of compute and communication is not swept on its own: it is the compute
    union plus the communication no compute hid (:func:`_hidden`, from the islands of the
    few communication kernels), which the communication table reads too (on the 5M-kernel
    benchmark a sweep of 5M rows less, and one compute sweep where there were two)."""
    import polars as pl

    renamed = {"global_tid": "launch_tid", "start": "sync_start", "end": "sync_end"}
    syncs = sync_calls.rename(renamed).sort("sync_end")
    if has_launches(ops):
        launches = None  # each operation has its launch already: nothing to look up
    span = t1 - t0
    rows, comm_parts = [], []
    for device, part in _device_slices(ops):
        intervals = None
        if projection is not None:
            intervals = projection.filter(pl.col("device") == device)
        row, parts = _device_row(device, part, syncs, launches, (t0, t1, intervals))
        rows.append(row)
        comm_parts.extend(parts)
    schema = {c: pl.Int64 for c in DEVICE_COLUMNS} | {"utilization": pl.Float64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    if projection is not None:  # each device's own span
        spans = pl.col("span_ns")
        frame = frame.with_columns(
            utilization=pl.when(spans > 0).then(pl.col("busy_ns") / spans).otherwise(None)
        )
    elif span > 0:
        frame = frame.with_columns(utilization=pl.col("busy_ns") / span)
    return Swept(frame, _communication_table(comm_parts, list(kinds)))


def _compute_cover(part: pl.DataFrame) -> pl.DataFrame:
    """The compute operations of one device's (in start order) as :func:`_cover` reads
    them: s, covered (the union of them up to this one, ns), reach (the latest end of them
    up to this one). The last ``covered`` is the device's compute time."""
    import polars as pl

    e = pl.col("e")
    return part.filter(pl.col("cls") == COMPUTE).select(
        "s",
        _added(pl.col("s"), e, e.cum_max().shift(1)).cum_sum().alias("covered"),
        e.cum_max().alias("reach"),
    )


def _hidden(compute: pl.DataFrame, islands: pl.DataFrame) -> pl.Series:
    """The compute time of one device inside each of ``islands`` (a, b: disjoint), ns."""
    return _cover(compute, islands["b"]) - _cover(compute, islands["a"])


def _gap_causes(
    part: pl.DataFrame,
    syncs: pl.DataFrame,
    launches: LaunchIndex | None,
    intervals: pl.DataFrame | None = None,
) -> tuple[int, ...]:
    """The idle gaps of one device's operations (:data:`OPS_COLUMNS` and ``earlier``, the
    latest end of the earlier operations) by cause: sync_ns, sync_gaps, launch_bound_ns,
    launch_bound_gaps, unexplained_ns, unexplained_gaps. ``intervals``: the device's
    projection (:func:`device_sweep`): each gap counts for its time inside it, and a gap
    with none is no gap."""
    import polars as pl

    s = pl.col("s")
    # An operation that starts after the latest end of the earlier ones ends a gap. Of
    # operations that start together (peers) only the first can, and the peers launch
    # the gap's next work together: the earliest launch (and of launches together, the
    # smallest thread) among them. Most operations have no peer, so only tied gap ends are
    # looked up. Only these operations need their launching call: it is looked up for
    # them alone.
    ends_gap = s > pl.col("earlier")
    gaps = part.select(
        s.filter(ends_gap),
        *(pl.col(c).filter(ends_gap) for c in _launch_columns(part)),
        pl.col("earlier").filter(ends_gap).alias("gap_start"),
        (s == s.shift(-1)).fill_null(False).filter(ends_gap).alias("tied"),
    )
    length = s - pl.col("gap_start")
    if intervals is not None:
        inner = inside(intervals, gaps["s"]) - inside(intervals, gaps["gap_start"])
        gaps = gaps.with_columns(gap_len=inner).filter(pl.col("gap_len") > 0)
        length = pl.col("gap_len")
    if launches is not None:
        gaps = pl.concat(
            [gaps.drop("pid", "correlation_id"), launches.launches(gaps)], how="horizontal"
        )
    if gaps["tied"].any():
        gaps = _with_peers(gaps, part, launches)
    by_host = (pl.col("launch_start") > pl.col("gap_start")).fill_null(False)
    # Already queued when the gap began: summed where the gaps lie (on a busy trace most
    # are these; no copy of them).
    queued = gaps.select(length.filter(~by_host).sum(), (~by_host).sum().cast(pl.Int64)).row(0)
    # Launched after the gap began: by the host, blocked in a sync call or not.
    host = gaps.filter(by_host).select(
        "launch_tid", "gap_start", "launch_start", length.alias("len"), in_sync=pl.lit(False)
    )
    if syncs.height and host.height:
        # The sync is the first of the launching thread to end after the gap began; it
        # blocked the launch only if it began before the launch (then it also began before
        # the gap ended, as the work starts after its launch). A sync entered after the
        # launch did not hold the work back, nor did another thread's: the GPU waited for
        # the host (launch_bound).
        host = host.join_asof(
            syncs,
            left_on="gap_start",
            right_on="sync_end",
            by="launch_tid",
            strategy="forward",
            check_sortedness=False,
        ).with_columns(in_sync=(pl.col("sync_start") < pl.col("launch_start")).fill_null(False))
    length, in_sync = pl.col("len"), pl.col("in_sync")
    by_cause = host.select(
        length.filter(in_sync).sum(),
        in_sync.sum().cast(pl.Int64).alias("sync_gaps"),
        length.filter(~in_sync).sum().alias("bound_ns"),
        (~in_sync).sum().cast(pl.Int64).alias("bound_gaps"),
    ).row(0)
    return (*by_cause, *queued)


def has_launches(work: pl.DataFrame) -> bool:
    """Whether ``work`` holds each operation's launching call (``launch_start`` and
    ``launch_tid``: its start and thread), so that no call need be looked up."""
    return {"launch_start", "launch_tid"} <= set(work.columns)


def _launch_columns(part: pl.DataFrame) -> tuple[str, str]:
    """The columns of ``part`` that say which call launched each operation: its start and
    thread when the operations have them, else the process and correlation id to look
    them up."""
    return ("launch_start", "launch_tid") if has_launches(part) else ("pid", "correlation_id")


def _with_peers(
    gaps: pl.DataFrame, part: pl.DataFrame, launches: LaunchIndex | None
) -> pl.DataFrame:
    """``gaps`` (s, launch_start, launch_tid, gap_start, tied: the operations of ``part``
    that end a gap, in order) with each tied one's launch_start and launch_tid those of its
    peers (the operations of ``part`` that start with it): the earliest launch and its
    thread (of launches together, the smallest). The peers are found by binary search in ``part``'s starts (sorted) and the
    few tied rows are overwritten in place: no search of every operation and no join and
    re-sort of every gap (~0.05 CPU s per million gaps)."""
    import polars as pl

    at = gaps["tied"].arg_true()
    tied_s = gaps["s"].gather(at)
    starts = part["s"]
    lo = starts.search_sorted(tied_s, side="left").cast(pl.Int64)
    hi = starts.search_sorted(tied_s, side="right").cast(pl.Int64)
    rows = pl.select(pl.int_ranges(lo, hi).explode()).to_series()
    peers = part.select(pl.col("s", *_launch_columns(part)).gather(rows))
    if launches is not None:
        peers = pl.concat([peers.select("s"), launches.launches(peers)], how="horizontal")
    # the earliest launch first, nulls (no call found) last: a peer without one is taken
    # only when no peer has one
    first = peers.sort("launch_start", "launch_tid", nulls_last=True).group_by("s").first()
    found = tied_s.to_frame().join(first, on="s", how="left", maintain_order="left")
    return gaps.with_columns(
        gaps["launch_start"].clone().scatter(at, found["launch_start"]),
        gaps["launch_tid"].clone().scatter(at, found["launch_tid"]),
    )


def _collective_islands(comm: pl.DataFrame, compute: pl.DataFrame) -> list[pl.DataFrame]:
    """The islands of each collective kind of one device's communication kernels ``comm``
    (device, collective, s, e; in start order), each with the compute time it hides
    (``hidden``).

    How: the kernels of each (device, collective) are merged into disjoint islands; an
    island [a, b] is hidden for cover(b) - cover(a), with cover(t) the compute time of the
    device before t. With the compute kernels in start order, i the last one starting at
    or before t, U its running union and M its running maximum of ends: cover(t) =
    U - max(0, M - t) (the kernel that ends at M started at or before t, so all of [t, M]
    is covered, and no later one starts before t)."""
    parts = []
    for group in comm.partition_by("collective", maintain_order=True):
        islands = _islands(group)
        parts.append(islands.with_columns(hidden=_hidden(compute, islands)))
    return parts


def _communication_table(parts: list[pl.DataFrame], kinds: list[str]) -> pl.DataFrame:
    """:attr:`Swept.communication` from the islands of :func:`_collective_islands`:
    calls, time_ns, busy_ns (the union of each kind's kernels) and exposed_ns (the part of
    busy_ns with no compute kernel running on the device), per device and kind."""
    import polars as pl

    schema = {"device": pl.Int64, "collective": pl.String}
    counts = {c: pl.Int64 for c in ("calls", "time_ns", "busy_ns", "exposed_ns")}
    if not parts:
        return pl.DataFrame(schema=schema | counts)
    names = pl.DataFrame(
        {"collective": range(1, len(kinds) + 1), "kind": kinds},
        schema={"collective": pl.Int32, "kind": pl.String},
    )
    busy = pl.col("b") - pl.col("a")
    return (
        pl.concat(parts)
        .with_columns(pl.col("collective").cast(pl.Int32))
        .join(names, on="collective")
        .group_by("device", "kind")
        .agg(
            pl.col("calls").sum(),
            pl.col("time_ns").sum(),
            busy.sum().alias("busy_ns"),
            (busy - pl.col("hidden")).sum().alias("exposed_ns"),
        )
        .select(
            pl.col("device").cast(pl.Int64),
            pl.col("kind").alias("collective"),
            *(pl.col(c).cast(pl.Int64) for c in counts),
        )
        .sort(["device", "time_ns", "collective"], descending=[False, True, False])
    )


def _cover(compute: pl.DataFrame, at: pl.Series) -> pl.Series:
    """cover(t) of :func:`communication_sweep` for each t of ``at``: the compute time of
    the device before t. ``compute``: s (in order), covered (running union, ns), reach
    (running maximum of ends)."""
    import polars as pl

    if compute.is_empty():
        return pl.Series(at.name, [0] * len(at), dtype=pl.Int64)
    last = compute["s"].search_sorted(at, side="right").cast(pl.Int64) - 1
    row = last.clip(lower_bound=0)
    found = compute.select(pl.col("covered", "reach").gather(row)).with_columns(
        at=at, found=last >= 0
    )
    return found.select(
        pl.when("found")
        .then(pl.col("covered") - (pl.col("reach") - pl.col("at")).clip(lower_bound=0))
        .otherwise(0)
    ).to_series()


def _islands(group: pl.DataFrame) -> pl.DataFrame:
    """The disjoint islands of one (device, collective)'s intervals, in start order:
    device, collective, a, b, calls, time_ns (the sum of their durations). An operation
    starts an island when it starts after the latest end of the earlier ones; the island
    ends at the running maximum of the ends on the row before the next island starts."""
    import polars as pl

    latest = pl.col("e").cum_max()
    starts = (pl.col("s") > latest.shift(1)).fill_null(True)
    marked = group.select(
        "device",
        "collective",
        "s",
        latest.alias("latest"),
        (pl.col("e") - pl.col("s")).cum_sum().alias("dur_before"),
        pl.int_range(pl.len()).alias("row"),
        starts.alias("starts"),
        starts.shift(-1, fill_value=True).alias("ends"),
    )
    first = marked.filter("starts").select("device", "collective", pl.col("s").alias("a"), "row")
    last = marked.filter("ends").select(
        pl.col("latest").alias("b"), pl.col("row").alias("last_row"), "dur_before"
    )
    return pl.concat([first, last], how="horizontal").select(
        "device",
        "collective",
        "a",
        "b",
        (pl.col("last_row") - pl.col("row") + 1).alias("calls"),
        (pl.col("dur_before") - pl.col("dur_before").shift(1, fill_value=0)).alias("time_ns"),
    )
