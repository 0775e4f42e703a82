"""The units' rows of a fingerprint (``fp_unit_rows``, ``fingerprint_units``' input) from
the launches with their variant, step and region (:mod:`.units`).

The launches in unit and launch order (the host launch order itself where the units
follow one another in it, else a second sort on a packed key, :func:`.order.unit_order`):
each unit is a contiguous run, so positions are row numbers minus the run's start, block
digests are differences of running sums at block boundaries, and heads, digests and
per-variant counts become list columns by offsets (pyarrow), handed to DuckDB as
``fp_unit_rows`` (``fingerprint_units``); where a unit's launches were in the capture
(``at``) from each launch's place among its device's (:func:`capture_index`), one host
thread's after another's as in the unit, so that how the threads interleaved does not show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .order import thread_order, unit_order

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..trace import Trace

# The digests' modulus (a variant's code is below it).
_MODULUS = 2147483647


def _offsets(lengths: pl.Series) -> pa.Array:
    """List offsets (int32, from 0) for lists of ``lengths``."""
    import polars as pl
    import pyarrow as pa

    ends = lengths.cast(pl.Int32).cum_sum()
    return pa.concat_arrays([pa.array([0], pa.int32()), ends.to_arrow().cast(pa.int32())])


# A unit's launches in at most this many stretches of consecutive launches of its device
# keep where they are in the capture (an entry's ``at``); more (a region whose launches
# alternate with other regions' many times over), and the entry keeps none: its size stays
# that of its sequence.
AT_RUNS = 64


def capture_index(launches: pl.DataFrame, order: pl.Series) -> pl.Series:
    """Each launch's place (from 0) among its device's launches in host launch order
    (``order``: :func:`.order.launch_order`, by device first), one host thread of a
    process after another (:func:`.order.thread_order`, as a unit's launches are taken):
    where it is in the capture, whichever way the host scheduler interleaved the threads."""
    import polars as pl

    order = thread_order(launches, order)
    n = launches.height
    device = launches["device"].gather(order)
    new = (device != device.shift(1)).fill_null(True)
    starts = new.arg_true().cast(pl.Int32)
    place = pl.int_range(n, dtype=pl.Int32, eager=True)
    in_order = place - starts.gather(new.cast(pl.Int32).cum_sum() - 1)
    return pl.repeat(0, n, dtype=pl.Int32, eager=True).scatter(order, in_order)


def launch_groups(frame: pl.DataFrame, order: pl.Series) -> pl.Series | None:
    """Each launch's process and thread (``frame``'s ranks, :func:`.units.with_steps`) as
    one Int64 in their order, the rows in ``order``; None when there are neither (one
    process on each device, one thread in each process)."""
    import polars as pl

    from .order import _packed_key

    columns = [c for c in ("process", "thread") if c in frame.columns]
    if not columns:
        return None
    key = _packed_key(frame, [(c, False) for c in columns])
    if key is None:  # ranks beyond 63 bits together: ranked instead (same order)
        key = pl.struct(columns).rank("dense")
    return frame.select(key.cast(pl.Int64)).to_series().gather(order)


def _at_runs(capture, pos: pl.Series, starts: pl.Series, row_unit: pl.Series, units, groups=None):
    """Per unit (in unit order; ``starts``: each unit's first row, ``row_unit``: each row's
    unit; ``units``: each unit's device and step), where its launches are: [offset in the
    unit, place] at each stretch of launches consecutive in the capture (the order of
    :func:`capture_index`, and the unit's order, agree inside one). A place counts among
    the launches of the unit's step on its device, one process's and thread's after
    another's (``groups``: :func:`launch_groups`, each row's; None: one of each), or,
    outside the steps, among the device's launches; the pairs one after another in one
    flat list (offset, place, offset, place, ...). NULL past :data:`AT_RUNS` stretches (or
    on a trace read without it: ``capture`` None)."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    n = pos.len()
    if capture is None:
        return pa.nulls(starts.len(), pa.list_(pa.int64()))
    cap = capture.cast(pl.Int64)
    stretch = (pos == 0) | (cap != cap.shift(1) + 1)
    if groups is not None:  # a stretch in one process and thread: each is placed apart
        stretch = stretch | (groups != groups.shift(1))
    at = stretch.fill_null(True).arg_true()
    unit = row_unit.gather(at)
    found = pl.DataFrame(
        {
            "unit": unit,
            "device": units["device"].gather(unit),
            "step": units["step"].gather(unit),
            "g": pl.repeat(0, at.len(), dtype=pl.Int64, eager=True)
            if groups is None
            else groups.gather(at),
            "c": cap.gather(at),
            "o": pos.gather(at),
            "len": pl.concat([at.slice(1), pl.Series([n], dtype=at.dtype)]) - at,
        }
    )
    spans = _spans(found)
    placed = _places(found.filter(_may_keep(unit, found["g"]).gather(unit)), spans)
    # stretches of two threads (processes) a unit takes one after the other are one where
    # the second's places follow the first's
    follows = pl.col("place") == pl.col("place").shift(1) + pl.col("len").shift(1)
    begins = (pl.col("unit") != pl.col("unit").shift(1)) | ~follows
    kept = placed.filter(begins.fill_null(True))
    runs = pl.repeat(AT_RUNS + 1, starts.len(), dtype=pl.Int64, eager=True)
    counted = kept.group_by("unit").len()
    runs = runs.scatter(counted["unit"], counted["len"].cast(pl.Int64))
    keep = runs <= AT_RUNS
    kept = kept.filter(keep.gather(kept["unit"]))
    flat = kept.select(pl.concat_list("o", "place").explode()).to_series().to_arrow()
    lists = pa.ListArray.from_arrays(_offsets(2 * runs * keep.cast(pl.Int64)), flat)
    return pc.if_else(keep.to_arrow(), lists, pa.nulls(len(lists), lists.type))


