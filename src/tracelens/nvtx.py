"""NVTX range summaries with ``nsys stats`` semantics (nvtx_sum, nvtx_pushpop_sum,
nvtx_startend_sum) and the GPU projection of ranges (nvtx_gpu_proj_trace / _sum,
nvtx_kern_sum): which GPU work each range launched and how long it ran.

A GPU operation belongs to a range when the CUDA API call that launched it lies inside the
range on the range's thread (nsys's rule); ranges that end on another thread are not
projected, as in nsys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .choices import NVTX_GROUPS as GROUPS
from .errors import MissingDataError, UsageError, check_at_least
from .results import Result

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

NVTX_TABLE = "NVTX_EVENTS"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
# --style value -> nsys's Style column
STYLES = {"pushpop": "PushPop", "startend": "StartEnd"}
KERNEL_NAME_KINDS = ("demangled", "short")
# The columns a terminal table shows for the wide reports (csv/json keep every column).
TABLE_COLUMNS = {
    "gpu": ("time_pct", "proj_total_ns", "range_total_ns", "instances", "proj_avg_ns",
            "proj_med_ns", "proj_max_ns", "gpu_ops", "avg_level", "style", "range"),
    "each": ("proj_start_ns", "proj_duration_ns", "duration_ns", "gpu_ops", "level",
             "children", "range_id", "parent_id", "tid", "name"),
}  # fmt: skip


# Option combinations nvtx_report refuses; the command line says them with its flags.
EACH_NEEDS_GPU = "{each} needs {gpu} (one row per range projected onto the GPU)"
GROUP_NEEDS_GPU = "{group} needs {gpu} or {kernels} (CPU times are per range name)"


def check_group(group: str) -> str:
    if group not in GROUPS:
        raise UsageError(
            f"unknown {{param}} {group!r}; use one of: {', '.join(GROUPS)}", param="group"
        )
    return group


def check_style(style: str | None) -> str | None:
    """``'pushpop'``/``'startend'`` (any case) -> nsys's Style value; None stays None."""
    if style is None:
        return None
    key = style.lower().replace("/", "").replace("-", "").replace("_", "")
    if key not in STYLES:
        raise UsageError(
            f"unknown {{param}} {style!r}; use one of: {', '.join(STYLES)}", param="style"
        )
    return STYLES[key]


def require_nvtx(trace: Trace) -> None:
    if NVTX_TABLE not in trace.tables:
        raise MissingDataError(trace.path, "no NVTX data: was it captured with -t nvtx?")


def range_summary(trace: Trace, *, style: str | None = None) -> pl.DataFrame:
    """One row per range name and style, by total time (``nsys stats`` nvtx_sum; with
    ``style`` 'pushpop' or 'startend', nvtx_pushpop_sum / nvtx_startend_sum).

    Columns, times in ns of CPU time (how long the range was open): time_pct, total_ns,
    instances, avg_ns, med_ns, min_ns, max_ns, stddev_ns, style, name. Names are nsys's:
    the registered string or text, 'domain:label' in a named domain.
    """
    nsys_style = check_style(style)
    require_nvtx(trace)
    trace.load_nvtx_text()
    return trace.query("nvtx_summary", style=nsys_style)


def _built(trace: Trace, table: str, kind: str = "tables") -> bool:
    """Whether the temp table (``kind`` 'views': view) ``table`` exists."""
    sql = f"SELECT count(*) FROM duckdb_{kind}() WHERE {kind[:-1]}_name = $name"
    return bool(trace.db.execute(sql, {"name": table}).fetchone()[0])


# The sweep's steps free large intermediates one after another (the ranges' spans, the
# depths of each chunk, the joins over ten million ranges); by default DuckDB's allocator
# keeps much of that memory for reuse rather than handing it back, and the steps after add
# to it. Flushing after each task that held more than a few MB, with jemalloc's background
# purging on: on the 10M-range fixture nvtx --gpu peaked at 1.82 GB, not 1.94 (same CPU).
ALLOCATOR_SETTINGS = (
    "SET allocator_flush_threshold = '8MB'",
    "SET allocator_background_threads = true",
)


# An export with at most this many NVTX events has every event's text loaded at once
# (nvtx_text), and the sweep's spans and the held ranges' labels are filtered from it: one
# read of the table rather than two (the 5M-kernel nest trace, 250k ranges read directly:
# 0.25 CPU s, not 0.77). Above it the sweep reads six columns of every event and the text
# of the held ranges only: 10M events' text is 1.3 GB.
NVTX_TEXT_EVENTS = 1_000_000


