"""The orders of a fingerprint's kernel launches, each from one sort of a packed key:
host launch order (:func:`launch_order`: the step search's launch sequence, the blocks of
period steps and, where the units follow it, their order), GPU start order
(:func:`start_order`: GPU windows), the units' order (:func:`unit_order`: by unit, then
launch order) and host launch order one thread after another (:func:`thread_order`: where
the units' launches are in the capture).

Polars sorts the 5M launches of the bench trace on one Int64 key in ~0.15 CPU s; on the
three or four columns it stands for, ~1.3 s (and DuckDB's window over them cost seconds).
The packed key is used whenever its columns' ranges fit in 63 bits and it has no ties; else
the columns are sorted as they are (same order, slower).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


def _packed_key(
    frame: pl.DataFrame, columns: list[tuple[str, bool]], spare_bits: int = 0
) -> pl.Expr | None:
    """An Int64 expression per row whose order is the order of ``columns`` ((name, nulls
    last), each ascending), or None when their ranges do not fit in 63 - ``spare_bits``
    bits together (the caller keeps the low ``spare_bits`` bits for the row number)."""
    import polars as pl

    stats = frame.select(
        *(pl.col(c).min().cast(pl.Int64).alias(f"lo{i}") for i, (c, _) in enumerate(columns)),
        *(pl.col(c).max().cast(pl.Int64).alias(f"hi{i}") for i, (c, _) in enumerate(columns)),
        *(pl.col(c).null_count().alias(f"nul{i}") for i, (c, _) in enumerate(columns)),
    ).row(0, named=True)
    parts, total = [], 1
    for i, (name, nulls_last) in reversed(list(enumerate(columns))):
        lo, hi, nulls = stats[f"lo{i}"], stats[f"hi{i}"], stats[f"nul{i}"]
        if lo is None:  # all NULL: one value
            continue
        first = 1 if nulls and not nulls_last else 0
        span = hi - lo + 1 + (1 if nulls else 0)
        value = pl.col(name).cast(pl.Int64)
        if lo - first:  # each pass over 5M rows costs: none that does nothing
            value = value - (lo - first)
        if nulls:
            value = value.fill_null(hi - lo + 1 if nulls_last else 0)
        parts.append(value if total == 1 else value * total)
        total *= span
        if total >= 2 ** (63 - spare_bits):
            return None
    key = parts[0] if parts else pl.lit(0, pl.Int64)
    for value in parts[1:]:
        key = key + value
    return key


def sort_order(
    frame: pl.DataFrame, packed: list[tuple[str, bool]], ties: tuple[str, ...]
) -> pl.Series:
    """Row indices of ``frame`` in the order of the ``packed`` columns ((name, nulls last))
    then ``ties`` (nulls last): one sort of a packed key when it fits, the rows that share a
    key (usually few) then sorted among themselves by ``ties``.

    When the key leaves room for the row number in its low bits, a plain sort of key and
    row together is the order (0.12 CPU s on the 5M launches of the bench trace; an
    arg-sort of the key and a gather of it, 0.25)."""
    import polars as pl

    n = frame.height
    row_bits = max(n - 1, 1).bit_length()
    key = _packed_key(frame, packed, row_bits)
    if key is not None:
        rows = frame.select(key * (1 << row_bits) + pl.int_range(n, dtype=pl.Int64)).to_series()
        rows = rows.sort()
        order = (rows % (1 << row_bits)).cast(pl.UInt32)
        ordered = rows // (1 << row_bits)
    else:
        key = _packed_key(frame, packed)
        names = [c for c, _ in packed] + list(ties)
        nulls_last = [last for _, last in packed] + [True] * len(ties)
        if key is None:
            return frame.select(pl.arg_sort_by(*names, nulls_last=nulls_last)).to_series()
        key = frame.select(key).to_series()
        order = key.arg_sort()
        ordered = key.gather(order)
    if not ties or n < 2:
        return order
    tied = (ordered == ordered.shift(1)) | (ordered == ordered.shift(-1))
    at = tied.fill_null(False).arg_true()
    if at.len() == 0:
        return order
    # Tied rows are contiguous runs of one key in ``order``: sorting them by (key, ties)
    # and writing them back to the same positions keeps every key where it was.
    rows = order.gather(at)
    subset = frame.select(pl.col(*ties).gather(rows)).with_columns(key=ordered.gather(at), row=rows)
    resorted = subset.sort("key", *ties, nulls_last=True, maintain_order=True)["row"]
    return order.scatter(at, resorted)


def _ties(launches: pl.DataFrame, columns: tuple[str, ...]) -> tuple[str, ...]:
    """``columns`` but the stream when the launches were read without it (its order then
    matters nowhere: :func:`start_ties`)."""
    return tuple(c for c in columns if c != "stream" or "stream" in launches.columns)


def start_order(launches: pl.DataFrame) -> pl.Series:
    """The launches' row indices per device in GPU order (start, stream, end), the order
    of ``queries/steps_launches.sql``. Without a stream column by start and end: the
    order's one use, the step whose GPU window holds a launch's start, is the same for
    launches that start together."""
    ties = _ties(launches, ("stream", "end_ns"))
    return sort_order(launches, [("device", True), ("start_ns", True)], ties)


def start_ties(launches: pl.DataFrame, order: pl.Series) -> bool:
    """Whether two launches next to each other in ``order`` (:func:`launch_order`) share
    device, correlation id (NULL as one) and start: only their streams order them
    (kernels of one CUDA graph launch that start in the same ns), so launches read without
    their stream are read again with it. Two processes' launches that tie so on one device
    read it too (needlessly: the process orders them)."""
    import polars as pl

    if order.len() < 2:
        return False
    columns = ("device", "correlation_id", "start_ns")
    ordered = launches.select(pl.col(*columns).gather(order))
    same = pl.lit(True)
    for name in columns:
        same = same & pl.col(name).eq_missing(pl.col(name).shift(1))
    return bool(ordered.select(same.fill_null(False).any()).item())


def launch_order(launches: pl.DataFrame) -> pl.Series:
    """The launches' row indices per device in the order the host launched them (the
    launching process, when several launched on a device: by their first launch there,
    :func:`tracelens.steps_order.process_ranks`; correlation id, NULL last; then start,
    stream, end): the step search's launch sequence
    (:func:`tracelens.steps_order.launch_order`), the blocks of period steps
    (:func:`tracelens.fingerprint.members.host_order_steps`) and, where the units follow
    it, their order (:func:`unit_order`), from this one sort. Launches read without their
    stream: by start and end, which is this order unless :func:`start_ties`."""
    from ..steps_order import process_ranks

    process = process_ranks(launches)
    ties = _ties(launches, ("start_ns", "stream", "end_ns"))
    if process is None:
        by_launch = [("device", True), ("correlation_id", True)]
        return sort_order(launches, by_launch, ties)
    by_launch = [("device", True), ("process", True), ("correlation_id", True)]
    keys = launches.select("device", "correlation_id", *ties, process=process)
    return sort_order(keys, by_launch, ties)


def thread_order(launches: pl.DataFrame, order: pl.Series) -> pl.Series:
    """``order`` (the launches' rows in host launch order, :func:`launch_order`) with each
    process's launches on a device taken one host thread after another (by rank,
    ``thread``: :mod:`tracelens.fingerprint.threads`), each thread's in the order it had:
    a unit's order (:func:`unit_order`) over the whole device. ``order`` itself where no
    process launched from several threads (no ``thread`` column).

    Why: CUPTI's correlation ids interleave two threads' calls as the host scheduler ran
    them, so a launch's place in ``order`` changes from run to run of one program, where
    its place in its own thread's sequence does not (``at``, fingerprint.places)."""
    import polars as pl

    if "thread" not in launches.columns or order.len() < 2:
        return order
    # A process's launches on a device are one stretch of ``order`` (it sorts by device,
    # then process): each stretch is numbered, and the rows sorted by stretch, thread and
    # place in ``order``, no process rank needed. Without global_pid one process launched
    # every kernel of each device (units.read_launches): a stretch per device.
    columns = [c for c in ("device", "global_pid") if c in launches.columns]
    ordered = launches.select(pl.col(*columns, "thread").gather(order))
    new = pl.lit(False)
    for name in columns:
        new = new | ~pl.col(name).eq_missing(pl.col(name).shift(1))
    keys = ordered.select(
        stretch=new.fill_null(True).cum_sum().cast(pl.Int64),
        thread=pl.col("thread"),
        at=pl.int_range(pl.len(), dtype=pl.Int64),
    )
    # ``at`` in the key, not a tie: nearly every row ties on stretch and thread, and
    # sort_order sorts its tied rows a second time
    packed = [("stretch", False), ("thread", False), ("at", False)]
    return order.gather(sort_order(keys, packed, ()))


