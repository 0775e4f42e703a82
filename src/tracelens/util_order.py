"""The sort of util's GPU operations: by device and start on one packed key (util's sweeps
read each device's operations in start order), then, for the launch order the diff and the
report read (:data:`ORDER`), the rows that start together by stream, end and kind.

Why a packed key and column-at-a-time gathers: sorting 5M rows on two columns took ~1.0 CPU
s, on one Int64 key ~0.3, and gathering the whole read at once held it twice (~400 MB on a
5M-kernel trace); each function says what it saves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["ORDER", "in_order", "taken_by_device_start"]

#: The order of :func:`tracelens.util.work_in_order`'s rows.
ORDER = ("device", "start_ns", "stream", "end_ns", "kind")
#: What orders rows that tie on :data:`ORDER` (the launching process and call, the graph
#: replayed, the kernel's name), where the read has them.
_IDENTITY = ("pid", "correlation_id", "graph_id", "name_id", "short_id")


def in_order(work: pl.DataFrame, drop: tuple[str, ...] = ()) -> pl.DataFrame:
    """``work`` without ``drop``, sorted by :data:`ORDER`: by device and start on one packed
    key, then only the rows that start together by stream, end, kind (a million rows in
    ~0.08 CPU s, where sorting on all five columns took ~0.2), gathered one column at a
    time, each dropped once copied: the sort holds one column twice, not the whole read
    (~400 MB on a 5M-kernel trace). A NULL device or start (nsys writes none) sorts by
    ORDER."""
    import polars as pl

    nulls = work.select(pl.col("device").null_count() + pl.col("start_ns").null_count()).item()
    if nulls:
        return work.sort(_sort_keys(work)).drop(drop)
    bounds = _bounds(work)
    keyed = _keyed_order(work, bounds)
    if keyed is None:
        order = _break_ties(work, _unkeyed_order(work, bounds))
        return _gathered([work.drop(drop)], order)
    order, lead = keyed
    order = _break_ties(work, order, lead)
    return _gathered([work.drop(drop)], order, lead)


def _sort_keys(work: pl.DataFrame) -> list[str]:
    """:data:`ORDER`, then what names the operation (:data:`_IDENTITY`, those ``work`` has),
    so that rows alike in ORDER too come out the same however the read ordered them (reads
    come in any order: :mod:`tracelens._fetch`)."""
    return [*ORDER, *(c for c in _IDENTITY if c in work.columns)]


def _gathered(
    held: list[pl.DataFrame], order: pl.Series, given: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The rows in ``order`` of the one frame ``held`` holds, taken out of it, gathered one
    column at a time, each dropped once copied: when nothing else holds the frame (a list
    is passed, not the frame, so that neither the caller's call nor this function's
    parameter keeps every column alive), the sort holds one column twice, not the whole
    read. Each column is made contiguous first: DuckDB hands a 5M-row read over in several
    chunks, and gathering from one chunk is cheaper than across them (8 columns of the
    5M-kernel benchmark's read: ~0.13 CPU s with the copies, against ~0.22). A column that
    is NULL throughout (short_id and graph_id of most reads) is made anew, not gathered
    (~0.01-0.02 CPU s per 5M rows each). ``given``: columns already in ``order`` (device
    and start, from the sorted key: :func:`_keyed_order`), taken as they are."""
    import polars as pl

    work = held.pop()
    columns = []
    for name in work.columns:
        column = work.get_column(name)
        if given is not None and name in given.columns:
            columns.append(given.get_column(name))
        elif column.len() and column.null_count() == column.len():
            nulls = pl.repeat(None, order.len(), dtype=column.dtype, eager=True)
            columns.append(nulls.alias(name))
        else:
            columns.append(column.rechunk().gather(order))
        del column
        work = work.drop(name)
    return pl.DataFrame(columns)


def _break_ties(
    work: pl.DataFrame, order: pl.Series, lead: pl.DataFrame | None = None
) -> pl.Series:
    """``order`` (``work``'s rows by device and start, those that start together in any
    order) with the rows that start together in :data:`ORDER`: only those are sorted again
    (few operations of a device start at the same nanosecond). ``lead``: ``work``'s device
    and start in ``order`` (None: gathered here)."""
    import polars as pl

    if lead is None:
        lead = work.select(pl.col("device", "start_ns").gather(order))
    same = (pl.col("device") == pl.col("device").shift(1)) & (
        pl.col("start_ns") == pl.col("start_ns").shift(1)
    )
    tied = lead.select(same.fill_null(False) | same.shift(-1).fill_null(False)).to_series()
    if not tied.any():
        return order
    at = tied.arg_true()
    rows = order.gather(at)
    again = work.select(pl.all().gather(rows)).select(pl.arg_sort_by(_sort_keys(work)))
    again = again.to_series()
    return order.scatter(at, rows.gather(again))


