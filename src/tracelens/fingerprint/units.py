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
3. the launches in unit and launch order (the host launch order itself where the units
   follow one another in it, else a second sort on a packed key): each unit is a
   contiguous run, so positions are row numbers minus the run's start, block digests are
   differences of running sums at block boundaries, and heads, digests and per-variant
   counts become list columns by offsets (pyarrow), handed to DuckDB as ``fp_unit_rows``
   (``fingerprint_units``).

The orders themselves (host launch order, GPU start order, the units') are
:mod:`tracelens.fingerprint.order`'s. Group-bys and joins go through polars' lazy engine:
on those 5M rows it took a third to a half of the eager CPU time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .order import start_order, unit_order

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..steps import Steps
    from ..trace import Trace

# The digests' modulus (a variant's code is below it).
_MODULUS = 2147483647
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
    added (found by its process and correlation id, before global_pid is dropped).
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
        launches = launches.with_columns(thread=launch_threads(launches, calls))
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
    ``tracelens steps`` reads them); on a trace with CUDA graph replays traced at graph
    level the step search reads its own (a replay is a launch there, and the fingerprint
    does not read replays)."""
    import polars as pl

    from ..steps import find_steps

    if trace.graph_replays()[0]:
        return trace.steps()
    columns = ("device", "start_ns", "end_ns", "name_id")
    seq = launches.select(pl.col(c).gather(order) for c in columns)
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
        known = ids.select(key).to_series()
        region = frame.select(key).to_series()
        region = region.replace_strict(known, ids["region_id"], default=None, return_dtype=pl.Int64)
        return frame.with_columns(region_id=region)
    joined = frame.lazy().join(ids.lazy(), on=on, how="left", nulls_equal=True).collect()
    return joined.rechunk()  # one chunk per column: the gathers that follow are faster


def _offsets(lengths: pl.Series) -> pa.Array:
    """List offsets (int32, from 0) for lists of ``lengths``."""
    import polars as pl
    import pyarrow as pa

    ends = lengths.cast(pl.Int32).cum_sum()
    return pa.concat_arrays([pa.array([0], pa.int32()), ends.to_arrow().cast(pa.int32())])


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


# A unit's launches in at most this many stretches of consecutive launches of its device
# keep where they are in the capture (an entry's ``at``); more (launches of several host
# threads taken one thread after another), and the entry keeps none: its size stays that of
# its sequence.
AT_RUNS = 64


def capture_index(launches: pl.DataFrame, order: pl.Series) -> pl.Series:
    """Each launch's place (from 0) among its device's launches in host launch order
    (``order``: :func:`.order.launch_order`, by device first): where it is in the capture."""
    import polars as pl

    n = launches.height
    device = launches["device"].gather(order)
    new = (device != device.shift(1)).fill_null(True)
    starts = new.arg_true().cast(pl.Int32)
    place = pl.int_range(n, dtype=pl.Int32, eager=True)
    in_order = place - starts.gather(new.cast(pl.Int32).cum_sum() - 1)
    return pl.repeat(0, n, dtype=pl.Int32, eager=True).scatter(order, in_order)


def _at_runs(capture, pos: pl.Series, starts: pl.Series, row_unit: pl.Series, units):
    """Per unit (in unit order; ``starts``: each unit's first row, ``row_unit``: each row's
    unit; ``units``: each unit's device and step), where its launches are: [offset in the
    unit, place] at each stretch of launches consecutive in the capture (the order of
    :func:`capture_index`, and the unit's order, agree inside one). A place counts from
    the first launch of the unit's step on its device (the step's launches in host launch
    order), or, outside the steps, from the device's first launch; the pairs one after
    another in one flat list (offset, place, offset, place, ...). NULL past
    :data:`AT_RUNS` stretches (or on a trace read without it: ``capture`` None)."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    n = pos.len()
    if capture is None:
        return pa.nulls(starts.len(), pa.list_(pa.int64()))
    cap = capture.cast(pl.Int64)
    stretch = ((pos == 0) | (cap != cap.shift(1) + 1)).fill_null(True)
    running = pl.concat([pl.Series([0], dtype=pl.Int64), stretch.cast(pl.Int64).cum_sum()])
    ends = pl.concat([starts.slice(1), pl.Series([n], dtype=pl.Int64)])
    runs = running.gather(ends) - running.gather(starts)
    at = stretch.arg_true()
    unit = row_unit.gather(at)
    found = pl.DataFrame(
        {
            "unit": unit,
            "device": units["device"].gather(unit),
            "step": units["step"].gather(unit),
            "c": cap.gather(at),
            "keep": (runs <= AT_RUNS).gather(unit),
        }
    )
    # a stretch's first launch is its lowest place: a step starts at its stretches' lowest
    begins = found.lazy().group_by("device", "step").agg(begin=pl.col("c").min())
    kept = (
        found.lazy()
        .with_columns(o=pos.gather(at))
        .filter("keep")
        .join(begins, on=["device", "step"], how="left", nulls_equal=True, maintain_order="left")
        .select(
            "o",
            place=pl.when(pl.col("step").is_null())
            .then(pl.col("c"))
            .otherwise(pl.col("c") - pl.col("begin")),
        )
        .collect()
    )
    flat = kept.select(pl.concat_list("o", "place").explode()).to_series().to_arrow()
    keep = runs <= AT_RUNS
    lists = pa.ListArray.from_arrays(_offsets(2 * runs * keep.cast(pl.Int64)), flat)
    return pc.if_else(keep.to_arrow(), lists, pa.nulls(len(lists), lists.type))