def unit_order(
    frame: pl.DataFrame, launched: pl.Series | None = None
) -> tuple[pl.Series, pl.Series]:
    """(the launches' row indices by unit, then in launch order: process (when several
    launched on a device: ``process``), thread (when a process launched from several:
    ``thread``, :mod:`tracelens.fingerprint.threads`), correlation id (NULL last), GPU
    start, code; the unit key of each launch in that order: one Int64 per
    (device, step, region_id), in their order, NULLs first). Two columns are gathered in
    that order, not the six a unit's launches are described by (0.3 -> 0.2 CPU s on the
    5M launches of the bench trace).

    ``launched``: the rows of ``frame`` in host launch order (:func:`launch_order`), when
    known. Where the units follow one another in it (no steps, or steps that split the
    launch sequence, and no NVTX regions) it is their order but for launches of one call
    that start together (ordered by code here, :func:`_by_code`): no sort (0.2 CPU s)."""
    import polars as pl

    key = _packed_key(frame, [("device", False), ("step", False), ("region_id", False)])
    if key is None:  # beyond 63 bits together: ranked instead (same order, slower)
        key = pl.struct("device", "step", "region_id").rank("dense")
    frame = frame.with_columns(unit=key.cast(pl.Int64))
    # host launch order interleaves a process's threads (fingerprint.threads): sorted here
    if launched is not None and "thread" not in frame.columns:
        unit = frame["unit"].gather(launched)
        if unit.is_sorted():
            return _by_code(frame, launched, unit), unit
    process = [(c, False) for c in ("process", "thread") if c in frame.columns]
    packed = [("unit", False), *process, ("correlation_id", True)]
    order = sort_order(frame, packed, ("start_ns", "code"))
    return order, frame["unit"].gather(order)


