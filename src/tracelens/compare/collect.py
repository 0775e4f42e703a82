"""What the diff reads from one trace: totals, census, copies, launch sequences, launch
grids and hidden CUDA graph replays, all through query files and public functions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .headline import kept_totals, util_accounting, window

# imported from here before compare.headline (the report, tests)
from .headline import trace_totals as trace_totals

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace
    from ..util import Util
    from . import workfile
    from .shift import ShiftKernels


@dataclass
class Side:
    totals: dict[str, int | None]
    census: pl.DataFrame  # name, instances, total_ns, avg_ns, med_ns, ...
    copies: dict[int, dict[str, int]]
    sequences: dict[int, pl.Series]  # per device: launches in order, as sequence_names indices
    sequence_names: list[str]
    blocks: dict[str, float]  # mean thread blocks per launch, per kernel name
    graph: tuple[int, int]  # CUDA graph replays traced at graph level: (count, ns)
    gpus: tuple[str, ...]  # GPU models the export lists (sorted; empty when it lists none)
    # Categories go by demangled name whatever name the diff shows: the census by
    # demangled name, and (short names) each name's dominant demangled name
    census_demangled: pl.DataFrame
    demangled_of: dict[str, str]
    # GPU time accounting (trace.util), summed over the devices busy in the window
    # (util_listed.busy_devices): span_ns, busy_ns, idle_ns, compute_ns,
    # exposed_communication_ns, exposed_memory_ns (None: left out, too many launches); and
    # the count of those devices
    time: dict[str, int] | None
    devices: int
    util: Util | None = None  # trace.util(where) the time figures come from
    steps: Steps | None = None  # trace.steps(where=where) (None: left out, as util)
    # GPU time per NVTX path and step (compare.regions.region_times; None: no range holds
    # any of the work, or left out as util)
    regions: pl.DataFrame | None = None
    has_nvtx: bool = False  # the export has NVTX ranges and CUDA API calls to project them
    # The GPU work read (util.work_in_order with its stream: WORK_COLUMNS) when the caller
    # asked to keep it (diff's keep_work: the report's census, line-up and timeline use it)
    # and the trace's cache entry does not keep it (work_in_entry)
    work: pl.DataFrame | None = None
    # The kernels per device and name id (model.devices.device_kernel_ids) when the caller
    # asked for them (per_device): a few rows per kernel name, not the work
    kernel_ids_by_device: pl.DataFrame | None = None
    # keep_work, and the trace's cache entry keeps the whole trace's work: read it back
    # when needed (kept_work) instead of holding it through the other side's read
    work_in_entry: bool = False
    # Each kernel's start, in the order of ``sequences`` (host launch order, device after
    # device; None: left out, as util, or graph replays among the launches): what times the
    # repetitions of the launch sequence when they are the per-step unit (.repetitions).
    # A column the step search's read holds anyway (8 bytes a launch): only the few starts
    # needed are looked up, once the alignment has counted the steps
    launch_starts: pl.Series | None = None
    # When the steps' time shifted level part-way (Steps.level_shift): each kernel's calls
    # and time before the shift and from it (compare.shift; None: no shift, or graph
    # replays among the step search's launches); found again when the steps are re-phased
    # (compare.phase), from ``shift_names``
    shift: ShiftKernels | None = None
    # The name the diff shows for each demangled name id (the step search's launches carry
    # demangled ids): what a level shift's kernels are named by, in the name kind asked for
    shift_names: dict[int, str] | None = None
    # The re-phased end steps a selection held only part of, left out of ``steps``
    # (compare.phase._whole_steps): how many steps' kernels they hold together (rounded)
    # and their GPU busy time, ns. The per-step figures count them (notes.impact_steps,
    # step_coverage): the selected work is the same, whole steps or not
    cut_steps: int = 0
    cut_busy_ns: int = 0
    # Launches per device, kernel name and process (launchers.kernel_launchers: device,
    # name, pid, launches) and the name of each of those processes (None: the export names
    # none): who launched the kernels only one run has (the other_work clue)
    launchers: pl.DataFrame | None = None
    process_names: dict[int, str | None] = field(default_factory=dict)


# The columns of Side.work: what the report's census, line-up and timeline read.
WORK_COLUMNS = ("kind", "device", "stream", "start_ns", "end_ns", "name_id", "short_id")


def collect(
    trace: Trace,
    name_kind: str,
    where: EventFilter,
    util_limit: int,
    nvtx_limit: int,
    keep_work: bool = False,
    per_device: bool = False,
) -> Side:
    """What the diff reads from ``trace``; ``keep_work``: keep the GPU work read on
    :attr:`Side.work` (:data:`WORK_COLUMNS`) for the caller, or, when the trace's cache
    entry keeps it, say so (:attr:`Side.work_in_entry`: :func:`kept_work` reads it back);
    ``per_device``: its kernels' figures per device and name id on
    :attr:`Side.kernel_ids_by_device`."""
    from ..steps_order import shares_devices
    from .launchers import kernel_launchers, process_names
    from .model.devices import device_kernel_ids

    trace.require_kernels()
    # One read of the GPU work serves the census, the totals, the launch sequences, util
    # and the step search (each read its own before: ~4 census times on a million launches).
    work, kernels, census_demangled, demangled_of = read_work(trace, where, name_kind, keep_work)
    # The read's columns (no copy), unless the trace's cache entry keeps them: then they
    # are read back when needed, not held through the other side's read and step search
    # (the 5M pair's memory peak: ~250 MB a side).
    in_entry = keep_work and _work_in_entry(trace, where)
    kept = work.select(WORK_COLUMNS) if keep_work and not in_entry else None
    read = _Read(work, *_launches(work, name_kind))
    del work  # held by ``read`` alone, which the step search empties
    by_device = device_kernel_ids(read.launches, name_kind) if per_device else None
    launchers = kernel_launchers(read.launches, kernels, name_kind)
    census = kernels.drop("name_id", "avg_blocks")
    if census_demangled is None:
        census_demangled = census
    copies = {
        r["copy_kind"]: r for r in trace.query("copy_kinds", **window(where)).iter_rows(named=True)
    }
    # pid stays for the step search where processes share a device (the loop's are told
    # from another program's there), else it goes (~40 MB per 5M); the correlation ids
    # stay for the step search too (_step_launches)
    if not shares_devices(read.launches):
        read.launches = read.launches.drop("pid")
    sequences, names = launch_sequences(kernels, name_kind, read.launches, read.order)
    graph = trace.graph_replays(where)
    # The names of the step search's launches (demangled name ids), for a level shift's kernels
    named = _shift_names(kernels, read.launches, name_kind)
    limits = (util_limit, nvtx_limit)
    totals, accounting, starts, shift = _time_and_steps(trace, where, read, graph, limits, named)
    return Side(
        totals,
        census,
        copies,
        sequences,
        names,
        _blocks_by_name(kernels),
        graph,
        tuple(sorted(g.name or "?" for g in trace.gpus())),
        census_demangled,
        demangled_of,
        *accounting,
        "NVTX_EVENTS" in trace.tables and "CUPTI_ACTIVITY_KIND_RUNTIME" in trace.tables,
        kept,
        by_device,
        in_entry,
        starts,
        shift,
        named,
        launchers=launchers,
        process_names=process_names(trace, launchers["pid"].unique().to_list()),
    )


def _shift_names(kernels: pl.DataFrame, launches: pl.DataFrame, name_kind: str) -> dict[int, str]:
    """The name the diff shows (``kernels``' names, by ``name_kind``) of each demangled name
    id of ``launches`` (the kernels read: name_id, and short_id for short names, each
    demangled name's one short name)."""
    names = dict(kernels.select("name_id", "name").iter_rows())
    if name_kind != "short":
        return names
    import polars as pl

    # one short name per demangled name: ~0.04 CPU s on 5M launches (unique pairs: 0.2)
    pairs = launches.group_by("name_id").agg(pl.col("short_id").first())
    return {d: names[s] for d, s in pairs.iter_rows() if d is not None and s in names}


@dataclass
class _Read:
    """One side's GPU work read (:func:`read_work`), its kernels and their host launch
    order (:func:`_launches`), held until the step search, which empties it: their memory
    would add to its peak (~350 MB of 5M operations)."""

    work: pl.DataFrame | None
    launches: pl.DataFrame | None  # the kernels in GPU order (util.ORDER)
    order: pl.Series | None  # their host launch order (row numbers of launches)


def _launches(work: pl.DataFrame, name_kind: str) -> tuple[pl.DataFrame, pl.Series]:
    """The kernels of ``work`` with only the columns the totals, the sequences and the steps
    read, in GPU order (device, start_ns, end_ns, correlation_id, the name ids, pid), and
    their host launch order (:func:`tracelens.steps_order.host_order`: by process and
    correlation id), found once: the sequences and the step search read it."""
    from ..steps_order import host_order
    from ..util_sweep import KERNEL

    name_columns = ("name_id", "short_id") if name_kind == "short" else ("name_id",)
    # Selected before the filter, which copies every column it keeps (6 of the read's 11)
    launches = work.select(
        "device", "start_ns", "end_ns", "correlation_id", *name_columns, "pid"
    ).filter(work["kind"] == KERNEL)
    return launches, host_order(launches.select("device", "start_ns", "correlation_id", "pid"))


def _time_and_steps(trace, where, read: _Read, graph, limits: tuple[int, int], names: dict):
    """(totals, accounting, launch starts, level shift's kernels) of :class:`Side` from
    ``read``: the GPU time accounting (util; left out above ``limits``' first, util_limit
    kernel launches, as the step search and the NVTX regions: ``accounting`` is then
    (None, 0, None, None, None)), the totals, the step search and the regions
    (:func:`_steps_and_regions`, up to nvtx_limit launches: ``limits``' second), and
    when the steps shifted level, their kernels (:func:`.shift.shift_kernels`, named by
    ``names``). Empties ``read`` before the step search."""
    from .shift import shift_kernels

    util_limit, nvtx_limit = limits
    work, launches = read.work, read.launches
    limited = launches.height > util_limit
    util = None if limited else util_accounting(trace, where, work)
    # GPU busy as util counts it (kernels, copies, memsets, graph replays): util's own
    # figure, else a sweep over the work
    busy = work if limited else util[0]["busy_ns"]
    totals = kept_totals(trace, where, launches, None if limited else util[-1], busy)
    if limited:
        return totals, (None, 0, None, None, None), None, None
    step_launches = _step_launches(work, launches, read.order, graph)
    # The rest of the read (pid, correlation ids, launch starts, and the kernels in GPU
    # order) is freed before the step search, whose peak it would add to (~350 MB of
    # 5M operations): only Side.work's columns stay, when kept.
    kernel_launches = launches.height
    read.work = read.launches = read.order = None
    del work, launches
    steps, regions, starts = _steps_and_regions(
        trace, where, step_launches, kernel_launches, nvtx_limit
    )
    shift = None
    if "graph_id" not in step_launches.columns:  # kernels alone, by name id
        shift = shift_kernels(steps, step_launches, names)
    return totals, (*util[:-1], steps, regions), starts, shift


def _work_in_entry(trace: Trace, where: EventFilter) -> bool:
    """Whether the trace's cache entry keeps the whole trace's work (:func:`read_work` of
    ``where`` without a filter kept it, or found it kept)."""
    from . import workfile

    whole = all(v is None for v in where.params().values())
    return whole and workfile.holds(trace)


def kept_work(trace: Trace) -> pl.DataFrame | None:
    """:attr:`Side.work` of a side whose cache entry keeps it (:attr:`Side.work_in_entry`),
    read back: the same rows and columns (:data:`WORK_COLUMNS`); None when the file went
    meanwhile (evicted), as if the work were not kept."""
    from . import workfile

    return workfile.kept(trace, WORK_COLUMNS)


def read_work(
    trace: Trace, where: EventFilter, name_kind: str, keep_stream: bool
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame | None, dict[str, str]]:
    """(work, kernels, census by demangled name, demangled name of each short name) of one
    side, from one read of its GPU work (``queries/work_in_order.sql`` with the launch
    grid): the work as :func:`tracelens.util.work_in_order` gives it (``keep_stream``: with
    its stream, and with short_id whatever ``name_kind``, for the report; else short_id
    is read for short names only, NULL otherwise); each kernel's census row with its mean
    grid (``queries/diff_kernels.sql`` over the rows read, by the name kind ``name_kind``);
    for short names the census by demangled name and each short name's dominant demangled
    name (``queries/kernel_name_pairs.sql``), which categories go by (None and {} for
    demangled names: the kernels are that census). A cached trace read whole keeps the
    work and these tables in its cache entry for later diffs (:mod:`.workfile`).
    """
    from . import workfile

    whole = all(v is None for v in where.params().values())
    tables = workfile.kept_kernels(trace, name_kind) if whole else None
    short = name_kind == "short" or keep_stream
    work = _sorted_work(trace, where, short, keep_stream, grid=tables is None)
    if tables is None:
        tables = _census_tables(trace, work, name_kind)
        if whole:
            workfile.keep_kernels(trace, name_kind, tables)
    kernels, by_demangled, pairs = tables
    if name_kind != "short":
        return work.drop("blocks"), kernels, None, {}
    census_demangled = by_demangled.drop("name_id", "avg_blocks")
    return work.drop("blocks"), kernels, census_demangled, dict(pairs.iter_rows())


def _census_tables(trace: Trace, work: pl.DataFrame, name_kind: str) -> workfile.KernelTables:
    """``queries/diff_kernels.sql`` by ``name_kind`` over ``work`` (the rows read); for
    short names also by demangled name, and ``queries/kernel_name_pairs.sql``."""
    import pyarrow as pa

    from ..activity import registered_work

    columns = ("kind", "start_ns", "end_ns", "name_id", "short_id", "blocks")
    # Record batches: DuckDB scans them in parallel (a polars frame is one batch).
    table = work.select(columns).to_arrow()
    table = pa.Table.from_batches(table.to_batches(max_chunksize=_BATCH_ROWS), table.schema)
    by_demangled = pairs = None
    with registered_work(trace, table) as source:
        kernels = trace.query("diff_kernels", work=source, name_kind=name_kind)
        if name_kind == "short":
            by_demangled = trace.query("diff_kernels", work=source, name_kind="demangled")
            pairs = trace.query("kernel_name_pairs", work=source)
    return kernels, by_demangled, pairs


def _sorted_work(
    trace: Trace, where: EventFilter, short: bool, stream: bool, grid: bool = True
) -> pl.DataFrame:
    """The GPU work of ``where`` (work_in_order.sql's columns; ``short``: with the short
    name ids, else short_id is NULL; ``stream``: with the stream column; ``grid``: with
    the blocks, else blocks may be NULL) in launch order (``util.ORDER``). A cached trace
    read whole keeps its rows sorted in its cache entry, with the start of each
    operation's launching call (``launch_start``, from util's index of the calls), and
    later diffs read them back (:mod:`.workfile`) with that column: util then reads the
    figures of the calls, not every call (:func:`tracelens.util.accounting_and_calls`).
    A whole read tells ``trace`` how many records of each kind it kept
    (:meth:`~tracelens.Trace.kept_whole`): the damaged-records note then counts no rows."""
    # work_in_order's sort, and the count of the records of each kind a whole read kept
    from ..util import _in_order, _kept_whole
    from . import workfile

    wanted = [c for c in _WORK_ORDER_COLUMNS if stream or c != "stream"]
    whole = all(v is None for v in where.params().values())
    stored = [c for c in wanted if (short or c != "short_id") and (grid or c != "blocks")]
    launch = ["launch_start", "launch_tid"]  # (utilthread: and the launching thread)
    if whole and (work := workfile.kept(trace, (*stored, *launch))) is not None:
        _kept_whole(trace, work)
        return _null_columns(work, [*wanted, *launch])
    keep = whole and workfile.keeps(trace)
    params = {"selection": None, **where.params(), "grid": grid or keep, "short": short or keep}
    # Sorted first, so that the unsorted read is gone before the census query runs (which
    # does not need the order): one copy of the work at a time, as work_in_order holds it.
    rows = trace.query("work_in_order", any_order=True, **params)
    work = _in_order(rows, drop=() if stream or keep else ("stream",))
    if whole:
        _kept_whole(trace, work)
    if not keep:
        return _null_columns(work.select(stored), wanted)
    work = work.hstack(_launch_starts(trace, work))
    workfile.keep(trace, work)  # every column, for any later diff or report
    return _null_columns(work.select(*stored, *launch), [*wanted, *launch])


def _launch_starts(trace: Trace, work: pl.DataFrame) -> pl.DataFrame:
    """The start and thread (launch_start, launch_tid) of the API call that launched each
    row of ``work`` (pid, correlation_id; null where the export has none), as util looks
    them up (:mod:`tracelens.util_calls`)."""
    from ..util import sync_api_regex
    from ..util_calls import read_calls

    return read_calls(trace, sync_api_regex()).launches.launches(work)


def _null_columns(work: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """``work``'s ``columns``, those it lacks (short_id, blocks: not read) NULL, as
    work_in_order.sql reads them without $short and $grid."""
    import polars as pl

    missing = [pl.lit(None, pl.Int64).alias(c) for c in columns if c not in work.columns]
    return work.with_columns(missing).select(columns) if missing else work.select(columns)


# work_in_order.sql's columns, in its order.
_WORK_ORDER_COLUMNS = (
    "device",
    "start_ns",
    "end_ns",
    "stream",
    "kind",
    "name_id",
    "short_id",
    "pid",
    "correlation_id",
    "graph_id",
    "blocks",
)


# Rows per record batch of the work diff_kernels scans.
_BATCH_ROWS = 1 << 17


def _step_launches(work, launches, order, graph) -> pl.DataFrame:
    """What the step search reads (:func:`tracelens.steps.find_steps`' ``launches``): the
    kernels (``launches``, in GPU order) in their host launch order (``order``:
    :func:`~tracelens.steps_order.host_order`). Made after util's sweeps, whose peak they
    would add to."""
    import polars as pl

    from ..util_sweep import GRAPH, KERNEL

    # The step search counts graph-level CUDA graph replays as launches, by graph (the
    # kernels alone would make each step microseconds long): the work holds them too.
    if graph[0]:
        return work.filter(pl.col("kind").is_in((KERNEL, GRAPH))).select(
            "device", "start_ns", "end_ns", "correlation_id", "pid", "name_id", "graph_id"
        )
    # In host launch order, with their correlation ids, as `tracelens steps` reads them:
    # the search finds each launch's call by its id, and the host's pause before it
    # (steps_phase.HostGaps), which phases period steps where the GPU idles alike before
    # every launch. Handed over without them, the diff's steps were phased by the GPU
    # alone and kept as the trace's: a later `tracelens steps`, report or --step N of the
    # cached trace took other steps than a direct read finds (test_parity_steps). With
    # their processes: on a device two programs share, the loop's steps are its own
    # processes' (Steps.processes), as `tracelens steps` finds them, whichever command
    # searched first and kept the steps.
    process = [c for c in ("pid",) if c in launches.columns]
    columns = ("device", "start_ns", "end_ns", "name_id", "correlation_id", *process)
    return launches.select(columns)[order]


def _steps_and_regions(trace, where, step_launches, kernels: int, nvtx_limit: int):
    """(steps, regions, launch starts) of :class:`Side`: the step search over
    ``step_launches`` (:func:`_step_launches`), the NVTX regions of up to ``nvtx_limit``
    kernel launches (``kernels``: they cost more, the NVTX projection: a lower limit than
    util's), and when the launches are in host launch order (no graph replays among
    them), their starts (:attr:`Side.launch_starts`)."""
    from ..steps import find_steps
    from .regions import region_times

    steps = find_steps(trace, where=where, launches=step_launches)
    regions = region_times(trace, where, steps) if kernels <= nvtx_limit else None
    in_order = "graph_id" not in step_launches.columns
    return steps, regions, step_launches["start_ns"] if in_order else None


def _blocks_by_name(kernels: pl.DataFrame) -> dict[str, float | None]:
    """Mean thread blocks per launch by kernel name (None where the export has no grid), from
    ``diff_kernels``' rows by name id (two ids of one name, if any, weighted by launches)."""
    import polars as pl

    known = pl.col("avg_blocks").is_not_null()
    per_name = kernels.group_by("name").agg(
        (pl.col("avg_blocks") * pl.col("instances")).sum()
        / pl.col("instances").filter(known).sum(),
        any_known=known.any(),
    )
    return {name: avg if any_known else None for name, avg, any_known in per_name.iter_rows()}


def launch_sequences(
    kernels: pl.DataFrame, name_kind: str, launches: pl.DataFrame, order: pl.Series | None = None
) -> tuple[dict, list[str]]:
    """Each device's launches in launch order as small integers (indices into the name
    list, ``kernels``' names: name_id, name): a million launches are 8 MB, not a million
    strings. ``launches``: device, start_ns, correlation_id, pid, name_id, short_id, each
    device's in GPU order (``util.ORDER``); the sequence is the order the host launched
    them (:func:`tracelens.steps_order.host_order`, the step search's order: by process,
    one after another, then correlation id), not GPU start:
    two streams' kernels interleave on the GPU as timing has it, differently in two runs
    of one program, and the alignment compares paths, not timing. ``order``: that order
    (row numbers of ``launches``), when already found."""
    import polars as pl

    from ..steps_order import host_order

    column = "short_id" if name_kind == "short" else "name_id"
    names = dict(kernels.select("name_id", "name").iter_rows())
    ids = sorted(names)
    index = {raw: i for i, raw in enumerate(ids)}
    if order is None:
        keys = ("device", "start_ns", "correlation_id", "pid")
        order = host_order(launches.select(c for c in keys if c in launches.columns))
    frame = launches.select(
        pl.col("device").gather(order),
        token=pl.col(column).gather(order).replace_strict(index, return_dtype=pl.Int64),
    )
    parts = frame.partition_by("device", maintain_order=True, as_dict=True)
    sequences = {int(device): part["token"] for (device,), part in parts.items()}
    return sequences, [names[raw] for raw in ids]