def _few_events(trace: Trace) -> bool:
    """Whether the SQLite export has at most NVTX_TEXT_EVENTS NVTX events (its largest
    rowid: a b-tree lookup); False for a parquetdir export or one without NVTX."""
    if trace._sqlite is None or trace.parquet_dir is not None or NVTX_TABLE not in trace.tables:
        return False
    top = trace._sqlite_rows(f"SELECT max(rowid) FROM {NVTX_TABLE}")[0][0]
    return (top or 0) <= NVTX_TEXT_EVENTS


def build_attribution(trace: Trace) -> None:
    """:func:`build_sweep`, and ``nvtx_text`` (every range's labels) for callers that read
    it beside the sweep (the fingerprint)."""
    trace.load_nvtx_text()
    build_sweep(trace)


def build_sweep(trace: Trace, *, with_ops: bool = False, keep_tree: bool = True) -> None:
    """Build, once per trace, nvtx_tree (range nesting), nvtx_call_ranges and
    nvtx_range_ops (each call's innermost range, and per range the GPU operations it holds
    innermost: :mod:`tracelens.nvtx_sweep`) and nvtx_paths (names, stacks and paths of the
    ranges that hold GPU work, nvtx_held): the sweep every NVTX attribution reads. It reads
    the ranges' threads and times (nvtx_spans) and the text of the held ranges only. With
    ``with_ops``, also nvtx_op_ranges (every GPU operation's columns and innermost range)
    and nvtx_overlap_ops, read with the sweep's operations when it is built here.
    ``keep_tree`` False: nvtx_tree is dropped once the held ranges are found, for a caller
    that reads only the projection (:func:`release_tree`); a later call builds it again."""
    if _built(trace, "nvtx_paths"):
        if not _built(trace, "nvtx_tree"):  # released by an earlier build: made again
            _rebuild_tree(trace)
        if with_ops and not _built(trace, "nvtx_op_ranges", "views"):
            from . import nvtx_sweep

            nvtx_sweep.add_op_ranges(trace)
        return
    for setting in ALLOCATOR_SETTINGS:
        trace.db.execute(setting)
    from . import nvtx_sweep

    reads = nvtx_sweep.prefetch(trace, with_ops=with_ops)
    try:
        _build_attribution(trace, reads, with_ops, keep_tree)
    finally:
        if reads is not None:
            reads.close()


def _build_attribution(trace: Trace, reads, with_ops: bool, keep_tree: bool) -> None:
    from . import _resources, nvtx_held, nvtx_sweep, nvtx_tree

    if _few_events(trace):
        # the spans and the held ranges' labels are then taken from it (see NVTX_TEXT_EVENTS)
        trace.load_nvtx_text()
    trace.load_nvtx_spans()
    chunks = nvtx_tree.thread_chunks(trace)
    nvtx_tree.build(trace, chunks)  # which frees nvtx_spans (0.5 GB on 10M ranges)
    nvtx_sweep.attribute(trace, chunks, with_ops=with_ops, reads=reads)
    trace.db.execute(_resources.query("_nvtx_overlap_holders"))
    nvtx_held.register_held(trace.db)
    trace.db.execute(_resources.query("_nvtx_held"))
    trace.db.unregister("nvtx_held_ids")
    if not keep_tree:
        release_tree(trace)
    _held_text(trace)
    _build_paths(trace)


def release_tree(trace: Trace) -> None:
    """Drop nvtx_tree, which the projection does not read (nvtx_held holds what it needs of
    the held ranges): on the 10M-range fixture the tree is 0.58 GB of DuckDB's memory that
    the held ranges' names, paths and totals were made beside (the run's peak: 2.06-2.15 GB,
    1.6-1.7 without it). :func:`build_sweep` makes it again for a caller that needs it."""
    trace.db.execute("DROP TABLE IF EXISTS nvtx_tree")


def _rebuild_tree(trace: Trace) -> None:
    """nvtx_tree again, as :func:`_build_attribution` made it, after :func:`release_tree`."""
    trace.load_nvtx_spans()
    from . import nvtx_tree

    nvtx_tree.build(trace, nvtx_tree.thread_chunks(trace))