def _by_code(frame: pl.DataFrame, order: pl.Series, unit: pl.Series) -> pl.Series:
    """``order`` (rows of ``frame`` by unit, then process, correlation id and start:
    ``unit``, the unit of each) with the launches of one unit, process, call and start
    ordered by code. Only the launches that share a unit and a call (CUDA graph kernels)
    are looked at."""
    import polars as pl

    n = order.len()
    if n < 2:
        return order
    corr = frame["correlation_id"].gather(order)
    same = corr.slice(1).eq_missing(corr.slice(0, n - 1)) & (unit.slice(1) == unit.slice(0, n - 1))
    if "process" in frame.columns:  # several processes on a device: their calls are apart
        process = frame["process"].gather(order)
        same = same & (process.slice(1) == process.slice(0, n - 1))
    at = same.arg_true().cast(pl.Int64) + 1  # positions that share unit and call with the last
    if at.len() == 0:
        return order
    start = frame["start_ns"]
    tied = at.filter(start.gather(order.gather(at)) == start.gather(order.gather(at - 1)))
    if tied.len() == 0:
        return order
    tie = pl.repeat(False, n, dtype=pl.Boolean, eager=True).scatter(tied, True)
    run = (~tie).cum_sum()  # the same number for a launch and the ones tied to it
    at = (tie | tie.shift(-1, fill_value=False)).arg_true()
    rows = order.gather(at)
    code = frame["code"].gather(rows)
    runs = pl.DataFrame({"run": run.gather(at), "code": code, "row": rows})
    resorted = runs.sort("run", "code", maintain_order=True)["row"]
    return order.scatter(at, resorted)