def _device_start_order(work: pl.DataFrame) -> pl.Series:
    """The row order of ``work`` (device, start_ns, ...) by device, then start; rows that
    start together in any order (no util figure depends on it, :mod:`tracelens.util_sweep`).
    Sorted on one Int64 key, device and start packed when they fit: polars sorts 5M rows
    on it in ~0.3 CPU s, on the two columns in ~1.0 s. When the row number fits in the key
    too, the key's values are sorted and the order read from their low bits: no (row,
    value) pairs to sort (5M rows: ~0.15 CPU s and ~100 MB of page faults less)."""
    bounds = _bounds(work)
    keyed = _keyed_order(work, bounds)
    return keyed[0] if keyed is not None else _unkeyed_order(work, bounds)


def _unkeyed_order(work: pl.DataFrame, bounds: tuple[int, int, int, int] | None) -> pl.Series:
    """:func:`_device_start_order` where the row number does not fit in the key."""
    import polars as pl

    if bounds is None:
        return work.select(pl.arg_sort_by("device", "start_ns")).to_series()
    return work.select(_packed(*bounds).arg_sort()).to_series()


def _bounds(work: pl.DataFrame) -> tuple[int, int, int, int] | None:
    """(least device, devices, least start, starts: the span of start values) of ``work``
    when device and start pack into one Int64 key (:func:`_packed`), else None."""
    import polars as pl

    device, start = pl.col("device"), pl.col("start_ns")
    bounds = work.select(
        device.min().alias("d0"), device.max().alias("d1"), start.min().alias("s0"), start.max()
    )
    d0, d1, s0, s1 = bounds.row(0)
    if d0 is None or s0 is None or (d1 - d0 + 1) * (s1 - s0 + 1) >= 2**63:
        return None
    return d0, d1 - d0 + 1, s0, s1 - s0 + 1


def _packed(d0: int, devices: int, s0: int, starts: int) -> pl.Expr:
    """Device and start packed into one Int64 that sorts as the two (:func:`_bounds`)."""
    import polars as pl

    return (pl.col("device").cast(pl.Int64) - d0) * starts + (pl.col("start_ns") - s0)


def _keyed_order(
    work: pl.DataFrame, bounds: tuple[int, int, int, int] | None
) -> tuple[pl.Series, pl.DataFrame] | None:
    """:func:`_device_start_order` where the row number fits in the packed key beside
    device and start, and ``work``'s device and start in that order, unpacked from the
    sorted key: arithmetic on it in order, where gathering the two columns read them at
    random twice (once to find the rows that start together, once for the sorted work;
    5M rows: ~0.08 CPU s). ``bounds``: :func:`_bounds`'s. None where they do not fit."""
    import polars as pl

    if bounds is None:
        return None
    d0, devices, s0, starts = bounds
    row_bits = max(1, (work.height - 1).bit_length())
    if devices * starts << row_bits >= 2**63:
        return None
    rows = 1 << row_bits
    with_row = _packed(*bounds) * rows + pl.int_range(pl.len(), dtype=pl.Int64)
    key = work.select(with_row.sort().alias("key")).to_series()
    packed = pl.col("key") // rows
    types = work.schema
    lead = pl.DataFrame(key).select(
        (packed // starts + d0).cast(types["device"]).alias("device"),
        (packed % starts + s0).cast(types["start_ns"]).alias("start_ns"),
        (pl.col("key") % rows).cast(pl.get_index_type()).alias("order"),
    )
    return lead.get_column("order"), lead.drop("order")


def taken_by_device_start(held: list[pl.DataFrame]) -> pl.DataFrame:
    """The one frame ``held`` holds, taken out of it, by device and start
    (:func:`_device_start_order`), gathered one column at a time, each dropped from the read
    once copied: with no other reference to the read, the sort holds one column twice, not
    the whole read (~220 MB on a 5M-kernel trace)."""
    work = held.pop()
    order = _device_start_order(work)
    held.append(work)
    del work
    return _gathered(held, order)