def _held_text(trace: Trace) -> None:
    """``nvtx_held_text``, the text the held ranges are named from: a view of nvtx_text
    when every range's text is loaded (the join with nvtx_held picks the held ranges, and
    a range's name is made from its own row, the strings and the domain names alone: the
    250k-range nest trace's copy of the held rows cost 0.18 CPU s), else
    :meth:`Trace.load_nvtx_held_text`, the held ranges' text alone."""
    if _built(trace, "nvtx_text"):
        trace.db.execute("CREATE OR REPLACE TEMP VIEW nvtx_held_text AS SELECT * FROM nvtx_text")
    else:
        trace.load_nvtx_held_text()


def _build_paths(trace: Trace) -> None:
    """The temp table nvtx_paths (``queries/_nvtx_paths.sql``): the held ranges of
    ``queries/_nvtx_held_names.sql`` (nvtx_held_text, :func:`_held_text`, is dropped once
    they are read) with their stacks (':1:3:4') and paths ('a / b / c') made from the roots
    down, a level of parent links per step; as the SQL recursion did, a path under a range
    without a name is NULL, and a name-less range below one adds ''."""
    import polars as pl

    from . import _resources, nvtx_sweep

    con = trace.db
    held = con.execute(_resources.query("_nvtx_held_names")).pl()
    # every column of the held ranges' events, read only for their names: freed before the
    # paths are made (2M held ranges of the 10M-range export)
    kind = "VIEW" if _built(trace, "nvtx_held_text", "views") else "TABLE"
    con.execute(f"DROP {kind} nvtx_held_text")
    # each level carries its ranges' names and styles and is copied into nvtx_paths once the
    # next is made from it: a join of every level with the held ranges at the end held them
    # all twice (the 10M-range fixture's 2M held ranges: the run's peak)
    level = held.filter(pl.col("parent_id").is_null()).select(
        "range_id",
        "name",
        "style",
        pl.concat_str(pl.lit(":"), pl.col("range_id").cast(pl.String)).alias("stack"),
        pl.col("name").alias("path"),
    )
    below = held.filter(pl.col("parent_id").is_not_null()).select(
        "range_id", "parent_id", "name", "style"
    )
    del held
    query = "_nvtx_paths"  # creates the table; later levels are added to it
    while True:
        nvtx_sweep.register(con, "nvtx_path_rows", level)
        con.execute(_resources.query(query))
        con.unregister("nvtx_path_rows")
        query = "_nvtx_paths_more"
        if not (level.height and below.height):
            break
        above = level.select(
            pl.col("range_id").alias("parent_id"),
            pl.col("stack").alias("above_stack"),
            pl.col("path").alias("above_path"),
        )
        del level
        level = below.join(above, on="parent_id", how="inner").select(
            "range_id",
            "name",
            "style",
            pl.concat_str("above_stack", pl.lit(":"), pl.col("range_id").cast(pl.String)).alias(
                "stack"
            ),
            pl.concat_str("above_path", pl.lit(" / "), pl.col("name").fill_null("")).alias("path"),
        )
        del above


def build_projection(trace: Trace, *, keep_tree: bool = True) -> None:
    """Build the temp tables the GPU-projection queries read, once per trace: those of
    :func:`build_sweep` (``keep_tree``: its), nvtx_held_totals (:mod:`tracelens.nvtx_held`)
    and the view nvtx_projection (per range)."""
    build_sweep(trace, keep_tree=keep_tree)
    if _built(trace, "nvtx_projection", "views"):
        return
    from . import _resources, nvtx_held

    nvtx_held.register_totals(trace.db)
    trace.db.execute(_resources.query("_nvtx_projection"))


def _projection(trace: Trace, keep_tree: bool = True) -> None:
    """The view nvtx_projection: over the rows an earlier run of a cached trace kept
    (:mod:`tracelens.nvtx_kept`), else made by :func:`build_projection` (``keep_tree``:
    its), and then kept."""
    from . import nvtx_kept

    if _built(trace, "nvtx_projection", "views") or nvtx_kept.read(trace):
        return
    build_projection(trace, keep_tree=keep_tree)
    nvtx_kept.write(trace)


def require_projection(trace: Trace) -> None:
    require_nvtx(trace)
    if RUNTIME_TABLE not in trace.tables:
        raise MissingDataError(
            trace.path,
            "no CUDA API data, so no NVTX range can be projected onto the GPU: "
            "was it captured with -t cuda,nvtx?",
        )
    trace.check_kernel_columns()  # else the projection would silently lose every kernel