def _may_keep(unit: pl.Series, groups: pl.Series) -> pl.Series:
    """Per unit (``unit``: each stretch's, in unit order; ``groups``: each stretch's process
    and thread), whether its stretches may be :data:`AT_RUNS` at most once placed: those
    where the unit goes on with another thread (or process) may join the stretch before
    them (its places then follow), no other; so only those units are placed (on 5M
    launches, most stretches are of units of thousands that keep no places)."""
    import polars as pl

    firsts = (unit != unit.shift(1)).fill_null(True).arg_true()
    lasts = pl.concat([firsts.slice(1), pl.Series([unit.len()], dtype=firsts.dtype)])
    switch = (groups != groups.shift(1)).fill_null(False) & (unit == unit.shift(1))
    running = pl.concat([pl.Series([0], dtype=pl.Int64), switch.cast(pl.Int64).cum_sum()])
    switches = running.gather(lasts) - running.gather(firsts)
    return (lasts - firsts).cast(pl.Int64) - switches <= AT_RUNS


def _spans(found: pl.DataFrame) -> pl.LazyFrame:
    """Per (device, step, group ``g``) of ``found`` (a row per stretch: its unit, device,
    step, group, first place in the capture ``c`` and ``len``) in the steps: its first
    place ``lo`` and ``base``, the launches of the groups before it in that step on the
    device. A group's launches in a step are one span, its first to its last (a step is
    a stretch of each thread's sequence), so ``base`` adds up the spans before it."""
    import polars as pl

    span = pl.col("hi") - pl.col("lo")
    return (
        found.lazy()
        .filter(pl.col("step").is_not_null())
        .group_by("device", "step", "g")
        .agg(lo=pl.col("c").min(), hi=(pl.col("c") + pl.col("len")).max())
        .sort("device", "step", "g")
        .select("device", "step", "g", "lo", base=span.cum_sum().over("device", "step") - span)
    )


def _places(found: pl.DataFrame, spans: pl.LazyFrame) -> pl.DataFrame:
    """``found``'s unit, ``o`` and ``len`` with the place of each stretch's first launch:
    in a step, among the step's launches on the device, each group's (process, thread)
    after the groups before it (``spans``: :func:`_spans`); outside the steps, ``c``."""
    import polars as pl

    in_step = pl.col("base") + pl.col("c") - pl.col("lo")
    return (
        found.lazy()
        .join(spans, on=["device", "step", "g"], how="left", maintain_order="left")
        .select(
            "unit", "o", "len", place=pl.when(pl.col("step").is_null()).then("c").otherwise(in_step)
        )
        .collect()
    )


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
    groups = None if capture is None else launch_groups(frame, order)
    in_capture = _at_runs(capture, pos, starts, run, first, groups)
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
