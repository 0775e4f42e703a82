"""The two GPU rules of ``nsys analyze`` 2022.4 over one read of its GPU operations
(:func:`gpu_ops`, from the operations util reads), in vectorized polars: ``gpu_gaps`` (gpu-starv: GPU idle
gaps longer than a threshold) and ``gpu_low_util`` (gpu-low-util: chunks of low in-use
percentage, coalesced). Both work per process and device, over its operations in start
order; each (process, device) is a contiguous slice of the sorted read, swept on its own.

Why not SQL: each rule was a query of its own, each reading and sorting the operations
again (a window partitioned by process and device): ~3 CPU s apiece on a 5M-kernel trace.
Same rows as those queries (their goldens are this module's), and as nsys analyze.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["GAP_COLUMNS", "LOW_UTIL_COLUMNS", "gpu_gaps", "gpu_low_util", "gpu_ops"]

#: Columns of :func:`gpu_gaps`: duration_ns (length of the gap), start_ns (end of the
#: operation before it), pid, device, context (the smallest CUDA context of the operations
#: that end where the gap starts); times in ns.
GAP_COLUMNS = ("duration_ns", "start_ns", "pid", "device", "context")
#: Columns of :func:`gpu_low_util`: in_use_pct (length-weighted average in-use percentage
#: of the coalesced chunks, rounded to 0.1), duration_ns, start_ns (of the region), pid,
#: device, context (the smallest CUDA context of the process's operations on the device).
LOW_UTIL_COLUMNS = ("in_use_pct", "duration_ns", "start_ns", "pid", "device", "context")


#: The columns of :func:`tracelens.util.read_work` that :func:`gpu_ops` reads.
WORK_COLUMNS = ("device", "start_ns", "end_ns", "kind", "pid", "context")


def gpu_ops(trace: Trace, work: pl.DataFrame) -> pl.DataFrame:
    """The GPU operations of nsys analyze's utilization rules among ``work``
    (:func:`tracelens.util.read_work` of the event filter): kernels, memcpys and memsets that
    start after 0 (not graph-level CUDA graph replays), plus the CUDA profiler flush
    overheads of a process that lie strictly inside its first-to-last operation range on
    a device (nsys counts them busy: the user cannot address that time; with that range's
    smallest context). Columns start_ns, end_ns, pid, device, context, pair (a number per
    (process, device) pair); each pair's rows together, in start order (rows that start
    together in any order: neither rule depends on it)."""
    import polars as pl

    from .util_sweep import GRAPH

    start, end = pl.col("start_ns"), pl.col("end_ns")
    columns = ("start_ns", "end_ns", "pid", "device", "context")
    counted = (pl.col("kind") != GRAPH) & (start > 0)
    # All of util's rows count, usually: then its columns are used as they are, not copied.
    ops = (work if work.select(counted.all()).item() else work.filter(counted)).select(columns)
    overheads = trace.query("findings_profiler_overheads")
    if overheads.height and ops.height:
        ranges = ops.group_by("pid", "device").agg(
            start.min().alias("first"), end.max().alias("last"), pl.col("context").min()
        )
        inside = overheads.join(ranges, on="pid").filter(
            start > pl.col("first"), end < pl.col("last")
        )
        if inside.height:
            return _by_pair_and_start(pl.concat([ops, inside.select(columns)]))
    device = pl.col("device")
    one_process = ~((device == device.shift(1)) & (pl.col("pid") != pl.col("pid").shift(1))).any()
    if ops.select(one_process).item():
        # One process per device (the usual case): util's order (by device, then start) is
        # already by pair and start, and the columns are util's own, not copies.
        return ops.with_columns(pair=device)
    return _by_pair_and_start(ops)


def _by_pair_and_start(ops: pl.DataFrame) -> pl.DataFrame:
    """``ops`` with ``pair`` (the number of its (process, device) pair), sorted by pair and
    start."""
    import polars as pl

    start = pl.col("start_ns")
    # One Int64 sort key: the (process, device) pairs numbered in order, then the start
    # (polars sorts 5M rows on one key in ~0.3 CPU s, on three columns in ~1 s).
    pairs = ops.select("pid", "device").unique().sort("pid", "device")
    number = pairs.with_row_index("pair").with_columns(pl.col("pair").cast(pl.Int64))
    ops = ops.join(number, on=["pid", "device"], how="left")
    bounds = ops.select(start.min().alias("s0"), start.max())
    s0, s1 = bounds.row(0)
    if s0 is None or pairs.height * (s1 - s0 + 1) >= 2**63:
        return ops.sort("pair", "start_ns")
    return ops.sort(pl.col("pair") * (s1 - s0 + 1) + (start - s0))


def _pair_slices(ops: pl.DataFrame) -> list[pl.DataFrame]:
    """Each (process, device)'s rows of :func:`gpu_ops`: zero-copy slices."""
    import polars as pl

    out, offset = [], 0
    for (length,) in ops.select(pl.col("pair").rle().struct.field("len")).iter_rows():
        out.append(ops.slice(offset, length))
        offset += length
    return out


