"""The units of a fingerprint (device, step, region) from one read of the kernel launches.

One query (``fingerprint_launches``) reads every launch once, as integers; polars does the
rest over that frame, vectorized (no loop and no group per launch):

1. the launches in start order (one sort on a packed integer key): the step search's
   launch sequence (:func:`tracelens.steps.find_steps` takes it instead of reading and
   sorting the trace again), then, per device, the step whose GPU window holds each launch;
2. the region of each distinct (device, step, NVTX path) (``fingerprint_path_regions``, in
   DuckDB: labels are strings; only on traces with NVTX paths), joined back by integers;
3. the launches in unit and launch order (a second sort on a packed key): each unit is a
   contiguous run, so positions are row numbers minus the run's start, block digests are
   differences of running sums at block boundaries, and heads, digests and per-variant
   counts become list columns by offsets (pyarrow), handed to DuckDB as ``fp_unit_rows``
   (``fingerprint_units``).

Polars sorts the 5M launches of the bench trace on one Int64 key in ~0.15 CPU s; on the
three or four columns it stands for, ~1.3 s (and DuckDB's window over them cost seconds).
Group-bys and joins go through polars' lazy engine: on those 5M rows it took a third to a
half of the eager CPU time.
The packed key is used whenever its columns' ranges fit in 63 bits and it has no ties; else
the columns are sorted as they are (same order, slower).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..steps import Steps
    from ..trace import Trace

# The digests' modulus (a variant's code is below it).
_MODULUS = 2147483647
_STEP_COLUMNS = ("device", "step", "start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")


def read_launches(trace: Trace, paths: bool = True) -> pl.DataFrame:
    """Every kernel launch, once (``queries/fingerprint_launches.sql``); unordered. Without
    ``paths`` (a trace without NVTX ranges) not joined with fp_paths, and no path_id column
    (all NULL, it took 40 MB on 5M launches)."""
    launches = trace.query("fingerprint_launches", paths=paths)
    return launches if paths else launches.drop("path_id")


def _packed_key(frame: pl.DataFrame, columns: list[tuple[str, bool]]) -> pl.Series | None:
    """One Int64 per row whose order is the order of ``columns`` ((name, nulls last), each
    ascending), or None when their ranges do not fit in 63 bits together."""
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
            parts.append((pl.lit(0, pl.Int64), total))
            continue
        first = 1 if nulls and not nulls_last else 0
        span = hi - lo + 1 + (1 if nulls else 0)
        value = pl.col(name).cast(pl.Int64) - lo + first
        null_as = hi - lo + 1 if nulls_last else 0
        parts.append((value.fill_null(null_as), total))
        total *= span
        if total >= 2**63:
            return None
    key = pl.lit(0, pl.Int64)
    for value, weight in parts:
        key = key + value * weight
    return frame.select(key.alias("key")).to_series()


def sort_order(
    frame: pl.DataFrame, packed: list[tuple[str, bool]], ties: tuple[str, ...]
) -> pl.Series:
    """Row indices of ``frame`` in the order of the ``packed`` columns ((name, nulls last))
    then ``ties`` (nulls last): one sort of a packed key when it fits, the rows that share a
    key (usually few) then sorted among themselves by ``ties``."""
    import polars as pl

    key = _packed_key(frame, packed)
    names = [c for c, _ in packed] + list(ties)
    nulls_last = [last for _, last in packed] + [True] * len(ties)
    if key is None:
        return frame.select(pl.arg_sort_by(*names, nulls_last=nulls_last)).to_series()
    order = key.arg_sort()
    if not ties or frame.height < 2:
        return order
    ordered = key.gather(order)
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


def start_order(launches: pl.DataFrame) -> pl.Series:
    """The launches' row indices per device in launch order (start, stream, end), the order
    of ``queries/steps_launches.sql``."""
    return sort_order(launches, [("device", True), ("start_ns", True)], ("stream", "end_ns"))


def find_launch_steps(trace: Trace, launches: pl.DataFrame, order: pl.Series) -> Steps:
    """``trace.steps()``, with the launch sequence handed over from ``launches`` (read
    once); on a trace with CUDA graph replays traced at graph level the step search reads
    its own (a replay is a launch there, and the fingerprint does not read replays)."""
    import polars as pl

    from ..steps import find_steps

    if trace.graph_replays()[0]:
        return trace.steps()
    columns = ("device", "start_ns", "end_ns", "name_id")
    seq = launches.select(pl.col(c).gather(order) for c in columns)
    return find_steps(trace, launches=seq.with_columns(pl.col("device").cast(pl.Int64)))


def with_steps(launches: pl.DataFrame, order: pl.Series, step_rows: list[tuple]) -> pl.DataFrame:
    """The fingerprint's launches (those with a normalized name) and their step: the step
    whose GPU window on the launch's device holds its start (the latest step that starts
    at or before it, if the launch starts before that step ends), else NULL."""
    import polars as pl

    columns = ("device", "path_id", "vid", "correlation_id", "start_ns")
    keep = [c for c in columns if c in launches.columns]  # path_id: only with NVTX ranges
    if not step_rows:
        frame = launches.select(*keep, step=pl.lit(None, pl.Int64))
        return _named(frame)
    steps = (
        pl.DataFrame(step_rows, schema=list(_STEP_COLUMNS), orient="row")
        .select(pl.col("device").cast(pl.Int32), "step", s="start_ns", e="end_ns")
        .sort("device", "s")
    )
    by_start = launches.select(pl.col("device", "start_ns").gather(order))
    found = by_start.lazy().join_asof(
        steps.lazy(), left_on="start_ns", right_on="s", by="device", strategy="backward",
        check_sortedness=False,
    ).collect()  # fmt: skip
    step = found.select(pl.when(pl.col("start_ns") <= pl.col("e")).then(pl.col("step")))
    in_rows = pl.repeat(None, launches.height, dtype=pl.Int64, eager=True)
    in_rows = in_rows.scatter(order, step.to_series())
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
    of the launches, joined back by those three integers."""
    import polars as pl

    from .._resources import query

    con = trace.db
    keys = frame.filter(pl.col("path_id").is_not_null()).select(
        pl.col("device").cast(pl.Int64), "step", "path_id"
    )
    con.register("fp_region_keys", keys.lazy().unique().collect().to_arrow())
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_path_regions AS " + query("fingerprint_path_regions")
        )
    finally:
        con.unregister("fp_region_keys")
    ids = con.execute("SELECT device, step, path_id, region_id FROM fp_path_regions").pl()
    ids = ids.with_columns(pl.col("device").cast(pl.Int32))
    on = ["device", "step", "path_id"]
    joined = frame.lazy().join(ids.lazy(), on=on, how="left", nulls_equal=True).collect()
    return joined.rechunk()  # one chunk per column: the gathers that follow are faster