def _block_digests(code: pl.Series, pos: pl.Series, block: int) -> pa.Array:
    """Per block of ``block`` positions of each unit, in order (a unit has its launches /
    ``block`` of them, rounded up): the sum of the codes and the sum of code * (position in
    block + 1) mod 2^31-1. Differences of running sums at the blocks' bounds: no group-by."""
    import polars as pl
    import pyarrow as pa

    n = code.len()
    in_block = pos % block
    weighted = (code * (in_block + 1)) % _MODULUS
    starts = (in_block == 0).arg_true().cast(pl.Int64)
    ends = pl.concat([starts.slice(1), pl.Series([n], dtype=pl.Int64)])

    def sums(values: pl.Series) -> pa.Array:
        running = pl.concat([pl.Series([0], dtype=pl.Int64), values.cum_sum()])
        return (running.gather(ends) - running.gather(starts)).to_arrow()

    return pa.StructArray.from_arrays(
        [sums(code), sums(weighted)], names=["code_sum", "position_sum"]
    )


def unit_rows(
    frame: pl.DataFrame, variants: pl.DataFrame, block: int, launched: pl.Series | None = None
) -> tuple[pa.Table, pl.DataFrame]:
    """(fp_unit_rows, ``fingerprint_units``'s input: one row per unit; fp_variants, one row
    per variant: vid, variant_hi, variant_lo, launches) from the launches with their vid,
    step and region id, and the variants (``with_variants``). ``launched``: the rows of
    ``frame`` in host launch order, when known (:func:`.order.unit_order`)."""
    import polars as pl
    import pyarrow as pa

    codes = variants["code"]
    order, unit = unit_order(frame.with_columns(code=codes.gather(frame["vid"])), launched)
    vid = frame["vid"].gather(order)
    code = codes.gather(vid)  # vid: the variant's row (a gather from a small table)
    n = frame.height
    new = (unit != unit.shift(1)).fill_null(True)
    starts = new.arg_true().cast(pl.Int64)
    run = new.cast(pl.Int64).cum_sum() - 1
    lengths = pl.concat([starts.slice(1), pl.Series([n], dtype=pl.Int64)]) - starts
    pos = pl.int_range(n, dtype=pl.Int64, eager=True) - starts.gather(run)
    blocks = _block_digests(code.cast(pl.Int64), pos, block)
    per_variant = _variant_counts(run, vid, variants.height)
    counts = pa.StructArray.from_arrays(
        [per_variant["vid"].to_arrow(), per_variant["launches"].to_arrow()],
        names=["vid", "launches"],
    )
    at = order.gather(starts)
    columns = ("device", "step", "region_id", "process", "thread", "correlation_id")
    first = frame.select(pl.col(c).gather(at) for c in columns if c in frame.columns)
    capture = frame["capture"].gather(order) if "capture" in frame.columns else None
    in_capture = _at_runs(capture, pos, starts, run, first)
    count_lengths = per_variant.lazy().group_by("run").len().sort("run").collect()["len"]
    head = vid.filter(pos < block).to_arrow()
    table = pa.table(
        {
            "device": first["device"].to_arrow(),
            "step": first["step"].to_arrow(),
            "region_id": first["region_id"].to_arrow(),
            "launches": lengths.to_arrow(),
            "first_correlation": first["correlation_id"].to_arrow(),
            "head": pa.ListArray.from_arrays(_offsets(lengths.clip(upper_bound=block)), head),
            "blocks": pa.ListArray.from_arrays(_offsets((lengths + block - 1) // block), blocks),
            "counts": pa.ListArray.from_arrays(_offsets(count_lengths), counts),
            "at": in_capture,
        }
    )
    totals = per_variant.lazy().group_by("vid").agg(pl.col("launches").sum())
    counted = variants.lazy().select("vid", "variant_hi", "variant_lo")
    variants = counted.join(totals, on="vid", how="left").sort("vid").collect()
    table = table.append_column("entry", _entries(table, block))
    return table.append_column("rank", _ranks(first)), variants


def _ranks(first: pl.DataFrame) -> pa.Array:
    """Each unit's place, from 1, in the order of (device, step NULLS FIRST, the process of
    its first launch (with several on a device), its thread (with several in a process),
    its correlation id NULLS LAST): the document's order of entries (by their first unit)."""
    import polars as pl

    columns = ("device", "step", "process", "thread", "correlation_id")
    keys = [c for c in columns if c in first.columns]
    nulls_last = [c == "correlation_id" for c in keys]
    order = first.select(pl.arg_sort_by(keys, nulls_last=nulls_last)).to_series()
    rank = pl.repeat(0, first.height, dtype=pl.Int64, eager=True)
    return rank.scatter(order, pl.int_range(1, first.height + 1, eager=True)).to_arrow()


def _entries(units: pa.Table, block: int) -> pa.Array:
    """Each unit's entry of the document, numbered from 0: step units of one device and
    region with the same launches, head and, past ``block`` launches, the same block
    digests share one (grouped here on the lists, once; DuckDB's group-by on them cost
    seconds on 200k units). A unit outside the steps (step NULL: the launches before the
    first step, between steps or after the last, one per device and region) is an entry
    of its own: merged into a step's entry it had no step to say so, and the entries'
    launches no longer added up to the document's (format version 6)."""
    import polars as pl

    columns = ["device", "region_id", "step", "head", "blocks", "launches"]
    keys = pl.from_arrow(units.select(columns)).with_columns(
        pl.when(pl.col("launches") > block).then(pl.col("blocks")).alias("blocks"),
        outside=pl.col("step").is_null(),
    )
    groups = (
        keys.lazy()
        .with_row_index("unit")
        .group_by(
            "device", "region_id", "outside", "launches", "head", "blocks", maintain_order=True
        )
        .agg("unit")
        .with_row_index("entry")
        .select(pl.col("entry").cast(pl.Int64), "unit")
        .explode("unit")
        .sort("unit")
        .collect()
    )
    return groups["entry"].to_arrow()


def _variant_counts(run: pl.Series, vid: pl.Series, variants: int) -> pl.DataFrame:
    """Launches per (run, variant id), by run then id: the packed key run * variants + id
    sorted (the rows are in run order already) and run-length encoded; a group-by of the
    5M launches of the NVTX bench trace, nearly one group each, cost 4x more."""
    import polars as pl

    counted = (run * variants + vid).sort().rle().struct.unnest()
    k = counted["value"]
    launches = counted["len"].cast(pl.Int64)
    return pl.DataFrame({"run": k // variants, "vid": k % variants, "launches": launches})


def create_units(
    trace: Trace,
    frame: pl.DataFrame,
    variants: pl.DataFrame,
    block: int,
    launched: pl.Series | None = None,
) -> None:
    """The temp tables fp_units (``fingerprint_units``) and fp_variants (vid, variant_hi,
    variant_lo, launches: ``fingerprint_variants``' input) from the launches with their
    vid, step and region id, and the variants (``with_variants``). ``launched``: the rows
    of ``frame`` in host launch order, when known (:func:`.order.launch_order`)."""
    from .._resources import query

    con = trace.db
    units, variants = unit_rows(frame, variants, block, launched)
    con.register("fp_unit_rows", units)
    con.register("fp_variant_rows", variants.to_arrow())
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE fp_units AS " + query("fingerprint_units"))
        con.execute("CREATE OR REPLACE TEMP TABLE fp_variants AS SELECT * FROM fp_variant_rows")
    finally:
        con.unregister("fp_unit_rows")
        con.unregister("fp_variant_rows")