def gpu_gaps(ops: pl.DataFrame, gap_ns: int) -> pl.DataFrame:
    """The idle gaps longer than ``gap_ns`` of each process and device (:data:`GAP_COLUMNS`),
    longest first. An operation that starts after the latest end M of the earlier ones
    ends the gap [M, start]: exactly the stretches where none of the process's operations
    runs on the device (nsys pairs the j-th end with the (j+1)-th start)."""
    import polars as pl

    end = pl.col("end_ns")
    parts = []
    for part in _pair_slices(ops):
        gaps = part.select(
            (pl.col("start_ns") - end.cum_max().shift(1)).alias("duration_ns"),
            end.cum_max().shift(1).alias("start_ns"),
            "pid",
            "device",
        ).filter(pl.col("duration_ns") > gap_ns)
        if gaps.height:
            before = (
                part.filter(end.is_in(gaps["start_ns"].implode()))
                .group_by(end.alias("start_ns"))
                .agg(pl.col("context").min())
            )
            parts.append(gaps.join(before, on="start_ns", how="left"))
    if not parts:
        return pl.DataFrame(schema=dict.fromkeys(GAP_COLUMNS, pl.Int64))
    return (
        pl.concat(parts)
        .select(pl.col(c).cast(pl.Int64) for c in GAP_COLUMNS)
        .sort(["duration_ns", "start_ns", "pid", "device"], descending=[True, False, False, False])
    )


def gpu_low_util(ops: pl.DataFrame, chunks: int, threshold_pct: float) -> pl.DataFrame:
    """The regions of low GPU use of each process and device (:data:`LOW_UTIL_COLUMNS`),
    lowest first, as nsys analyze computes them: the range from the first start to the last
    end is cut into ``chunks`` chunks of ceil(range / chunks) ns (the last one clipped to
    the range); a chunk's in-use percentage is the summed overlap of the operations with it
    over its length (concurrent operations add up, so it can exceed 100); chunks below
    ``threshold_pct`` are kept and consecutive ones coalesced, with the length-weighted
    average. The overlaps are integers (chunk bounds are whole ns), summed exactly per
    chunk in polars; only the chunks (at most ``chunks`` per pair) are looked at in Python,
    in the floating-point operations of the SQL it replaces."""
    import polars as pl

    rows = []
    for part in _pair_slices(ops):
        rows.extend(_low_regions(part, chunks, threshold_pct))
    schema = dict.fromkeys(LOW_UTIL_COLUMNS, pl.Int64) | {"in_use_pct": pl.Float64}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    return frame.sort("in_use_pct", "duration_ns", "start_ns", "pid", "device")