def _offsets(lengths: pl.Series) -> pa.Array:
    """List offsets (int32, from 0) for lists of ``lengths``."""
    import polars as pl
    import pyarrow as pa

    ends = lengths.cast(pl.Int32).cum_sum()
    return pa.concat_arrays([pa.array([0], pa.int32()), ends.to_arrow().cast(pa.int32())])


# Odd multiplier that spreads variant_hi over the 64 bits of a launch's one-integer variant
# key (variant_hi * _SPREAD + variant_lo, wrapping): a key two variants share is found and
# the launches then take the slower two-integer lookup.
_SPREAD = 0x9E3779B97F4A7C15 - 2**64


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
    launches: pl.DataFrame, name_codes: list[int]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the distinct variants in (variant_hi, variant_lo) order: vid (their row index),
    variant_hi, variant_lo and code; ``launches`` with each launch's vid (NULL: a kernel
    without a normalized name) instead of its two variant integers). ``name_codes``: the
    code of each normalized name, by norm_id.

    The variant of a launch is looked up by one integer key of its two (a group-by and a
    lookup on one column; two columns cost 4x), by the two when two variants share a key."""
    import polars as pl

    hi, lo = pl.col("variant_hi"), pl.col("variant_lo")
    key = launches.select((hi * _SPREAD + lo).alias("key")).to_series()
    by_key = (
        pl.DataFrame(
            {"key": key, "variant_hi": launches["variant_hi"], "variant_lo": launches["variant_lo"]}
        )
        .lazy()
        .filter(hi.is_not_null())
        .group_by("key")
        .agg(hi.min(), lo.min(), hi.max().alias("hi1"), lo.max().alias("lo1"))
        .collect()
    )
    shared = (by_key["hi1"] != by_key["variant_hi"]) | (by_key["lo1"] != by_key["variant_lo"])
    if not shared.any():
        variants = by_key.sort("variant_hi", "variant_lo").with_row_index("vid")
        variants = variants.with_columns(pl.col("vid").cast(pl.Int64))
        vid = key.replace_strict(variants["key"], variants["vid"], return_dtype=pl.Int64)
    else:
        pair = launches.lazy().select("variant_hi", "variant_lo")
        variants = pair.drop_nulls().unique().sort("variant_hi", "variant_lo")
        variants = variants.with_row_index("vid").collect()
        variants = variants.with_columns(pl.col("vid").cast(pl.Int64))
        vid = pair.join(
            variants.lazy(), on=["variant_hi", "variant_lo"], how="left", maintain_order="left"
        ).collect()["vid"]
    codes = [
        _variant_code(h, lo, name_codes)
        for h, lo in variants.select("variant_hi", "variant_lo").rows()
    ]
    variants = variants.select("vid", "variant_hi", "variant_lo").with_columns(
        code=pl.Series(codes, dtype=pl.Int32)
    )
    rest = launches.drop("variant_hi", "variant_lo")
    return variants, rest.with_columns(vid=vid)


def _in_unit_order(frame: pl.DataFrame) -> pl.DataFrame:
    """The launches (device, step, region_id, correlation_id, code, vid) by unit, then in
    launch order: correlation id (NULL last), GPU start, code."""
    import polars as pl

    packed = [("device", False), ("step", False), ("region_id", False), ("correlation_id", True)]
    order = sort_order(frame, packed, ("start_ns", "code"))
    cols = ("device", "step", "region_id", "correlation_id", "code", "vid")
    return frame.select(pl.col(c).gather(order) for c in cols)


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
    frame: pl.DataFrame, variants: pl.DataFrame, block: int
) -> tuple[pa.Table, pl.DataFrame]:
    """(fp_unit_rows, ``fingerprint_units``'s input: one row per unit; fp_variants, one row
    per variant: vid, variant_hi, variant_lo, launches) from the launches with their vid,
    step and region id, and the variants (``with_variants``)."""
    import polars as pl
    import pyarrow as pa

    code = variants["code"].gather(frame["vid"])  # vid: the variant's row
    s = _in_unit_order(frame.with_columns(code=code))
    n = s.height
    unit = ("device", "step", "region_id")
    new = s.select(
        pl.any_horizontal(pl.col(c).ne_missing(pl.col(c).shift(1)) for c in unit)
        .fill_null(True)
        .alias("new")
    ).to_series()
    starts = new.arg_true().cast(pl.Int64)
    run = new.cast(pl.Int64).cum_sum() - 1
    lengths = pl.concat([starts.slice(1), pl.Series([n], dtype=pl.Int64)]) - starts
    pos = pl.int_range(n, dtype=pl.Int64, eager=True) - starts.gather(run)
    blocks = _block_digests(s["code"].cast(pl.Int64), pos, block)
    per_variant = _variant_counts(run, s["vid"], variants.height)
    counts = pa.StructArray.from_arrays(
        [per_variant["vid"].to_arrow(), per_variant["launches"].to_arrow()],
        names=["vid", "launches"],
    )
    first = s.select(pl.col(c).gather(starts) for c in (*unit, "correlation_id"))
    count_lengths = per_variant.lazy().group_by("run").len().sort("run").collect()["len"]
    head = s["vid"].filter(pos < block).to_arrow()
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
        }
    )
    totals = per_variant.lazy().group_by("vid").agg(pl.col("launches").sum())
    counted = variants.lazy().select("vid", "variant_hi", "variant_lo")
    variants = counted.join(totals, on="vid", how="left").sort("vid").collect()
    table = table.append_column("entry", _entries(table, block))
    return table.append_column("rank", _ranks(first)), variants


def _ranks(first: pl.DataFrame) -> pa.Array:
    """Each unit's place, from 1, in the order of (device, step NULLS FIRST, first
    correlation id NULLS LAST): the document's order of entries (by their first unit)."""
    import polars as pl

    order = first.select(
        pl.arg_sort_by("device", "step", "correlation_id", nulls_last=[False, False, True])
    ).to_series()
    rank = pl.repeat(0, first.height, dtype=pl.Int64, eager=True)
    return rank.scatter(order, pl.int_range(1, first.height + 1, eager=True)).to_arrow()


