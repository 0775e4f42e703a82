"""Steps from NVTX ranges, projected on the GPU: the rows of ``queries/steps_by_range.sql``
(one per step and device that has work), computed in three reads and vectorized polars.

``steps_by_range.sql`` states what a step holds: the GPU operations whose launching API
call starts inside the step's range on its thread (with nested matching ranges, inside the
innermost one open). On the 5M-kernel trace with 2,076 step ranges it cost 11 CPU s,
nearly all of it an ASOF join of every API call to the step marks, a two-key hash join of
the operations to the calls and a framed window (running maximum) for the busy time.
Here DuckDB lists the steps (``steps_range_list.sql``) and their marks
(``steps_range_marks.sql``: the same nesting rules, over the steps only) and joins each
operation to its call on one key (``steps_range_ops.sql``); the step of each call is a
binary search in the marks, and the per-step figures are a sort and group-bys in polars.
The family search (``steps_range_families.sql``: the top-level ranges grouped by label up
to digits, with the GPU time launched inside them) is done the same way from the same read
of the operations (:func:`range_families`), which the chosen family's steps then reuse.
``tests/test_steps_ranges.py`` holds both to the queries' rows.

Step numbers are per thread (step N is the Nth step range of its thread, by start), as
period steps are per device: the ranks of a multi-process job share them, whichever rank
started first, so ``--step 7`` is every rank's 7th iteration. In a process whose threads
run step ranges of their own, on each GPU the thread whose ranges launched the most there
defines the steps and the others' ranges are left out, counted (a loop thread per GPU:
each defines its GPU's steps; :mod:`tracelens.steps_outside`). Each range
keeps a number of its own (``range``, by start over every thread) for the marks, which
tell nested ranges apart on one thread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .steps_outside import Outside, launching_threads, range_outside

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

#: The columns of ``steps_by_range.sql``, in order (all BIGINT).
COLUMNS = (
    "step",
    "ranges",
    "device",
    "start_ns",
    "end_ns",
    "cpu_start_ns",
    "cpu_end_ns",
    "duration_ns",
    "busy_ns",
    "kernels",
    "kernel_ns",
    "global_tid",
)


@dataclass(frozen=True)
class Launched:
    """The GPU operations of a filter as ``queries/steps_range_ops.sql`` lists them for
    the threads ``tids`` (sorted globalTids): read once by :func:`range_families`, reused by
    :func:`range_steps` for the steps of a family (their threads are among them).
    ``tops``: the rows of ``queries/steps_range_tops.sql`` when read, of which a family's
    steps are a part (listing them again read every NVTX range: 0.25 CPU s on 250k)."""

    tids: list[int]
    ops: pl.DataFrame
    tops: pl.DataFrame | None = None


def _launched(trace: Trace, tids: list[int], params: dict[str, Any]) -> Launched:
    from .trace import list_param

    return Launched(tids, trace.query("steps_range_ops", tids=list_param(tids), **params))


def _step_list(
    trace: Trace, pattern: str, match: str, top_level: bool, launched: Launched | None
) -> pl.DataFrame:
    """The rows of ``queries/steps_range_list.sql``; those of a family of top-level ranges
    from ``launched.tops`` when read (ranges numbered by start, thread, the longer first;
    steps the same way within each thread)."""
    import polars as pl

    if launched is None or launched.tops is None or match != "family" or not top_level:
        return trace.query("steps_range_list", pattern=pattern, match=match, top_level=top_level)
    return (
        launched.tops.filter(pl.col("family") == pattern)
        .sort(["start", "globalTid", "end"], descending=[False, False, True])
        .select("start", "end", "globalTid")
        .with_row_index("range", offset=1)
        .select(
            pl.col("range").cast(pl.Int64),
            step=(pl.int_range(1, pl.len() + 1, dtype=pl.Int64)).over("globalTid"),
            start="start",
            end="end",
            globalTid="globalTid",
        )
    )


def range_families(trace: Trace, params: dict[str, Any]) -> tuple[pl.DataFrame, Launched | None]:
    """What ``trace.query("steps_range_families", **params)`` returns (same rows, order and
    types), and the operations read for it (for :func:`range_steps`). The family of a
    call is a binary search in its thread's top-level ranges (``steps_range_tops.sql``),
    not an ASOF join of every API call in DuckDB (2.6 CPU s on 5M calls). Needs
    ``trace.load_nvtx_text()``."""
    import polars as pl

    tops = trace.query("steps_range_tops")
    if tops.is_empty():
        schema = {"family": pl.String, "example": pl.String, "ranges": pl.Int64}
        schema |= {"gpu_ns": pl.Int64, "total_gpu_ns": pl.Int64}
        return pl.DataFrame(schema=schema), None
    tids = sorted(set(tops["globalTid"].to_list()))
    launched = replace(_launched(trace, tids, params), tops=tops)
    families = tops.select("family", "example", "ranges").unique("family", maintain_order=True)
    families = families.with_row_index("fid")
    tops = tops.join(families.select("family", "fid"), on="family", nulls_equal=True).sort(
        "globalTid", "start"
    )
    marks = tops.select(
        thread=pl.col("globalTid").replace_strict(
            tids, range(1, len(tids) + 1), return_dtype=pl.Int32
        ),
        key=pl.col("start") * 3,
    )
    ops = launched.ops
    dur = (pl.col("end") - pl.col("start")).alias("dur")
    total = ops.select(dur.sum()).item() if ops.height else 0
    on_threads = _without_nulls(ops.select("thread", "call_key", dur), "thread")
    gpu = pl.DataFrame(schema={"fid": pl.UInt32, "gpu_ns": pl.Int64})
    if on_threads.height and tops.height:
        at = _latest_marks(on_threads, marks)
        inside = on_threads["call_key"] <= tops["end"].gather(at) * 3 + 1
        gpu = (
            on_threads.select(fid=tops["fid"].gather(at), dur="dur")
            .filter(inside)
            .group_by("fid")
            .agg(gpu_ns=pl.col("dur").sum())
        )
    found = (
        families.join(gpu, on="fid", how="left")
        .select(
            "family",
            "example",
            pl.col("ranges").cast(pl.Int64),
            # a range without a label has no family: SQL's join leaves its time out
            gpu_ns=pl.when(pl.col("family").is_not_null())
            .then(pl.col("gpu_ns").fill_null(0))
            .otherwise(0)
            .cast(pl.Int64),
            total_gpu_ns=pl.lit(total, dtype=pl.Int64),
        )
        .sort(["gpu_ns", "family"], descending=[True, False], nulls_last=True)
    )
    return found, launched


class RangeSteps(NamedTuple):
    """What :func:`range_steps` found: ``frame``, the rows of ``queries/steps_by_range.sql``;
    ``ranges``, the ranges of the steps that hold work (one row per range: step,
    global_tid, cpu_start_ns, cpu_end_ns, by step and start), what ``Steps.ranges`` holds;
    ``totals``, with ``count_kernels`` the steps' kernel totals of :func:`_kernel_totals`
    (``Steps.kernel_totals``), else None; ``outside``, the launches in no step and the
    ranges left out (:class:`tracelens.steps_outside.Outside`)."""

    frame: pl.DataFrame
    ranges: pl.DataFrame
    totals: pl.DataFrame | None
    outside: Outside


def range_steps(
    trace: Trace,
    pattern: str,
    match: str,
    top_level: bool,
    params: dict[str, Any],
    launched: Launched | None = None,
    *,
    count_kernels: bool = False,
) -> RangeSteps:
    """The steps of the ranges ``pattern`` matches (:class:`RangeSteps`). Of each process
    and GPU, the steps are those of its thread whose ranges launched the most there
    (numbered per thread: :mod:`tracelens.steps_outside`). ``launched``: the operations of ``params`` already
    read (:func:`range_families`), used when they cover the steps' threads. Needs
    ``trace.load_nvtx_text()``."""
    import polars as pl

    steps = _step_list(trace, pattern, match, top_level, launched)
    ranges_schema = dict.fromkeys(("step", "global_tid", "cpu_start_ns", "cpu_end_ns"), pl.Int64)
    empty = pl.DataFrame(schema=dict.fromkeys(COLUMNS, pl.Int64))
    nothing = RangeSteps(empty, pl.DataFrame(schema=ranges_schema), None, Outside())
    if steps.is_empty():
        return nothing
    tids = sorted(set(steps["globalTid"].to_list()))
    if launched is None or not set(tids) <= set(launched.tids):
        launched = _launched(trace, tids, params)
    ops = _without_nulls(launched.ops, "thread")
    if ops.is_empty():
        return nothing
    ops = _with_ranges(trace, ops, steps, launched.tids)
    kept, outside = _kept_threads(steps, ops, launched.tids)
    # Operations in no step keep their rows, their range NULL (those of the threads left out
    # too): the figures skip them lazily, never copying every column (a filter copied ~200 MB
    # of 5M operations where some launch lies outside the steps)
    steps_kept = steps
    if outside.left_ranges:
        owner = steps["globalTid"].gather(ops["range"] - 1)
        in_kept = owner.is_in(kept.implode()).fill_null(False)
        ops = ops.with_columns(range=pl.select(pl.when(in_kept).then(ops["range"])).to_series())
        steps_kept = steps.filter(pl.col("globalTid").is_in(kept.implode()))
    ops = _stepped(ops, steps)
    if ops["step"].null_count() == ops.height:
        return nothing._replace(outside=outside)
    frame = _per_device(ops, steps, steps_kept.height)
    held = steps_kept.filter(pl.col("step").is_in(frame["step"].unique().implode()))
    ranges = held.sort("step", "range").select(
        "step", global_tid="globalTid", cpu_start_ns="start", cpu_end_ns="end"
    )
    totals = _kernel_totals(ops, steps_kept) if count_kernels else None
    return RangeSteps(frame, ranges.cast(ranges_schema), totals, outside)


def _kept_threads(
    steps: pl.DataFrame, ops: pl.DataFrame, tids: list[int]
) -> tuple[pl.Series, Outside]:
    """The threads that define the steps (every thread with steps when each process has
    one: :func:`tracelens.steps_outside.launching_threads`) and what is left out."""

    threads = steps["globalTid"].unique().sort()
    if (threads // (1 << 24)).n_unique() < threads.len():
        kept = launching_threads(steps, ops.select("range", "device").drop_nulls("range"))
    else:
        kept = threads
    return kept, range_outside(steps, ops, tids, kept)


def _kernel_totals(ops: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame | None:
    """Per step, device and kernel (name_id, BIGINT each): its launches in the step (calls)
    and their summed duration (total_ns), what ``queries/steps_range_top_kernels.sql``
    ranks, from ``ops`` already put in their steps (that query's second pass over every
    call and kernel cost 2-5 CPU s of steps' 5-11 on the 5M-kernel trace). None where its
    rule could tell another step: ranges of one thread overlap (it takes the
    latest-starting range while open, the marks the innermost open one), or one kernel is
    listed twice in a step (two records of its call; it counts each call once)."""
    import polars as pl

    if _ranges_overlap(steps):
        return None
    kernels = _in_steps(ops).filter(pl.col("is_kernel"))
    if _listed_twice(kernels):
        return None
    return (
        kernels.group_by("step", "device", "name_id")
        .agg(calls=pl.len(), total_ns=(pl.col("end") - pl.col("start")).sum())
        .select(pl.all().cast(pl.Int64))
        .collect()
    )


def _listed_twice(kernels: pl.LazyFrame) -> bool:
    """Whether two of ``kernels`` share a step, device, start and end, as the two rows of
    one kernel launched by a call recorded twice do (distinct kernels that ran at once on
    one device say so too: the caller then takes the slower way). The distinct hashes of
    the four are counted first (0.25 CPU s on 5M kernels; a duplicate search over the four
    columns took 1.2, and kernels of several streams start or end together, so no three
    of them tell), the columns themselves only when two hashes are equal."""
    import polars as pl

    row = pl.struct("step", "device", "start", "end")
    hashes = kernels.select(row.hash().alias("hash")).collect()["hash"]
    if hashes.n_unique() == hashes.len():
        return False
    return kernels.select(row.is_duplicated().any()).collect().item()


def _ranges_overlap(steps: pl.DataFrame) -> bool:
    """Whether a step range of ``steps`` (steps_range_list's rows) begins before the one
    before it on its thread ends, or where an empty one ends (two marks at one instant),
    or ends before it begins; a range that begins where the previous one ends does not
    overlap it (both rules give a call at that instant to the later)."""
    import polars as pl

    start, end = pl.col("start"), pl.col("end")
    prev_start, prev_end = start.shift(1).over("globalTid"), end.shift(1).over("globalTid")
    clash = (start < prev_end) | ((start == prev_end) & (prev_start == prev_end)) | (end < start)
    ordered = steps.sort("globalTid", "start", "end")
    return bool(ordered.select(clash.fill_null(False).any() | end.is_null().any()).item())


def ranked_kernels(trace: Trace, kernel_totals: pl.DataFrame, top: int) -> pl.DataFrame:
    """The rows of ``queries/steps_range_top_kernels.sql`` (``top`` kernels per step and
    device) from the steps' kernel totals (``Steps.kernel_totals``), by
    ``queries/steps_range_kernel_ranks.sql``."""
    con = trace.db
    con.register("step_kernel_totals", kernel_totals)
    try:
        return trace.query("steps_range_kernel_ranks", top=top)
    finally:
        con.unregister("step_kernel_totals")


def _with_ranges(
    trace: Trace, ops: pl.DataFrame, steps: pl.DataFrame, tids: list[int]
) -> pl.DataFrame:
    """``ops`` (launched from the threads ``tids``) with the range of their launching call
    (``range``: a 1-based row of ``steps``, the rows of ``steps_range_list.sql`` by range;
    NULL in none)."""
    import polars as pl

    con = trace.db
    con.register("step_ranges", steps)
    try:
        marks = trace.query("steps_range_marks")
    finally:
        con.unregister("step_ranges")
    marks = marks.select(
        thread=pl.col("globalTid").replace_strict(
            tids, range(1, len(tids) + 1), return_dtype=pl.Int32
        ),
        key="key",
        range="range",
    ).sort("thread", "key")
    return ops.with_columns(range=marks["range"].gather(_latest_marks(ops, marks)))


def _stepped(ops: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """``ops`` with their step (NULL where ``range`` is: in none), and their range where a
    step is several ranges (several threads)."""
    if _one_range_per_step(steps):  # one thread
        return ops.rename({"range": "step"})
    return ops.with_columns(step=steps["step"].gather(ops["range"] - 1))


def _one_range_per_step(steps: pl.DataFrame) -> bool:
    return bool((steps["step"] == steps["range"]).all())


def _per_device(ops: pl.DataFrame, steps: pl.DataFrame, counted: int) -> pl.DataFrame:
    """The rows of ``steps_by_range.sql`` from ``ops`` with their step (and range:
    :func:`_stepped`), the step list (``steps``) and the steps' ranges counted (those of
    the threads that define the steps, and of processes whose ranges launched nothing)."""
    import polars as pl

    kernel, start, end = pl.col("is_kernel"), pl.col("start"), pl.col("end")
    figures = {
        "start_ns": start.min(),
        "end_ns": end.max(),
        "kernels": kernel.sum().cast(pl.Int64),
        "kernel_ns": (end - start).filter(kernel).sum(),
    }
    if "range" in ops.columns:
        # the step's CPU span on the device: of its ranges that launched work there, the
        # first's start and thread (ranges are numbered by start) and the latest end, in
        # the same group-by (a unique of every (range, device) pair cost 0.3 CPU s on 5M)
        ops = ops.with_columns(range_end=steps["end"].gather(ops["range"] - 1))
        figures |= {"first": pl.col("range").min() - 1, "cpu_end_ns": pl.col("range_end").max()}
    per_device = _in_steps(ops).group_by("step", "device").agg(**figures).collect()
    if "range" in ops.columns:
        first = per_device["first"]
        per_device = per_device.with_columns(
            cpu_start_ns=steps["start"].gather(first), global_tid=steps["globalTid"].gather(first)
        )
    else:
        cpu = steps.select("step", cpu_start_ns="start", cpu_end_ns="end", global_tid="globalTid")
        per_device = per_device.join(cpu, on="step")
    return (
        per_device.join(_busy(ops), on=["step", "device"])
        .with_columns(
            ranges=pl.lit(counted, dtype=pl.Int64),
            duration_ns=pl.col("end_ns") - pl.col("start_ns"),
        )
        .select(pl.col(c).cast(pl.Int64) for c in COLUMNS)
        .sort("step", "device")
    )


def _in_steps(ops: pl.DataFrame) -> pl.LazyFrame:
    """``ops`` in some step (``step`` not NULL), lazily: a query over it reads the columns it
    needs of those rows only (no copy of every column)."""
    import polars as pl

    return ops.lazy().filter(pl.col("step").is_not_null())


def _without_nulls(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``frame`` without the rows where ``column`` is null; ``frame`` itself when there are
    none (a filter copies every column: ~190 MB of operations on 5M kernels)."""
    import polars as pl

    return frame.filter(pl.col(column).is_not_null()) if frame[column].null_count() else frame


def _latest_marks(ops: pl.DataFrame, marks: pl.DataFrame) -> pl.Series:
    """For each operation's launching call (thread, call_key), the row of ``marks``
    (thread, key; sorted by both) of the latest mark of its thread at or before it, None
    without one. A binary search of (thread, key) packed in one 64-bit integer when both
    fit, else an ASOF join."""
    import polars as pl

    low = min(ops["call_key"].min(), marks["key"].min())
    key_bits = max(ops["call_key"].max(), marks["key"].max()).bit_length()
    thread_bits = int(marks["thread"].max()).bit_length()
    if not _packed_search(low, key_bits + thread_bits):
        found = (
            ops.select("thread", "call_key")
            .with_row_index("row")
            .sort("call_key")
            .join_asof(
                marks.select("thread", call_key="key").with_row_index("mark"),
                on="call_key",
                by="thread",
                strategy="backward",
                check_sortedness=False,
            )
            .sort("row")
        )
        return found["mark"].cast(pl.Int64)
    shift = 1 << key_bits
    packed = marks.select(pl.col("thread").cast(pl.Int64) * shift + pl.col("key")).to_series()
    wanted = ops.select(pl.col("thread").cast(pl.Int64) * shift + pl.col("call_key"))
    at = packed.search_sorted(wanted.to_series(), side="right").cast(pl.Int64) - 1
    same = (at >= 0) & (marks["thread"].gather(at.clip(0)) == ops["thread"])
    return pl.select(pl.when(same).then(at)).to_series()


def _packed_search(low: int, bits: int) -> bool:
    """Whether (thread, key) pack into one non-negative 64-bit integer."""
    return low >= 0 and bits <= 63


def _busy(ops: pl.DataFrame) -> pl.DataFrame:
    """busy_ns per step and device: the length of the union of its operations (in start
    order, each adds what it runs past the latest end of the earlier ones). One sort of a
    64-bit key of (step, device) and start, and one running maximum over every operation
    with (step, device) above the end, so that it never carries across steps (sorting by
    three keys and a running maximum per group cost 1.4 CPU s on 5M operations)."""
    import polars as pl

    step, device, start, end = (pl.col(c) for c in ("step", "device", "start", "end"))
    held = _in_steps(ops)
    s0, s1, e0, e1, d0, d1, last = (
        held.select(
            s0=start.min(),
            s1=start.max(),
            e0=end.min(),
            e1=end.max(),
            d0=device.min(),
            d1=device.max(),
            last=step.max(),
        )
        .collect()
        .row(0)
    )
    device_bits = (d1 - d0).bit_length()
    part_bits = (last << device_bits).bit_length()
    time_bits = (max(e1, s1) - s0).bit_length()
    if s0 < 0 or e0 < s0 or part_bits + time_bits > 63:
        return _busy_by_group(ops)
    part = (step.cast(pl.Int64) * (1 << device_bits) + (device - d0)) * (1 << time_bits)
    keys = held.select(
        part.alias("part"), (start - s0).alias("start"), (end - s0).alias("end")
    ).collect()
    keys = keys[(keys["part"] + keys["start"]).arg_sort()]
    part, start, end = pl.col("part"), pl.col("start"), pl.col("end")
    seen = (part + end).cum_max().shift(1)
    prev_end = pl.when(seen >= part).then(seen - part)
    return (
        keys.select(part, busy=(end - pl.max_horizontal(start, prev_end.fill_null(start))).clip(0))
        .group_by("part")
        .agg(busy_ns=pl.col("busy").sum())
        .select(
            step=pl.col("part") // (1 << (device_bits + time_bits)),
            device=(pl.col("part") // (1 << time_bits)) % (1 << device_bits) + d0,
            busy_ns="busy_ns",
        )
    )


def _busy_by_group(ops: pl.DataFrame) -> pl.DataFrame:
    """:func:`_busy` where (step, device) and the times do not fit in 64 bits together."""
    import polars as pl

    start, end = pl.col("start"), pl.col("end")
    ordered = (
        _in_steps(ops).select("step", "device", "start", "end").sort("step", "device", "start")
    ).collect()
    prev_end = end.cum_max().shift(1).over("step", "device")
    return (
        ordered.with_columns(prev_end=prev_end)
        .select(
            "step",
            "device",
            busy=(end - pl.max_horizontal(start, pl.col("prev_end").fill_null(start))).clip(0),
        )
        .group_by("step", "device")
        .agg(busy_ns=pl.col("busy").sum())
    )