def gpu_projection(trace: Trace, *, keep_tree: bool = True) -> pl.DataFrame:
    """One row per NVTX range that launched GPU work, projected onto the GPU (``nsys stats``
    nvtx_gpu_proj_trace): name, proj_start_ns, proj_duration_ns, start_ns, duration_ns,
    style, pid, tid, gpu_ops, level, children, range_id, parent_id, stack, path.
    ``keep_tree`` False: the ranges' tree is freed once the held ranges are found
    (:func:`release_tree`), for a caller that reads nothing else of the sweep."""
    require_projection(trace)
    _projection(trace, keep_tree)
    return trace.query("nvtx_gpu_projection")


def gpu_summary(trace: Trace, *, group: str = "name", keep_tree: bool = True) -> pl.DataFrame:
    """GPU time per range group (``nsys stats`` nvtx_gpu_proj_sum): the projections of the
    ranges summed per ``group`` ('name', 'path' or 'torch'). Columns: time_pct,
    proj_total_ns, range_total_ns, instances, proj_avg_ns, proj_med_ns, proj_min_ns,
    proj_max_ns, proj_stddev_ns, gpu_ops, avg_gpu_ops, avg_level, avg_children, style,
    range. ``keep_tree``: as :func:`gpu_projection`'s."""
    check_group(group)
    require_projection(trace)
    _projection(trace, keep_tree)
    return trace.query("nvtx_gpu_projection_summary", group_by=group)


def kernels_by_range(
    trace: Trace, *, group: str = "name", name: str = "demangled", top: int | None = None
):
    """Kernels per range group (``nsys stats`` nvtx_kern_sum): a kernel counts in every
    range that holds its launch. Columns: range, style, pid, tid, ranges, kernels,
    total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns, name. ``top``: only the first
    rows (None: all)."""
    check_group(group)
    if name not in KERNEL_NAME_KINDS:
        raise UsageError(
            f"unknown {{param}} {name!r}; use one of: {', '.join(KERNEL_NAME_KINDS)}",
            param="name",
        )
    require_projection(trace)
    trace.require_kernels()
    build_sweep(trace, with_ops=True)
    from . import nvtx_kernels

    return nvtx_kernels.summary(trace, group=group, name=name, top=top)


def op_paths(trace: Trace) -> pl.DataFrame:
    """Every GPU operation with the NVTX ranges that hold its launch: kind ('kernel',
    'memcpy', 'memset', 'graph'), globalPid, correlationId, device, start, end, range_id
    (innermost range, null outside every range), path (range names from the top down,
    joined by ' / '; null outside every range). An export without NVTX or CUDA API data
    gives every operation a null path."""
    if NVTX_TABLE not in trace.tables or RUNTIME_TABLE not in trace.tables:
        return trace.query("nvtx_op_paths_none")
    build_sweep(trace, with_ops=True)
    return trace.query("nvtx_op_paths")


@dataclass(frozen=True)
class NvtxReport(Result):
    """What ``tracelens nvtx`` (or ``api``, the ``command``) shows: ``frame`` (every
    column), ``what`` it is (the title after 'nvtx of FILE: '), the columns a terminal
    table keeps (None: all) and ``rows``, how many the report has where ``frame`` holds
    only the first of them (None: frame holds every row)."""

    frame: pl.DataFrame
    what: str
    table_columns: tuple[str, ...] | None = None
    command: str = "nvtx"
    rows: int | None = None

    def tables(self) -> dict[str, pl.DataFrame]:
        """ranges: the NVTX summary rows."""
        return {"ranges": self.frame}

    def _summary(self) -> str:
        return self.what


