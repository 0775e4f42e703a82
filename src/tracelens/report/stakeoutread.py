"""The stakeout's kernel profiles on an export read directly, without DuckDB scanning its
kernel table: the spread and histogram from the GPU work the page already read
(``queries/report_stakeout_durations.sql``), the launch configurations aggregated by SQLite
itself (``queries/report_stakeout_configs_export.sql``, checked here for what nsys never
writes). DuckDB's scanner converts every launch's columns before its join keeps the top
kernels; on the 5M-kernel trace the one read of ``queries/stakeout_profiles.sql`` cost ~2.9
CPU s, these two ~1.8 (~1.4 of it SQLite's aggregate), which runs on a thread of its own
(:mod:`.aside`) from when the page knows its top kernels (:func:`start_configs`). On a
cached trace that read is cheap (~0.3 CPU s) and stays."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import _schema
from ..trace import list_param
from .stakeoutview import CONFIG_COLUMNS, HISTOGRAM_COLUMNS, SPREAD_COLUMNS

if TYPE_CHECKING:
    from concurrent.futures import Future

    import polars as pl
    import pyarrow as pa

    from ..stakeout import KernelProfiles
    from ..trace import Trace
    from .aside import Aside

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
# what report_stakeout_configs_export.sql reads of the kernel table
CONFIG_READS = ("start", "end", "demangledName", "shortName", "gridX", "gridY", "gridZ",
                "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
                "dynamicSharedMemory")  # fmt: skip
# report_stakeout_configs_export.sql's columns
_EXPORT_COLUMNS = ("name_id", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                   "registers", "static_shared", "dynamic_shared", "launches", "total_ns",
                   "first_start", "last_end", "last_start", "timed")  # fmt: skip


@dataclass
class PendingConfigs:
    """SQLite's aggregate of the launch configurations of ``names``, started by
    :func:`start_configs`: the StringIds ids of the names and the future of its rows."""

    names: tuple[str, ...]
    ids: pl.DataFrame
    rows: Future[list[tuple]]


def start_configs(
    trace: Trace, names: list[str], name_kind: str, aside: Aside
) -> PendingConfigs | None:
    """Start, on ``aside``'s thread, the aggregate of the launch configurations that
    :func:`direct_profiles` of ``names`` reads; None where it reads none (see there)."""
    if not names or not _direct(trace, name_kind):
        return None
    ids = trace.query("report_name_ids", names=list_param(names))
    rows = aside.submit(*_configs_query(ids, name_kind))
    return PendingConfigs(tuple(names), ids, rows)


def _direct(trace: Trace, name_kind: str) -> bool:
    from .sharedread import SHARED_NAME_KINDS, reads_export

    return name_kind in SHARED_NAME_KINDS and reads_export(trace, KERNEL_TABLE, CONFIG_READS)


def _configs_query(ids: pl.DataFrame, name_kind: str) -> tuple[str, dict[str, str]]:
    from .. import _resources

    params = {"name_ids": json.dumps(ids["id"].to_list()), "name_kind": name_kind}
    return _resources.query("report_stakeout_configs_export"), params


def direct_profiles(
    trace: Trace,
    names: list[str],
    name_kind: str,
    work: pa.Table,
    per_octave: int,
    pending: PendingConfigs | None = None,
) -> KernelProfiles | None:
    """:func:`tracelens.stakeout.kernel_profiles` of ``names`` (demangled or short), the
    same rows, from ``work`` (:func:`.sharedread.for_duckdb`'s table) and SQLite; None
    where the trace is not an export read directly (a cache entry, a parquetdir), lacks a
    column, or holds what nsys never writes: read the views then. ``pending``: the
    configurations' aggregate, started (:func:`start_configs`; of other names: not used)."""
    from ..stakeout import KernelProfiles

    if not _direct(trace, name_kind):
        return None
    if pending is not None and pending.names == tuple(names):
        ids = pending.ids
        configs = _export_configs(ids, pending.rows.result())
    else:
        ids = trace.query("report_name_ids", names=list_param(names))
        rows = trace._sqlite_rows(*_configs_query(ids, name_kind))
        configs = _export_configs(ids, rows)
    if configs is None:
        return None
    durations = _durations(trace, names, name_kind, _launches_of(work, ids, name_kind), per_octave)
    return KernelProfiles(
        names=tuple(names),
        per_octave=per_octave,
        spread=part(durations, "spread", SPREAD_COLUMNS),
        histogram=part(durations, "histogram", HISTOGRAM_COLUMNS),
        configs=configs,
    )


def part(rows: pl.DataFrame, name: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The rows of one part of a query that returns several (its ``part`` column)."""
    import polars as pl

    return rows.filter(pl.col("part") == name).select(columns)


def _launches_of(work: pa.Table, ids: pl.DataFrame, name_kind: str) -> pa.Table:
    """The kernels of ``work`` whose name (``name_kind``'s id) is one of ``ids``
    (report_name_ids.sql's rows): the launches report_stakeout_durations.sql keeps, picked
    out before it scans them. Its two parts each scanned and joined every operation (on
    the 5M-kernel trace ~0.1 CPU s more than picking its top kernels' ~0.5M launches out
    first). Its sums and quantiles are of the same launches; the last bits of a spread's
    cv (a floating-point aggregate) vary from run to run either way."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = work["short_id" if name_kind == "short" else "name_id"]
    wanted = pa.array(ids["id"].to_list(), column.type)
    return work.filter(pc.and_(pc.equal(work["kind"], 0), pc.is_in(column, value_set=wanted)))


def _durations(
    trace: Trace, names: list[str], name_kind: str, work: pa.Table, per_octave: int
) -> pl.DataFrame:
    from ..activity import registered_work

    with registered_work(trace, work) as source:
        return trace.query(
            "report_stakeout_durations",
            work=source,
            names=list_param(names),
            name_kind=name_kind,
            per_octave=per_octave,
        )


def _export_configs(ids: pl.DataFrame, rows: list[tuple]) -> pl.DataFrame | None:
    """stakeout_configs.sql's rows of the names of ``ids`` (report_name_ids.sql's rows) from
    ``rows``, SQLite's aggregate by name id (report_stakeout_configs_export.sql); None when
    a row holds what nsys never writes."""
    import polars as pl

    if not all(_as_nsys_writes(row) for row in rows):
        return None
    frame = pl.DataFrame(rows, schema=dict.fromkeys(_EXPORT_COLUMNS, pl.Int64), orient="row")

    def size(*axes: str) -> pl.Expr:
        x, y, z = (pl.col(a).cast(pl.String) for a in axes)
        return pl.concat_str([x, y, z], separator="×")

    total = pl.col("total_ns").sum()
    shared = pl.col("static_shared").fill_null(0) + pl.col("dynamic_shared").fill_null(0)
    return (
        frame.with_columns(shared_bytes=shared)
        .join(ids.select(pl.col("id").alias("name_id"), "name"), on="name_id")
        .group_by(
            "name",
            size("gridX", "gridY", "gridZ").alias("grid"),
            size("blockX", "blockY", "blockZ").alias("block"),
            "registers",
            "shared_bytes",
        )
        .agg(launches=pl.col("launches").sum(), total_ns=total)
        .with_columns(avg_ns=pl.col("total_ns").cast(pl.Float64) / pl.col("launches"))
        .sort(
            "name",
            "launches",
            "total_ns",
            "grid",
            "block",
            descending=[False, True, True, False, False],
            nulls_last=True,
        )  # fmt: skip
        .select(CONFIG_COLUMNS)
    )


def _as_nsys_writes(row: tuple) -> bool:
    """Whether a row of report_stakeout_configs_export.sql holds only what nsys writes
    (its header says how each kind of damage shows): integers or NULL where grouped,
    integer times within the range tracelens reads, every launch timed."""
    *grouped, launches, total, first, last, last_start, timed = row
    if not all(v is None or type(v) is int for v in grouped):
        return False
    if timed != launches or not all(type(v) is int for v in (total, first, last, last_start)):
        return False
    limit = _schema.TIME_LIMIT_NS
    return -limit <= first and last <= limit