def _entries(units: pa.Table, block: int) -> pa.Array:
    """Each unit's entry of the document, numbered from 0: units of one device and region
    with the same head and, past ``block`` launches, the same block digests share one
    (grouped here on the lists, once; DuckDB's group-by on them cost seconds on 200k
    units)."""
    import polars as pl

    keys = pl.from_arrow(units.select(["device", "region_id", "head", "blocks", "launches"]))
    keys = keys.with_columns(
        pl.when(pl.col("launches") > block).then(pl.col("blocks")).alias("blocks")
    ).drop("launches")
    groups = (
        keys.lazy()
        .with_row_index("unit")
        .group_by("device", "region_id", "head", "blocks", maintain_order=True)
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


def create_units(trace: Trace, frame: pl.DataFrame, variants: pl.DataFrame, block: int) -> None:
    """The temp tables fp_units (``fingerprint_units``) and fp_variants (vid, variant_hi,
    variant_lo, launches: ``fingerprint_variants``' input) from the launches with their
    vid, step and region id, and the variants (``with_variants``)."""
    from .._resources import query

    con = trace.db
    units, variants = unit_rows(frame, variants, block)
    con.register("fp_unit_rows", units)
    con.register("fp_variant_rows", variants.to_arrow())
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE fp_units AS " + query("fingerprint_units"))
        con.execute("CREATE OR REPLACE TEMP TABLE fp_variants AS SELECT * FROM fp_variant_rows")
    finally:
        con.unregister("fp_unit_rows")
        con.unregister("fp_variant_rows")