def nvtx_report(
    trace: Trace,
    *,
    style: str | None = None,
    gpu: bool = False,
    each: bool = False,
    kernels: bool = False,
    group: str = "name",
    top: int | None = None,
) -> NvtxReport:
    """Range CPU times (default; ``style`` narrows to push/pop or start/end ranges), GPU
    time per range group (``gpu``), one row per projected range (``gpu`` and ``each``) or
    kernels per range group (``kernels``; with ``top``, the frame holds the first ``top``
    rows only, and ``rows`` says how many there are). The GPU projections free the ranges'
    tree once it has served (``keep_tree`` of :func:`gpu_summary`)."""
    check_group(group)
    top = check_at_least("top", top, 0, meaning="every row")
    if each and not gpu:
        raise UsageError(EACH_NEEDS_GPU.format(each="each", gpu="gpu"))
    if kernels:
        frame = kernels_by_range(trace, group=group, top=top or None)
        rows = trace.db.execute("SELECT count(*) FROM nvtx_kernel_stats").fetchone()[0]
        return NvtxReport(frame, f"kernels by NVTX range {group}", rows=rows)
    if gpu and each:
        what = "each NVTX range projected onto the GPU"
        return NvtxReport(gpu_projection(trace, keep_tree=False), what, TABLE_COLUMNS["each"])
    if gpu:
        what = f"GPU time by NVTX range {group}"
        summary = gpu_summary(trace, group=group, keep_tree=False)
        return NvtxReport(summary, what, TABLE_COLUMNS["gpu"])
    if group != "name":
        raise UsageError(GROUP_NEEDS_GPU.format(group="group", gpu="gpu", kernels="kernels"))
    return NvtxReport(range_summary(trace, style=style), "CPU time by NVTX range")


def replays_note(trace: Trace, *, gpu: bool = False, kernels: bool = False) -> str | None:
    """What the CUDA graph replays traced at graph level do to the report (None when the
    trace has none, or for range CPU times): ``kernels`` lists kernels, so the replays are
    left out (:meth:`Trace.graph_note`); ``gpu``'s projection counts each replay as one
    GPU operation of the ranges that launched it, where nsys's nvtx_gpu_proj leaves them
    out (its numbers then differ)."""
    if kernels:
        return trace.graph_note()
    if not gpu:
        return None
    replays, _total_ns = trace.graph_replays()
    if not replays:
        return None
    one = replays == 1
    return (
        f"{replays:,} CUDA graph {'replay' if one else 'replays'} traced at graph level "
        f"{'is' if one else 'are'} in these numbers as one GPU operation each, not broken "
        "down by kernel (nsys's nvtx_gpu_proj leaves graph replays out)"
    )


# The columns of the reports that hold range (and kernel) names, and a path's separator.
NAME_COLUMNS = ("range", "name")
PATH_SEPARATOR = " / "


def shown_name(text: str) -> str:
    """A range name (or path) as a table or Markdown shows it: quoted as stakeout quotes
    names (:func:`tracelens.stakeout.quoted`) when it, or a name of the path, starts or
    ends with a space, where a table cell would lose the space and ``'a '`` look like
    ``'a'``; else as it is."""
    from .stakeout import quoted

    if any(part != part.strip() for part in text.split(PATH_SEPARATOR)):
        return quoted(text)
    return text


def _names_shown(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its names (:data:`NAME_COLUMNS`) as :func:`shown_name` shows them;
    only the columns holding such a name are rewritten (a million rows are the norm)."""
    import polars as pl

    for column in NAME_COLUMNS:
        if frame.schema.get(column) != pl.String:
            continue
        parts = pl.col(column).str.split(PATH_SEPARATOR)
        edged = parts.list.eval(pl.element() != pl.element().str.strip_chars()).list.any()
        if frame.select(edged.any()).item():
            frame = frame.with_columns(
                pl.col(column).map_elements(shown_name, return_dtype=pl.String)
            )
    return frame


def render(
    report: NvtxReport,
    *,
    fmt: str,
    source: str,
    timeunit: str = "ns",
    top: int | None = None,
    width: int = 160,
    color: bool = False,
) -> str:
    """The text of ``tracelens nvtx`` (or ``api``): title, the first ``top`` rows, caption
    (``width`` and ``color``: see :func:`tracelens.render.table`)."""
    from . import render as r

    df = report.frame
    shown = df.head(top) if top else df
    if fmt == "table" and report.table_columns:
        shown = shown.select(report.table_columns)
    if fmt in ("table", "markdown"):  # CSV and JSON keep the names exact
        shown = _names_shown(shown)
    rows = df.height if report.rows is None else report.rows
    from .views import plural

    caption = f"{shown.height:,} of {plural(rows, 'row')}" if top else plural(rows, "row")
    title = f"{report.command} of {source}: {report.what}"
    return r.frame(
        shown, fmt=fmt, timeunit=timeunit, title=title, caption=caption, width=width, color=color
    )
