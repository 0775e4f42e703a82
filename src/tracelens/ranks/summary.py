"""The map step: one rank's trace -> a small :class:`RankSummary` of Arrow tables.

A summary is what the driver keeps of a trace (a few kB to a few MB: one row per step and
per collective call, one per distinct kernel), so thousands of ranks fit in one process
while the traces themselves are read by workers, one at a time each.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .. import _resources
from ..errors import TracelensError
from .processes import SetAside, split_ranks

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..trace import Trace


@dataclass(frozen=True)
class RankSummary:
    """What one rank's trace says, in the trace's own clock (ns from its session start).

    ``overview`` has one row (see :data:`OVERVIEW_COLUMNS`); ``steps`` one per step (step,
    start_ns, end_ns, duration_ns, kernels, kernel_ns, warmup); ``collectives`` one per
    collective kernel (comm, seq, kind, start_ns, end_ns: see
    ``queries/ranks_collectives.sql``); ``kernels`` one per distinct kernel (name,
    instances, total_ns).
    """

    path: str
    overview: pa.Table
    steps: pa.Table
    collectives: pa.Table
    kernels: pa.Table
    # The numerical-path fingerprint (tracelens.fingerprint) as byte-stable JSON, devices
    # renumbered 0.. so that ranks on different GPUs compare; None when it failed.
    fingerprint: str | None = None

    # The DuckDB settings the worker's connection ran with ({"threads": 2, "memory_limit":
    # "3.7 GiB"}, as DuckDB reports them): what --worker-threads/--worker-memory became.
    duckdb_settings: dict[str, object] | None = None

    # The processes whose work the export holds (those with a CUDA context, else those that
    # ran kernels), () when unknown: a file name numbered by one of them is numbered by
    # process id (nsys -o report_%p), not by rank (see ranks._gaps_said).
    pids: tuple[int, ...] = ()

    @property
    def recorded_rank(self) -> int | None:
        """The rank the export records (:mod:`.recorded`), or None."""
        return self.overview.column("recorded_rank")[0].as_py()

    @property
    def recorded_rank_source(self) -> str | None:
        return self.overview.column("recorded_rank_source")[0].as_py()

    @property
    def nbytes(self) -> int:
        """Size of the summary in memory (its tables and the fingerprint text), bytes."""
        tables = (self.overview, self.steps, self.collectives, self.kernels)
        return sum(t.nbytes for t in tables) + len(self.fingerprint or "")


@dataclass(frozen=True)
class SharedExport:
    """One export holding several processes' kernels (a single-node job profiled as one
    report: ``nsys profile torchrun --nproc-per-node N``): one summary per process that is
    a rank, in the order of the lowest GPU each ran its collectives on (else its kernels),
    and the processes that ran kernels but are not ranks (:mod:`.processes`)."""

    path: str
    ranks: tuple[RankSummary, ...]
    set_aside: tuple[SetAside, ...] = ()


@dataclass(frozen=True)
class RankFailure:
    """A rank file that could not be summarised, and why (one line)."""

    path: str
    reason: str
    exit_code: int = 2  # what the error would exit with alone (3: no CUDA data)


#: The overview's columns: (name, meaning). Times in ns; GPU figures summed over devices.
OVERVIEW_COLUMNS = (
    ("recorded_rank", "the rank the export records (MPI_RANKS, NCCL, environment), else null"),
    ("pid", "the process whose work this is, when the export holds several ranks' processes"),
    ("recorded_rank_source", "where the export records it (see ranks.recorded), else null"),
    ("session_start_utc_ns", "the session start, ns since the epoch (null when unrecorded)"),
    ("devices", "CUDA devices with work"),
    ("gpu", "name of the first GPU"),
    ("span_ns", "first to last GPU operation"),
    ("busy_ns", "time any GPU work ran, summed over devices"),
    ("idle_ns", "span x devices - busy"),
    ("compute_ns", "time any kernel other than communication ran"),
    ("communication_ns", "time any communication kernel ran"),
    ("exposed_communication_ns", "communication with nothing else running"),
    ("kernels", "kernel launches"),
    ("distinct_kernels", "distinct kernel names"),
    ("top_kernel", "the kernel with the most GPU time (short name)"),
    ("top_kernel_ns", "its GPU time"),
    ("danger_high", "distinct kernels with a high-level determinism risk"),
    ("danger_kernels", "distinct kernels with any determinism risk"),
    ("steps", "steps found"),
    ("step_method", "how the steps were found"),
    ("steady_step_ns", "median duration of the steps after warm-up"),
    ("path_digest", "sha256 of the numerical-path fingerprint (devices renumbered)"),
)


TEXT_COLUMNS = frozenset(
    {"recorded_rank_source", "gpu", "top_kernel", "step_method", "path_digest"}
)


def summarise(
    path: str | os.PathLike[str], *, threads: int | None = None, memory_limit: int | None = None
) -> RankSummary:
    """Open one rank's export and summarise it (raises TracelensError on bad input).

    ``threads`` and ``memory_limit`` (bytes) cap every DuckDB connection the trace opens,
    the one that builds its columnar cache on first use included (None: DuckDB's defaults,
    every core and 80% of RAM), so that several workers on one machine share it instead of
    each taking all of it.
    """
    summary = summarise_export(path, threads=threads, memory_limit=memory_limit, split=False)
    assert isinstance(summary, RankSummary)
    return summary


def summarise_export(
    path: str | os.PathLike[str],
    *,
    threads: int | None = None,
    memory_limit: int | None = None,
    split: bool = True,
) -> RankSummary | SharedExport:
    """:func:`summarise`; with ``split``, an export whose kernels come from several
    processes is a :class:`SharedExport` of one summary per process that is a rank, as
    ``steps`` numbers the steps of each process apart, and the processes set aside
    (:func:`.processes.split_ranks`)."""
    from .._engine import limits
    from ..trace import open as open_trace

    with limits(threads=threads, memory_limit=memory_limit), open_trace(path) as trace:
        trace.require_kernels()
        row = trace.db.execute(
            "SELECT current_setting('threads'), current_setting('memory_limit')"
        ).fetchone()
        settings = {"threads": row[0], "memory_limit": row[1]}
        load_comm_kernels(trace)
        processes = trace.query("ranks_processes") if split and _may_share(trace) else None
        pids = _context_pids(trace)
        if not pids and processes is not None:
            pids = tuple(processes["pid"].to_list())
        if processes is None or processes.height < 2:
            return replace(_summarise(trace), duckdb_settings=settings, pids=pids)
        ranks, set_aside = split_ranks(str(trace.path), processes)
        sole = ranks.height == 1
        summaries = tuple(
            replace(_summarise(trace, pid, device, sole=sole), duckdb_settings=settings, pids=pids)
            for pid, device in ranks.select("pid", "rank_device").iter_rows()
        )
        return SharedExport(str(trace.path), summaries, set_aside)


#: The export tables with one row per CUDA context (newest first), and the query that
#: counts the processes they list.
_CONTEXT_PROCESSES = (
    ("TARGET_INFO_CUDA_CONTEXT_INFO", "ranks_context_processes"),
    ("TARGET_INFO_CUDA_NULL_STREAM", "ranks_null_stream_processes"),
)


#: The same tables, and the query that lists the processes they hold.
_CONTEXT_PIDS = (
    ("TARGET_INFO_CUDA_CONTEXT_INFO", "ranks_context_pids"),
    ("TARGET_INFO_CUDA_NULL_STREAM", "ranks_null_stream_pids"),
)


def _context_pids(trace: Trace) -> tuple[int, ...]:
    """The processes the export's context table lists (a small metadata table: no kernel
    is read); () without one or with an empty one (a synthetic trace)."""
    for table, name in _CONTEXT_PIDS:
        if trace.has_table(table):
            rows = trace._sqlite_rows(_resources.query(name))
            if rows:
                # a damaged page can hold text: such a row names no process
                return tuple(pid for (pid,) in rows if isinstance(pid, int))
    return ()


def _may_share(trace: Trace) -> bool:
    """Whether the export may hold several processes' kernels: False when its context table
    lists one process (a process launches only where it has a context), so that the usual
    one-rank export is not read for its kernels' processes; True without a table or with
    an empty one (a synthetic trace)."""
    for table, name in _CONTEXT_PROCESSES:
        if trace.has_table(table):
            rows = trace._sqlite_rows(_resources.query(name))
            if rows and rows[0][0]:
                return rows[0][0] > 1
    return True


def summarise_or_failure(
    path: str, *, threads: int | None = None, memory_limit: int | None = None
) -> RankSummary | SharedExport | RankFailure:
    """:func:`summarise_export`, with a failure record instead of an exception (what the
    workers run: one bad file must not stop the others)."""
    try:
        return summarise_export(path, threads=threads, memory_limit=memory_limit)
    except TracelensError as exc:
        return RankFailure(path, getattr(exc, "problem", None) or str(exc), exc.exit_code)
    except OSError as exc:
        return RankFailure(path, f"cannot be read ({exc.strerror or exc})")


def _summarise(
    trace: Trace, pid: int | None = None, device: int | None = None, *, sole: bool = False
) -> RankSummary:
    """The summary of the whole trace, or (``pid``) of one process's work in it, whose
    GPU is ``device`` (that of its collectives); ``load_comm_kernels`` has run. One process
    of several has no recorded rank (the export records the job's, see :mod:`.recorded`),
    unless it is the export's ``sole`` rank (the others were set aside: the export is that
    rank's), and no path fingerprint (the fingerprint covers the whole export)."""
    import pyarrow as pa

    from ..danger import danger_table
    from ..kernelnames import base_name
    from .recorded import recorded_rank

    kernels = trace.census(pid=pid)
    # One sweep for the GPU-time figures, not trace.util(): util also attributes every idle
    # gap to a cause, which on the 5M-kernel bench trace did not finish in 400 s (loaded
    # machine) where this takes 28 s (docs/scale.md). Same classification (work_params).
    time = trace.query("ranks_gpu_time", pid=pid).to_dicts()[0]
    danger = danger_table(kernels)
    steps, method = _steps(trace, pid)
    steady = steps.filter(~steps["warmup"]) if steps.height else steps
    gpus = trace.gpus()
    if device is not None:
        gpus = [g for g in gpus if device in (g.cuda_device, g.id)][:1] or gpus
    span, devices = time["span_ns"] or 0, time["devices"]
    recorded, source = recorded_rank(trace) if pid is None or sole else (None, None)
    overview = {
        "recorded_rank": recorded,
        "recorded_rank_source": source,
        "pid": pid,
        "session_start_utc_ns": trace.session_start_utc_ns(),
        "devices": devices,
        "gpu": gpus[0].name if gpus else None,
        "span_ns": span,
        "busy_ns": time["busy_ns"],
        "idle_ns": max(span * devices - time["busy_ns"], 0),
        "compute_ns": time["compute_ns"],
        "communication_ns": time["communication_ns"],
        "exposed_communication_ns": time["exposed_communication_ns"],
        "kernels": time["kernels"],
        "distinct_kernels": kernels.height,
        # census orders by total time: the first row is the top kernel
        "top_kernel": base_name(kernels["name"][0]) if kernels.height else None,
        "top_kernel_ns": int(kernels["total_ns"][0]) if kernels.height else None,
        "danger_high": danger.filter(danger["level"] == "high")["name"].n_unique(),
        "danger_kernels": danger["name"].n_unique(),
        "steps": steps.height,
        "step_method": method,
        "steady_step_ns": int(steady["duration_ns"].median()) if steady.height else None,
    }
    doc = _path_fingerprint(trace) if pid is None else None
    overview["path_digest"] = hashlib.sha256(doc.encode()).hexdigest() if doc else None
    schema = pa.schema(
        [
            (name, pa.string() if name in TEXT_COLUMNS else pa.int64())
            for name, _ in OVERVIEW_COLUMNS
        ]
    )
    return RankSummary(
        path=str(trace.path),
        overview=pa.Table.from_pylist([overview], schema=schema),
        steps=steps.to_arrow(),
        collectives=_slim_collectives(trace.query("ranks_collectives", pid=pid)),
        kernels=kernels.select("name", "instances", "total_ns").to_arrow(),
        fingerprint=doc,
    )


def _path_fingerprint(trace: Trace) -> str | None:
    """The trace's fingerprint JSON with its devices renumbered 0, 1, ... in order (rank 3
    on GPU 3 runs the same path as rank 0 on GPU 0) and its generator line without the
    version (the digest names the path, not the tracelens that wrote it; the line stays, as a
    fingerprint document requires it)."""
    from .. import fingerprint

    doc = fingerprint(trace)
    number = {d: i for i, d in enumerate(doc["devices"])}
    doc["devices"] = list(range(len(number)))
    for entry in doc["paths"]:
        entry["device"] = number[entry["device"]]
    doc["generator"] = "tracelens"
    return fingerprint.dumps(doc)


def _slim_collectives(calls) -> pa.Table:
    """The collective calls as the driver keeps them: 22 bytes a call (there can be
    hundreds of thousands per rank), the collective's name as a dictionary."""
    import polars as pl

    return calls.select(
        pl.col("comm").cast(pl.Int16),
        pl.col("seq").cast(pl.Int32),
        pl.col("kind").cast(pl.Categorical),
        pl.col("start_ns", "end_ns").cast(pl.Int64),
    ).to_arrow()


def stack_ranks(summaries, table: str, schema: dict) -> pl.DataFrame:
    """Every rank's rows of one summary table (``table``: ``steps``, ``collectives``) as one
    frame: the rank first, then the columns of ``schema`` (name -> polars type, ``rank``
    included) cast to it; empty, with that schema, when no rank has any."""
    import polars as pl

    columns = [c for c in schema if c != "rank"]
    parts = [
        pl.from_arrow(getattr(s, table))
        .select(pl.lit(rank, pl.Int64).alias("rank"), *columns)
        .cast(schema)
        for rank, s in summaries
        if getattr(s, table).num_rows
    ]
    return pl.concat(parts) if parts else pl.DataFrame(schema=schema)


def load_comm_kernels(trace: Trace) -> None:
    """Fill the temp table ``rank_comm_kernels(name_id, kind)`` that ranks_collectives and
    ranks_gpu_time join:
    the kernels ``trace.util()`` calls communication, with the collective each runs (one
    classification for both: ``util.work_params``)."""
    import pyarrow as pa

    from ..util import work_params

    params = work_params(trace, None)
    comm = [
        (name_id, kind)
        for name_id, work, kind in zip(
            params["name_ids"], params["work_classes"], params["collectives"], strict=True
        )
        if work == "communication"
    ]
    table = pa.table(
        {
            "name_id": pa.array([i for i, _ in comm], pa.int64()),
            "kind": pa.array([k for _, k in comm], pa.string()),
        }
    )
    con = trace.db
    con.register("_rank_comm_kernels", table)
    con.execute(_resources.query("_ranks_comm_kernels"))
    con.unregister("_rank_comm_kernels")


def _steps(trace: Trace, pid: int | None = None):
    """The trace's steps (``trace.steps()``; of process ``pid`` alone when given), one row
    per step over all devices: step, start_ns, end_ns, duration_ns, kernels, kernel_ns,
    warmup; and how they were found."""
    import polars as pl

    found = trace.steps(pid=pid)
    if not found.frame.height:
        return _no_steps(), found.method
    frame = (
        found.frame.group_by("step")
        .agg(
            pl.col("start_ns").min(),
            pl.col("end_ns").max(),
            pl.col("kernels").sum(),
            pl.col("kernel_ns").sum(),
            pl.col("warmup").any(),
        )
        .with_columns(duration_ns=pl.col("end_ns") - pl.col("start_ns"))
        .select("step", "start_ns", "end_ns", "duration_ns", "kernels", "kernel_ns", "warmup")
        .sort("step")
    )
    return frame.cast({c: pl.Int64 for c in frame.columns if c != "warmup"}), found.method


def _no_steps():
    import polars as pl

    return pl.DataFrame(
        schema={
            "step": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64, "duration_ns": pl.Int64,
            "kernels": pl.Int64, "kernel_ns": pl.Int64, "warmup": pl.Boolean,
        }
    )  # fmt: skip
