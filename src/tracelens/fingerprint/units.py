"""The units of a fingerprint (device, step, region) from one read of the kernel launches.

One query (``fingerprint_launches``) reads every launch once, as integers; polars does the
rest over that frame, vectorized (no loop and no group per launch):

1. the launches in host launch order (one sort on a packed integer key,
   :func:`tracelens.fingerprint.order.launch_order`): the step search's launch sequence
   (:func:`tracelens.steps.find_steps` takes it instead of reading and sorting the trace
   again) and the blocks of period steps;
   on devices whose steps are not found in it, the step whose GPU window holds each launch
   (the launches in start order: a sort only then);
2. the region of each distinct (device, step, NVTX path) (``fingerprint_path_regions``, in
   DuckDB: labels are strings; only on traces with NVTX paths), joined back by integers;
3. each launch's variant (:func:`with_variants`: one integer key per launch, the few
   hundred distinct configurations mapped in Python);
4. the units' rows from the launches in unit order: :mod:`.unitrows` (``fp_unit_rows``,
   ``fingerprint_units``).

The orders themselves (host launch order, GPU start order, the units') are
:mod:`tracelens.fingerprint.order`'s. Group-bys and joins go through polars' lazy engine:
on those 5M rows it took a third to a half of the eager CPU time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .order import start_order
from .unitrows import _MODULUS

if TYPE_CHECKING:
    import polars as pl

    from ..steps import Steps
    from ..trace import Trace

_STEP_COLUMNS = ("device", "step", "start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")


def read_launches(
    trace: Trace, paths: bool = True, calls: pl.DataFrame | None = None, streams: bool = True
) -> pl.DataFrame:
    """Every kernel launch, once (``queries/fingerprint_launches.sql``); unordered. Without
    ``paths`` (a trace without NVTX ranges) not joined with fp_paths, and no path_id column
    (all NULL, it took 40 MB on 5M launches), nor a global_pid column when one process
    launched every kernel of each device (the host order needs it only when several did on
    one device: :func:`tracelens.steps_order.process_ranks`; a process per GPU, as the
    5M-kernel bench trace's 4 ranks, ranks every launch 0: 0.3 CPU s and 200 MB for that).
    ``calls``: the calls made beside each process's busiest thread
    (:func:`tracelens.fingerprint.threads.thread_calls`): each launch's ``thread`` rank is
    added (found by its process and correlation id, before global_pid is dropped), and its
    ``tie`` group where threads tie (:func:`tracelens.fingerprint.threads.untie`).
    ``streams`` False: no stream column (DuckDB leaves streamId out of the scan); it orders
    only launches that tie on device, process, correlation id and start
    (:func:`.order.start_ties`), and the caller reads them again with it then. Without
    ``paths``, each launch's process is its device's where :func:`_device_pids` knows it
    (globalPid then left out of the scan); a launch on another device reads them all."""
    import polars as pl

    from .threads import launch_threads

    pids = None if paths else _device_pids(trace)
    read = {"paths": paths, "streams": streams}
    launches = trace.query("fingerprint_launches", any_order=True, **read, pids=pids is None)
    if pids is not None:
        if launches["device"].is_in(list(pids)).all():
            devices = pl.col("device").replace_strict(
                list(pids), list(pids.values()), return_dtype=pl.Int64
            )
            launches = launches.with_columns(global_pid=devices)
        else:
            launches = trace.query("fingerprint_launches", any_order=True, **read, pids=True)
    if not streams:
        launches = launches.drop("stream")
    if calls is not None:
        launches = launches.with_columns(launch_threads(launches, calls))
    if paths:
        return launches
    pid = pl.col("global_pid")
    per_device = (
        launches.lazy()
        .group_by("device")
        .agg(one=(pid.min() == pid.max()) & (pid.null_count() == 0))
        .collect()
    )
    one = bool(per_device["one"].fill_null(False).all())
    return launches.drop("path_id", "global_pid") if one else launches.drop("path_id")


def _device_pids(trace: Trace) -> dict[int, int] | None:
    """device -> the globalPid of every kernel launched on it, for the devices on which
    the export's context table lists one process (:func:`tracelens.steps_order.
    one_process_devices`; a process launches only on a device it has a context on), each
    from one kernel row (``queries/fingerprint_device_pid.sql``, SQLite stops at it): the
    launches then need no globalPid of their own (~0.35 CPU s of the 5M-kernel bench
    trace's 13 columns read directly). None: no such table (or an empty one, or one with
    several processes on a device), or not a SQLite export."""
    from .._resources import query
    from ..steps_order import one_process_devices

    present = trace.tables.get("CUPTI_ACTIVITY_KIND_KERNEL", ())
    if trace._sqlite is None or not {"deviceId", "globalPid"} <= set(present):
        return None
    devices = one_process_devices(trace)
    if not devices:
        return None
    sql, pids = query("fingerprint_device_pid"), {}
    for device in sorted(devices):
        rows = trace._sqlite_rows(sql, {"device": device})
        if rows and type(rows[0][0]) is int:
            pids[device] = rows[0][0]
    return pids or None


def find_launch_steps(trace: Trace, launches: pl.DataFrame, order: pl.Series) -> Steps:
    """``trace.steps()``, with the launch sequence handed over from ``launches`` (read
    once) in ``order``, the order the host launched them (:func:`.order.launch_order`, as
    ``tracelens steps`` reads them, with their correlation ids); on a trace with CUDA graph
    replays traced at graph level the step search reads its own (a replay is a launch
    there, and the fingerprint does not read replays)."""
    import polars as pl

    from ..steps import find_steps

    if trace.graph_replays()[0]:
        return trace.steps()
    from ..util_calls import pid_of

    # With each launch's correlation id, as `tracelens steps` reads the sequence
    # (steps_launch_rows.sql): the search finds each launch's call by it, and the host's
    # pause before it (steps_phase.HostGaps), which phases the period steps where the GPU
    # idles alike before every launch. Without it the search phased them by the GPU alone
    # and numbered other steps than `tracelens steps` (test_fpsteps: 24 steps from a
    # where it found 23 from the collective its thread paused before). The launches were
    # read with it, so no second read; LaunchSequence.given sorts them by it again, an
    # order they are already in (the bench trace's fingerprint: no CPU time measurable).
    names = ("device", "start_ns", "end_ns", "name_id", "correlation_id")
    columns = [pl.col(c).gather(order) for c in names]
    if "global_pid" in launches.columns:
        # the launching process where several share a device (global_pid is kept then), as
        # its operating-system pid: the loop's steps are its own processes', as `tracelens
        # steps` finds them (copies and memsets are told apart by that pid)
        columns.append(pid_of(pl.col("global_pid").gather(order)).alias("pid"))
    seq = launches.select(columns)
    return find_steps(trace, launches=seq.with_columns(pl.col("device").cast(pl.Int64)))


def with_steps(
    launches: pl.DataFrame,
    order: pl.Series | None,
    step_rows: list[tuple],
    host: tuple[pl.Series, pl.Series] | None = None,
) -> pl.DataFrame:
    """The fingerprint's launches (those with a normalized name) and their step: on the
    devices ``host`` covers (the step of each launch, whether it was found: period steps in
    host launch order, :func:`tracelens.fingerprint.members.host_order_steps`) that step;
    elsewhere the step whose GPU window on the launch's device holds its start (the latest
    step that starts at or before it, if the launch starts before that step ends), else
    NULL. ``order``: the launches' rows in GPU order (:func:`.order.start_order`; None:
    sorted here when the GPU windows are needed). With several launching processes on a device,
    each launch's ``process`` too (:func:`tracelens.steps_order.process_ranks`): a unit's
    launches are in host order, one process after another (:func:`.order.unit_order`)."""
    import polars as pl

    from ..steps_order import process_ranks

    columns = ("device", "path_id", "vid", "thread", "correlation_id", "start_ns", "capture")
    # path_id: only with NVTX ranges; thread: only where a process launched from several
    keep = [c for c in columns if c in launches.columns]
    if "thread" in keep and "global_pid" in launches.columns:
        # the process of a thread's launches, to find their calls (fingerprint.ends)
        keep.append("global_pid")
    process = process_ranks(launches)
    if process is not None:
        keep.append(process.alias("process"))
    if not step_rows:
        frame = launches.select(*keep, step=pl.lit(None, pl.Int64))
        return _named(frame)
    if host is not None and host[1].all():
        return _named(launches.select(*keep).with_columns(step=host[0]))
    steps = (
        pl.DataFrame(step_rows, schema=list(_STEP_COLUMNS), orient="row")
        .select(pl.col("device").cast(pl.Int32), "step", s="start_ns", e="end_ns")
        .sort("device", "s")
    )
    if order is None:
        order = start_order(launches)
    by_start = launches.select(pl.col("device", "start_ns").gather(order))
    found = by_start.lazy().join_asof(
        steps.lazy(), left_on="start_ns", right_on="s", by="device", strategy="backward",
        check_sortedness=False,
    ).collect()  # fmt: skip
    step = found.select(pl.when(pl.col("start_ns") <= pl.col("e")).then(pl.col("step")))
    in_rows = pl.repeat(None, launches.height, dtype=pl.Int64, eager=True)
    in_rows = in_rows.scatter(order, step.to_series())
    if host is not None:
        in_rows = pl.select(pl.when(host[1]).then(host[0]).otherwise(in_rows)).to_series()
    frame = launches.select(*keep).with_columns(step=in_rows)
    return _named(frame)


def _named(frame: pl.DataFrame) -> pl.DataFrame:
    """The launches of ``frame`` that have a variant; ``frame`` itself when all have (the
    usual case: a filter copies every column)."""
    import polars as pl

    if not frame["vid"].null_count():
        return frame
    return frame.filter(pl.col("vid").is_not_null())


def with_regions(trace: Trace, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the region id of each launch (NULL: none): the temp table
    fp_path_regions (``fingerprint_path_regions``) from the distinct (device, step, path)
    of the launches, looked up by those three integers packed in one: one new column, where
    a three-key join copied every column of the launches and a rechunk copied them again
    (the NVTX bench trace's 5M launches: the units' peak 1,510 -> 1,308 MB; CPU the same,
    1.2-1.4 s, most of it the query); joined on the three when they do not fit in 63
    bits."""
    import polars as pl

    from .._resources import query
    from .order import _packed_key

    con = trace.db
    on = ["device", "step", "path_id"]
    key = _packed_key(frame, [(c, False) for c in on])
    named = frame.filter(pl.col("path_id").is_not_null())
    if key is not None:
        keys = named.select(*on, key=key).unique("key").drop("key")
    else:
        keys = named.lazy().select(*on).unique().collect()
    con.register("fp_region_keys", keys.with_columns(pl.col("device").cast(pl.Int64)).to_arrow())
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_path_regions AS " + query("fingerprint_path_regions")
        )
    finally:
        con.unregister("fp_region_keys")
    ids = con.execute("SELECT device, step, path_id, region_id FROM fp_path_regions").pl()
    ids = ids.with_columns(pl.col("device").cast(pl.Int32))
    if key is not None:
        # with_columns, not select: a key of no column (every one NULL or no launch at all,
        # as in an export without StringIds) is a literal, which select makes one row of.
        known = ids.with_columns(key=key)["key"]
        region = frame.with_columns(key=key)["key"]
        region = region.replace_strict(known, ids["region_id"], default=None, return_dtype=pl.Int64)
        return frame.with_columns(region_id=region)
    joined = frame.lazy().join(ids.lazy(), on=on, how="left", nulls_equal=True).collect()
    return joined.rechunk()  # one chunk per column: the gathers that follow are faster


# Odd multipliers that spread name_id and variant_hi over the 64 bits of a launch's
# one-integer configuration key (name_id * _SPREAD_NAME + variant_hi * _SPREAD +
# variant_lo, wrapping): a key two configurations share is found and the launches then take
# the slower three-integer lookup.
_SPREAD = 0x9E3779B97F4A7C15 - 2**64
_SPREAD_NAME = 0xC2B2AE3D27D4EB4F - 2**64


def _variant_code(hi: int, lo: int, name_codes: list[int]) -> int:
    """The 31-bit code of a variant (the block digests add it up): the name's code plus each
    dimension (+1, missing as 0: the packed fields of variant_hi and variant_lo) times its
    own prime, mod 2^31-1."""
    grid = (hi & 0xFFFFFFFF, lo >> 46, (lo >> 29) & 0x1FFFF)
    block = ((lo >> 18) & 0x7FF, (lo >> 7) & 0x7FF, lo & 0x7F)
    primes = (1000003, 10007, 101, 7919, 131, 17)
    total = name_codes[hi >> 32] + sum(d * p for d, p in zip((*grid, *block), primes, strict=True))
    return total % _MODULUS


def with_variants(
    launches: pl.DataFrame, norm_ids: dict[int, int], name_codes: list[int]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the distinct variants in (norm_id, configuration) order: vid (their row index),
    variant_hi, variant_lo (``fingerprint_variants``' packing: norm_id * 2^32 + grid_x + 1,
    the rest as the launches') and code; ``launches`` with each launch's vid (NULL: a
    kernel without a normalized name) instead of its name's configuration integers).
    ``norm_ids``: the normalized name of each name id; ``name_codes``: the code of each
    normalized name, by norm_id.

    A launch's variant is looked up by one integer key of its name id and two configuration
    integers (a group-by and a lookup on one column; two columns cost 4x), by the three
    when two configurations share a key. The distinct configurations, a few hundred, are
    mapped to their variants in Python."""
    import polars as pl

    name, hi, lo = pl.col("name_id"), pl.col("variant_hi"), pl.col("variant_lo")
    raw = ("name_id", "variant_hi", "variant_lo")
    key = launches.select((name * _SPREAD_NAME + hi * _SPREAD + lo).alias("key")).to_series()
    by_key = (
        launches.lazy()
        .select(*raw, key=key)
        .filter(hi.is_not_null())
        .group_by("key")
        .agg(name.min(), hi.min(), lo.min(), *(pl.col(c).max().alias(f"{c}1") for c in raw))
        .collect()
    )
    shared = pl.any_horizontal(by_key[c] != by_key[f"{c}1"] for c in raw)
    if by_key.select(shared.any()).item():
        by_key = launches.lazy().select(*raw).filter(hi.is_not_null()).unique().collect()
    configs = by_key.select(*raw).rows()
    norm = [norm_ids.get(n) for n, _, _ in configs]
    packed = [
        None if m is None else (m * 2**32 + hi_, lo_)
        for m, (_, hi_, lo_) in zip(norm, configs, strict=True)
    ]
    ordered = sorted({p for p in packed if p is not None})
    index = {p: i for i, p in enumerate(ordered)}
    raw_vid = pl.Series([None if p is None else index[p] for p in packed], dtype=pl.Int64)
    if "key" in by_key.columns:
        vid = key.replace_strict(by_key["key"], raw_vid, return_dtype=pl.Int64)
    else:
        table = by_key.lazy().with_columns(vid=raw_vid)
        vid = (
            launches.lazy()
            .select(*raw)
            .join(table, on=list(raw), how="left", maintain_order="left")
            .collect()["vid"]
        )
    variants = pl.DataFrame(
        {
            "vid": pl.int_range(len(ordered), dtype=pl.Int64, eager=True),
            "variant_hi": [h for h, _ in ordered],
            "variant_lo": [lo_ for _, lo_ in ordered],
            "code": [_variant_code(hi_, lo_, name_codes) for hi_, lo_ in ordered],
        },
        schema={"vid": pl.Int64, "variant_hi": pl.Int64, "variant_lo": pl.Int64, "code": pl.Int32},
    )
    rest = launches.drop("variant_hi", "variant_lo")
    return variants, rest.with_columns(vid=vid)
