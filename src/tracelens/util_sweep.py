"""The sweeps behind util: unions of intervals, idle gaps and hidden communication, over the
GPU operations of ``util.operations`` (:data:`OPS_COLUMNS`: one row per operation, sorted
by device and start), in vectorized polars.

Why not SQL: each union needs the running maximum of the earlier operations' ends, which
DuckDB 1.5 computes as a framed window aggregate (a segment tree per frame). On the 5M-kernel
benchmark the five maxima of ``util`` took ~16 CPU s there; here they are cumulative maxima
over columns that are already sorted, ~1 CPU s. Nothing runs per operation in Python.

How, per device, with M the latest end of the earlier operations of a set: an operation
adds ``max(0, e - max(s, M))`` to the union of that set, so five running maxima give the
unions of compute (C), communication (N), memory, C+N and all; exposed communication is
``|C+N| - |C|``, exposed memory ``|all| - |C+N|``, so the parts add up to the span exactly.
An operation that starts after M of all operations ends an idle gap ``[M, s]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "ACCOUNTING_COLUMNS",
    "DEVICE_COLUMNS",
    "OPS_COLUMNS",
    "communication_sweep",
    "device_sweep",
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
#: launch_start (start of the launching API call, ns; null when unknown).
OPS_COLUMNS = ("device", "s", "e", "cls", "collective", "pid", "launch_start")

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

# Each union of device_sweep: the classes of work it covers.
_UNIONS = {
    "all": (COMPUTE, COMMUNICATION, MEMORY),
    "c": (COMPUTE,),
    "n": (COMMUNICATION,),
    "m": (MEMORY,),
    "cn": (COMPUTE, COMMUNICATION),
}


def _earlier_max(values: pl.Expr, by: str) -> pl.Expr:
    """Per ``by`` group (rows in sweep order), the maximum of ``values`` over the earlier
    rows (NULL values skipped; NULL when there are none)."""
    return values.cum_max().forward_fill().shift(1).over(by)


def _added(earlier: str) -> pl.Expr:
    """What an operation adds to a union whose earlier operations end at ``earlier``."""
    import polars as pl

    s, e = pl.col("s"), pl.col("e")
    return (e - pl.max_horizontal(s, pl.col(earlier).fill_null(s))).clip(lower_bound=0)


def union_ns(intervals: pl.DataFrame) -> int:
    """The time covered by at least one of ``intervals`` (device, s, e; sorted by device
    and s), summed over devices: overlaps on one device count once."""
    import polars as pl

    if intervals.is_empty():
        return 0
    earlier = _earlier_max(pl.col("e"), "device").alias("m")
    return int(intervals.select("s", "e", earlier).select(_added("m").sum()).item())


def device_sweep(ops: pl.DataFrame, sync_calls: pl.DataFrame, t0: int, t1: int) -> pl.DataFrame:
    """One row per device with operations (:data:`DEVICE_COLUMNS`), by device.

    ``ops``: :data:`OPS_COLUMNS`, sorted by device and s.
    ``sync_calls``: pid, start, end of the synchronizing API calls (util_sync_calls.sql).
    Idle gaps are split by cause: the next operations (those starting when the gap ends)
    were launched after the gap began, while the process was blocked in a synchronizing
    call overlapping the gap ('sync': the first such call of the process to end after the
    gap began, if it started before the gap ended) or not ('launch_bound'); else the work
    was already queued ('unexplained')."""
    import polars as pl

    cls, s, e = pl.col("cls"), pl.col("s"), pl.col("e")
    swept = ops.with_columns(_earlier_max(e, "device").alias("m_all"))
    unions = swept.group_by("device").agg(
        s.min().alias("first_ns"), e.max().alias("last_ns"), _added("m_all").sum().alias("all_ns")
    )
    # One union at a time, over the operations of its classes only (the running maximum of
    # a class's earlier ends is that of the earlier rows of the subset), each reduced to its
    # per-device sum at once: at most one column of running maxima beside them.
    for key, classes in _UNIONS.items():
        if key == "all":
            continue
        part = (
            ops.filter(cls.is_in(classes))
            .select("device", "s", "e", e.cum_max().shift(1).over("device").alias("m"))
            .group_by("device")
            .agg(_added("m").sum().alias(f"{key}_ns"))
        )
        unions = unions.join(part, on="device", how="left")
    idle = _gap_causes(swept, sync_calls)
    del swept
    span = t1 - t0
    return (
        unions.join(idle, on="device", how="left")
        .with_columns(
            pl.col(c).fill_null(0)
            for c in (*idle.columns, *(f"{key}_ns" for key in _UNIONS))
            if c != "device"
        )
        .select(
            "device",
            pl.lit(span, pl.Int64).alias("span_ns"),
            pl.col("all_ns").alias("busy_ns"),
            (span - pl.col("all_ns")).alias("idle_ns"),
            pl.col("c_ns").alias("compute_ns"),
            pl.col("n_ns").alias("communication_ns"),
            (pl.col("cn_ns") - pl.col("c_ns")).alias("exposed_communication_ns"),
            pl.col("m_ns").alias("memory_ns"),
            (pl.col("all_ns") - pl.col("cn_ns")).alias("exposed_memory_ns"),
            (pl.col("all_ns") / span if span > 0 else pl.lit(None, pl.Float64)).alias(
                "utilization"
            ),
            "first_ns",
            "last_ns",
            (pl.col("first_ns") - t0).alias("before_first_ns"),
            (t1 - pl.col("last_ns")).alias("after_last_ns"),
            *(c for c in idle.columns if c != "device"),
        )
        .with_columns(pl.col(c).cast(pl.Int64) for c in DEVICE_COLUMNS if c != "utilization")
        .sort("device")
    )


def _gap_causes(swept: pl.DataFrame, sync_calls: pl.DataFrame) -> pl.DataFrame:
    """Per device: time and count of the idle gaps of each cause (sync_ns, sync_gaps, ...)."""
    import polars as pl

    s, device = pl.col("s"), pl.col("device")
    # Operations that start together (peers) launch the gap's next work together: the
    # earliest launch and the smallest process among them. Most operations have no peer,
    # so only tied rows are grouped.
    same_prev = ((s == s.shift(1)) & (device == device.shift(1))).fill_null(False)
    same_next = ((s == s.shift(-1)) & (device == device.shift(-1))).fill_null(False)
    marked = swept.select(
        "device",
        "s",
        "m_all",
        "pid",
        "launch_start",
        same_prev.alias("same_prev"),
        same_next.alias("same_next"),
        (~same_prev).cum_sum().alias("peer"),
    )
    # Only the first of the peers (in sweep order) can start after all earlier work.
    gaps = marked.filter(s > pl.col("m_all"))
    tied = gaps.filter("same_next")
    if tied.height:
        firsts = (
            marked.filter(pl.col("same_prev") | pl.col("same_next"))
            .group_by("peer")
            .agg(pl.col("launch_start").min(), pl.col("pid").min())
        )
        tied = tied.drop("launch_start", "pid").join(firsts, on="peer")
    gaps = pl.concat([gaps.filter(~pl.col("same_next")), tied.select(gaps.columns)]).select(
        "device",
        "pid",
        "launch_start",
        pl.col("m_all").alias("gap_start"),
        s.alias("gap_end"),
    )
    by_host = pl.col("launch_start") > pl.col("gap_start")
    host = (
        gaps.filter(by_host)
        .sort("gap_start")
        .join_asof(
            sync_calls.rename({"start": "sync_start", "end": "sync_end"}),
            left_on="gap_start",
            right_on="sync_end",
            by="pid",
            strategy="forward",
            check_sortedness=False,
        )
        .select(
            "device",
            "gap_start",
            "gap_end",
            pl.when(pl.col("sync_start") < pl.col("gap_end"))
            .then(pl.lit("sync"))
            .otherwise(pl.lit("launch_bound"))
            .alias("cause"),
        )
    )
    queued = gaps.filter(~by_host.fill_null(False)).select(
        "device", "gap_start", "gap_end", pl.lit("unexplained").alias("cause")
    )
    classified = pl.concat([host, queued]).with_columns(
        (pl.col("gap_end") - pl.col("gap_start")).alias("len")
    )
    cause = pl.col("cause")
    return classified.group_by("device").agg(
        *(
            agg
            for name in ("sync", "launch_bound", "unexplained")
            for agg in (
                pl.col("len").filter(cause == name).sum().alias(f"{name}_ns"),
                (cause == name).sum().alias(f"{name}_gaps"),
            )
        )
    )


def communication_sweep(ops: pl.DataFrame, kinds: list[str]) -> pl.DataFrame:
    """Per device and collective kind: calls, time_ns, busy_ns (the union of its kernels)
    and exposed_ns (the part of busy_ns with no compute kernel running on the device); by
    device, then time. ``kinds[k - 1]`` names collective ``k`` of ``ops``.

    How: the compute kernels of a device and the kernels of each (device, collective) are
    merged into disjoint islands. With cover(t) the compute time before t (the last compute
    island starting at or before t, plus the compute time of the islands before it), a
    communication island [a, b] is hidden for cover(b) - cover(a); the rest is exposed."""
    import polars as pl

    work = ops.filter(pl.col("cls") != MEMORY).select(
        "device",
        "s",
        "e",
        pl.when(pl.col("cls") == COMPUTE)
        .then(0)
        .otherwise("collective")
        .cast(pl.Int32)
        .alias("collective"),
    )
    # One group per (device, collective), each still in start order.
    groups = work.partition_by("device", "collective", maintain_order=True)
    islands = pl.concat([_islands(g) for g in groups]) if groups else _islands(work)
    compute = (
        islands.filter(pl.col("collective") == 0)
        .sort("device", "a")
        .with_columns(
            (pl.col("b") - pl.col("a"))
            .cum_sum()
            .shift(1, fill_value=0)
            .over("device")
            .alias("before")
        )
        .select("device", pl.col("a").alias("ca"), pl.col("b").alias("cb"), "before")
        .sort("ca")
    )
    comm = islands.filter(pl.col("collective") > 0)

    def cover(at: str) -> pl.DataFrame:
        found = comm.sort(at).join_asof(
            compute,
            left_on=at,
            right_on="ca",
            by="device",
            strategy="backward",
            check_sortedness=False,
        )
        return found.with_columns(
            (pl.col("before") + pl.min_horizontal(pl.col(at), pl.col("cb")) - pl.col("ca"))
            .fill_null(0)
            .alias(f"cover_{at}")
        )

    hidden = cover("a").join(
        cover("b").select("device", "collective", "a", "cover_b"), on=["device", "collective", "a"]
    )
    names = pl.DataFrame(
        {"collective": range(1, len(kinds) + 1), "kind": kinds},
        schema={"collective": pl.Int32, "kind": pl.String},
    )
    busy = pl.col("b") - pl.col("a")
    return (
        hidden.join(names, on="collective")
        .group_by("device", "kind")
        .agg(
            pl.col("calls").sum(),
            pl.col("time_ns").sum(),
            busy.sum().alias("busy_ns"),
            (busy - (pl.col("cover_b") - pl.col("cover_a"))).sum().alias("exposed_ns"),
        )
        .select(
            "device",
            pl.col("kind").alias("collective"),
            *(pl.col(c).cast(pl.Int64) for c in ("calls", "time_ns", "busy_ns", "exposed_ns")),
        )
        .sort(["device", "time_ns", "collective"], descending=[False, True, False])
    )


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