def _low_regions(part: pl.DataFrame, chunks: int, threshold_pct: float) -> list[tuple]:
    """The rows of :func:`gpu_low_util` of one (process, device)'s operations."""
    import polars as pl

    first, last, context, pid, device = part.select(
        pl.col("start_ns").min(),
        pl.col("end_ns").max(),
        pl.col("context").min(),
        pl.col("pid").first(),
        pl.col("device").first(),
    ).row(0)
    # nsys: ceil(range / chunks) as a double; exact for any range under 2^53 ns. A range
    # of no time has no chunk; operations of no duration at all are no GPU work (util says
    # so, and shows no device), so they have no low-use window either.
    size = math.ceil((last - first) / chunks)
    if size == 0 or part.select((pl.col("end_ns") - pl.col("start_ns")).max()).item() <= 0:
        return []
    bounds = {}
    for i in range(chunks):
        lo, hi = first + i * size, min(first + (i + 1) * size, last)
        if lo < hi:
            bounds[i] = (lo, hi)
    used = _used_ns(part, first, last, size, chunks, bounds)
    out, run = [], []
    for i, (lo, hi) in bounds.items():
        length = hi - lo
        pct = used.get(i, 0) / length * 100
        if pct < threshold_pct and run and run[-1][0] == i - 1:
            run.append((i, lo, hi, pct))
        elif pct < threshold_pct:
            if run:
                out.append(_region(run, pid, device, context))
            run = [(i, lo, hi, pct)]
    if run:
        out.append(_region(run, pid, device, context))
    return out


def _region(run: list[tuple], pid: int, device: int, context: int) -> tuple:
    """One coalesced region: consecutive low chunks (index, start, end, in-use %)."""
    weighted = lengths = 0.0
    for _, lo, hi, pct in run:  # in chunk order, as the SQL summed them
        weighted += float(hi - lo) * pct
        lengths += float(hi - lo)
    start, end = run[0][1], run[-1][2]
    return (_round_tenth(weighted / lengths), end - start, start, pid, device, context)


def _round_tenth(value: float) -> float:
    """``value`` rounded to 0.1 as DuckDB's round(x, 1) does: round(x * 10) / 10 with
    halves away from zero (Python's round() rounds the exact decimal, halves to even)."""
    scaled = value * 10
    whole = math.floor(abs(scaled))
    if abs(scaled) - whole >= 0.5:
        whole += 1
    return math.copysign(whole, scaled) / 10


def _used_ns(part, first, last, size, chunks, bounds) -> dict[int, int]:
    """Per chunk index: the summed overlap of ``part``'s operations with the chunk, ns.
    Most operations lie in one chunk and add their duration; only those that cross a
    chunk boundary are cut."""
    import polars as pl

    start, end = pl.col("start_ns"), pl.col("end_ns")
    placed = part.select(
        "start_ns",
        "end_ns",
        ((start - first) // size).alias("a"),
        pl.min_horizontal((end - first) // size, pl.lit(chunks - 1, pl.Int64)).alias("b"),
    )
    a, b = pl.col("a"), pl.col("b")
    inside = placed.filter(a == b).group_by("a").agg((end - start).sum().alias("used"))
    used = dict(inside.iter_rows())
    cut = placed.filter(a < b)
    if cut.height:
        pieces = cut.select("start_ns", "end_ns", pl.int_ranges(a, b + 1).alias("i")).explode("i")
        lo = first + pl.col("i") * size
        hi = pl.min_horizontal(first + (pl.col("i") + 1) * size, pl.lit(last, pl.Int64))
        crossing = (
            pieces.filter(lo < hi, start < hi, end > lo)
            .group_by("i")
            .agg((pl.min_horizontal(end, hi) - pl.max_horizontal(start, lo)).sum())
        )
        for i, ns in crossing.iter_rows():
            used[i] = used.get(i, 0) + ns
    return {i: ns for i, ns in used.items() if i in bounds}
