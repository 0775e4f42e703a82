"""The order the host launched a trace's GPU work in, per device: by correlation id, each
launching process's launches in its own order and the processes that share a device one
after another, by their first launch there (:func:`process_ranks`: CUPTI numbers correlation
ids per process, so they say nothing of the order between two processes); and the tokens of
that launch sequence (:func:`launch_tokens`: a kernel's name, or a CUDA graph replayed at
graph level). What the period step search (:mod:`tracelens.steps_period`), the fingerprint
and the diff's launch sequences read the launches in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace


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
    # the token last: launches alike in every other key (which the read gives in any
    # order: tracelens._fetch) come out in one order
    keys = [device, launched, pl.col("start_ns"), pl.col("stream"), pl.col("end_ns"), graph]
    keys.append(pl.col("token"))
    nulls_last = [False, True, False, False, False, False, False]
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


#: The export tables with one row per CUDA context (newest first), and the query that
#: counts the processes with a context on each device.
_CONTEXT_PROCESSES = (
    ("TARGET_INFO_CUDA_CONTEXT_INFO", "steps_context_processes"),
    ("TARGET_INFO_CUDA_NULL_STREAM", "steps_null_stream_processes"),
)


def one_process_devices(trace: Trace) -> frozenset[int] | None:
    """The CUDA devices of the export's context table when it lists one process on each:
    a process launches only on a device it has a context on, so each device's launches are
    one process's, in its own order, and :func:`process_ranks` needs no launch's process
    (reading it cost ~0.17 CPU s of the bench trace's 5M kernels; the table has a row per
    context). None when some device has contexts of several processes, or the export has no
    context table or an empty one (a synthetic trace): then only each launch's process
    tells. A device with launches that the table does not list is not covered: the caller
    reads its launches' processes."""
    from ._resources import query

    for table, name in _CONTEXT_PROCESSES:
        if trace.has_table(table):
            rows = trace._sqlite_rows(query(name))
            if rows:
                if any(processes != 1 for _device, processes in rows):
                    return None
                return frozenset(device for device, _processes in rows)
    return None


def shares_devices(launches: pl.DataFrame, column: str = "pid") -> bool:
    """Whether launches of several processes (``column``) share a device: only then does
    the step search need each launch's process (:class:`.steps_sequence.LaunchSequence`;
    a caller handing it launches keeps the column for that case alone: 40 MB per 5M)."""
    import polars as pl

    if column not in launches.columns or launches.height < 2:
        return False
    pid = pl.col(column)
    lo, hi, nulls = launches.select(lo=pid.min(), hi=pid.max(), nulls=pid.null_count()).row(0)
    if lo is None or (lo == hi and not nulls):
        return False
    one = (pid.min() == pid.max()) & (pid.null_count() == 0)
    per_device = launches.lazy().group_by("device").agg(one=one | pid.is_null().all()).collect()
    return not per_device["one"].fill_null(False).all()


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
    if column is None or not shares_devices(launches, column):
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
