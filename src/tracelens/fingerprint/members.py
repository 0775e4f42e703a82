"""Which step each launch belongs to: the step search's own rule, in the order the host
launched the kernels (period steps), or by the NVTX range its call was made in (range steps:
:func:`range_steps`), not by the GPU window that holds its start.

A period step is ``p`` consecutive launches of its device in host launch order (correlation
id: :func:`tracelens.fingerprint.order.launch_order`, as :func:`tracelens.steps_order.host_order`), ``p`` the motif's length, the steps one
after another from the step search's phase. Its GPU window (first start to last end) is
what the steps frame keeps, and windows of consecutive steps overlap when one stream runs
behind another: a collective launched last in step 3 that starts after step 4's first
kernel lies in step 4's window. Assigned by GPU window, it moved from step 3 to step 4 and
two runs of one program read as a path change (kernel removed from step 3, added to step 4)
when only their timing differed. Where a process launches from several host threads, the
blocks of host order are split again one thread at a time, by each launch's place in its own
thread's sequence (:mod:`.threadsteps`): host order interleaves the threads' calls as the
scheduler ran them.

The steps frame does not say where the steps start in the launch sequence; the block of
step 1 is found as the ``p`` consecutive launches whose first start and kernel time are
step 1's and whose last end is not past its end (a step's copies and memsets may end after
its kernels; a rolling window over the launches near step 1's first start), and taken when
every step's figures are those of its block. When none is (steps found on other
launches: the report's, with graph replays), the device keeps the GPU windows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..steps import Steps
    from ..trace import Trace

# A step's figures that must equal its block's, from the steps frame.
_FIGURES = ("start_ns", "end_ns", "kernel_ns")
# At most this many candidate first blocks are checked against every step (usually one
# candidate is left once step 1's figures are matched).
_CANDIDATES = 8


def host_order_steps(
    launches: pl.DataFrame, rows: pl.Series, steps: Steps
) -> tuple[pl.Series, pl.Series] | None:
    """(the step of each row of ``launches`` (NULL: none), whether that step was found in
    host launch order) for the devices whose period steps are found as blocks of the
    launch sequence; None when no device's are (not period steps, or none found).
    ``launches``: device, start_ns, end_ns (and thread, global_pid where they are:
    :func:`.threadsteps.launch_groups`); ``rows``: their row numbers in host launch order
    (:func:`tracelens.fingerprint.order.launch_order`)."""
    import polars as pl

    from .threadsteps import launch_groups, thread_blocks

    if steps.method != "period" or not steps.motif or steps.frame.is_empty():
        return None
    seq = launches.select(pl.col("device", "start_ns", "end_ns").gather(rows))
    bounds = seq.group_by("device").len().sort("device").rows()
    n = launches.height
    step = pl.repeat(None, n, dtype=pl.Int64, eager=True)
    found = pl.repeat(False, n, dtype=pl.Boolean, eager=True)
    offset = 0
    for device, count in bounds:
        motif = steps.motif.get(device)
        frame = steps.frame.filter(pl.col("device") == device).sort("step")
        if motif and frame.height:
            device_seq = seq.slice(offset, count)
            first = _first_block(device_seq, len(motif), frame)
            if first is not None:
                at = rows.slice(offset, count)
                block = _blocks(count, first, len(motif), frame.height)
                groups = launch_groups(launches, at)
                if groups is not None:  # each thread's launches by its own sequence
                    block = thread_blocks(groups, block, frame.height)
                in_host_order = frame["step"].cast(pl.Int64).gather(block)
                step = step.scatter(at, in_host_order)
                found = found.scatter(at, True)
        offset += count
    if not found.any():
        return None
    return step, found


def range_steps(trace: Trace, launches: pl.DataFrame, steps: Steps) -> pl.Series | None:
    """For steps from NVTX ranges: the step of each row of ``launches`` (NULL: none) by the
    step search's own rule, the step whose range holds the launching call on its thread
    (``queries/fingerprint_range_steps.sql``: the calls of ``steps_range_work.sql``, as
    ``--steps`` selects a step's work), not the GPU
    window that holds the launch's start. None for other steps, or launches read without
    their calls' process (global_pid: a trace without NVTX ranges has no range steps)."""
    import polars as pl

    if steps.ranges is None or steps.ranges.is_empty() or "global_pid" not in launches.columns:
        return None
    bounds = steps.ranges.select(
        "step", globalTid="global_tid", start="cpu_start_ns", end="cpu_end_ns"
    )
    con = trace.db
    con.register("step_bounds", bounds)
    try:
        first, last = int(bounds["step"].min()), int(bounds["step"].max())
        calls = trace.query("fingerprint_range_steps", first=first, last=last)
    finally:
        con.unregister("step_bounds")
    # A call inside a step's range is inside an NVTX range on its thread, so it has a path
    # and its launches their global_pid (fp_paths); the others are in no step. A launch
    # finds its call by the key the query gives the calls (pid_of(globalPid) << 32 |
    # correlationId, in the same integer arithmetic).
    pid = (pl.col("global_pid").cast(pl.Int64) // 2**24) & 0xFFFFFF
    keys = launches.select(launch=pid * 2**32 | pl.col("correlation_id"))["launch"]
    return _step_by_key(keys, calls["launch"], calls["step"])


# A dense table of (process, correlation id) slots is used while it has at most this many
# slots per call (and up to the floor on small traces); past it, a hash join.
_SLOTS_PER_CALL = 4
_SLOTS_FLOOR = 1 << 20


def _step_by_key(keys: pl.Series, call_keys: pl.Series, call_steps: pl.Series) -> pl.Series:
    """The step of each launch key in ``keys`` (pid << 32 | correlation id) from the calls'
    (``call_keys``, unique, and ``call_steps``); NULL where no call has the key. CUPTI
    numbers correlation ids per process from 1, so the calls' ids fill a dense table of
    (process rank, correlation id) slots: a scatter of the calls' steps and a gather per
    launch, no hash join of millions with millions (the NVTX bench trace's 5M launches and
    5M calls: 1.5 -> 0.2 CPU s). Ids too sparse for the table take the join."""
    import polars as pl

    if call_keys.is_empty():
        return pl.repeat(None, keys.len(), dtype=pl.Int64, eager=True).alias("step")
    pids = (call_keys // 2**32).unique().sort()
    corr = call_keys % 2**32
    lo, hi = corr.min(), corr.max()
    width = hi - lo + 1
    slots = pids.len() * width
    if slots > max(_SLOTS_PER_CALL * call_keys.len(), _SLOTS_FLOOR):
        calls = pl.DataFrame({"launch": call_keys, "step": call_steps})
        joined = (
            keys.to_frame("launch")
            .lazy()
            .join(calls.lazy(), on="launch", how="left", maintain_order="left")
        )
        return joined.collect()["step"]
    call_slot = pids.search_sorted(call_keys // 2**32).cast(pl.Int64) * width + (corr - lo)
    table = pl.repeat(None, slots, dtype=pl.Int64, eager=True).scatter(call_slot, call_steps)
    key_pid, key_corr = keys // 2**32, keys % 2**32
    rank = pids.search_sorted(key_pid).cast(pl.Int64)
    known = (
        (rank < pids.len())
        & (pids.gather(rank.clip(0, pids.len() - 1)) == key_pid)
        & (key_corr >= lo)
        & (key_corr <= hi)
    )
    slot = pl.select(pl.when(known).then(rank * width + (key_corr - lo))).to_series()
    return table.gather(slot).alias("step")


def _blocks(count: int, first: int, p: int, blocks: int) -> pl.Series:
    """The block (from 0; NULL: none) of each of a device's ``count`` launches in host
    order: launches [first + k p, first + (k + 1) p) are block k of ``blocks``."""
    import polars as pl

    before = pl.repeat(None, first, dtype=pl.Int64, eager=True)
    inside = pl.int_range(0, blocks * p, dtype=pl.Int64, eager=True) // p
    after = pl.repeat(None, count - first - blocks * p, dtype=pl.Int64, eager=True)
    return pl.concat([before, inside, after])


def _first_block(seq: pl.DataFrame, p: int, frame: pl.DataFrame) -> int | None:
    """The host-order position of step 1's first launch in ``seq`` (one device's launches
    in host order: start_ns, end_ns), or None when no block of ``p`` launches has the
    figures of every step of ``frame`` (that device's steps, in order)."""
    import polars as pl

    blocks = frame.height
    n = seq.height
    if (frame["kernels"] != p).any() or blocks * p > n:
        return None
    s1, e1, k1 = (frame[c][0] for c in _FIGURES)
    at = (seq["start_ns"] == s1).arg_true()
    if at.len() == 0:
        return None
    lo = max(0, int(at.min()) - p + 1)
    hi = min(n, int(at.max()) + p)
    near = seq.slice(lo, hi - lo)
    windows = near.select(
        start=pl.col("start_ns").rolling_min(p),
        end=pl.col("end_ns").rolling_max(p),
        busy=(pl.col("end_ns") - pl.col("start_ns")).rolling_sum(p),
    ).with_columns(first=pl.int_range(lo - p + 1, hi - p + 1, dtype=pl.Int64))
    candidates = windows.filter(
        (pl.col("start") == s1)
        & (pl.col("end") <= e1)
        & (pl.col("busy") == k1)
        & (pl.col("first") + blocks * p <= n)
    )["first"]
    expected = frame.select(pl.col(_FIGURES).cast(pl.Int64))
    for first in candidates.head(_CANDIDATES).to_list():
        found = _block_figures(seq, first, p, blocks)
        if found.drop("end_ns").equals(expected.drop("end_ns")) and bool(
            (found["end_ns"] <= expected["end_ns"]).all()
        ):
            return first
    return None


def _block_figures(seq: pl.DataFrame, first: int, p: int, blocks: int) -> pl.DataFrame:
    """start_ns, end_ns, kernel_ns of ``blocks`` blocks of ``p`` launches from ``first``."""
    import polars as pl

    return (
        seq.slice(first, blocks * p)
        .with_columns(block=pl.int_range(0, blocks * p, dtype=pl.Int64) // p)
        .group_by("block")
        .agg(
            start_ns=pl.col("start_ns").min(),
            end_ns=pl.col("end_ns").max(),
            kernel_ns=(pl.col("end_ns") - pl.col("start_ns")).sum(),
        )
        .sort("block")
        .select(pl.col(_FIGURES).cast(pl.Int64))
    )
