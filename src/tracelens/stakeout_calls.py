"""The CUDA API call that launched each listed launch of a stakeout (its thread, name, span
and the queue time it gives), read after ``--limit`` for the launches shown only: on a
SQLite export read directly, SQLite itself keeps the calls of their correlation ids
(``queries/stakeout_call_rows_export.sql``), so the runtime table of millions of calls is
not handed to DuckDB whole; elsewhere the ``runtime_calls`` view is read
(``queries/stakeout_call_rows.sql``). Either way ``queries/stakeout_calls.sql`` picks one
call per launch from the same candidates."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import _schema

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
CALL_COLUMNS = ("start", "end", "eventClass", "globalTid", "correlationId", "nameId")
# Above this many correlation ids the view is read instead: SQLite's rows come to Python as
# objects (6 per call), which a stakeout of millions of launches should not hold.
SQLITE_IDS_MAX = 200_000
# The launches table's columns once the call's are in (queries/stakeout_launches.sql's, with
# queue_ns, tid, api and the call's span, which only serves to find its NVTX range).
LAUNCH_COLUMNS = (
    "start_ns", "duration_ns", "queue_ns", "name", "grid_x", "grid_y", "grid_z", "block_x",
    "block_y", "block_z", "registers", "static_smem_bytes", "dynamic_smem_bytes", "device",
    "stream", "pid", "tid", "correlation_id", "api", "api_global_tid", "api_start", "api_end",
)  # fmt: skip


def with_calls(trace: Trace, launches: pl.DataFrame, origin_ns: int) -> pl.DataFrame:
    """``launches`` (queries/stakeout_launches.sql's rows, start_ns after ``origin_ns``)
    with the columns of the call that launched each (NULL where none was traced): queue_ns
    (kernel start - call end, ns), tid, api, api_global_tid, api_start, api_end."""
    import polars as pl

    keys = ["pid", "correlation_id"]
    probes = launches.select(keys).drop_nulls().unique(maintain_order=True)
    calls = _launching_calls(trace, probes)
    return (
        launches.join(calls, on=keys, how="left", maintain_order="left")
        .with_columns(
            (pl.col("start_ns") + origin_ns - pl.col("api_end")).alias("queue_ns"),
        )
        .select(LAUNCH_COLUMNS)
    )


def _launching_calls(trace: Trace, probes: pl.DataFrame) -> pl.DataFrame:
    """queries/stakeout_calls.sql's rows for ``probes`` (pid, correlation_id)."""
    con = trace.db
    rows = _export_call_rows(trace, probes["correlation_id"].to_list())
    if rows is None:
        _temp_table(con, "stakeout_probes", probes)
        try:
            rows = trace.query("stakeout_call_rows")
        finally:
            con.execute("DROP TABLE stakeout_probes")
    _temp_table(con, "stakeout_call_rows", rows)
    try:
        return trace.query("stakeout_calls")
    finally:
        con.execute("DROP TABLE stakeout_call_rows")


def _export_call_rows(trace: Trace, correlation_ids: list[int]) -> pl.DataFrame | None:
    """The runtime calls with these correlation ids, selected by SQLite from the export (the
    columns of queries/stakeout_call_rows.sql); None where the view must be read instead: not
    a SQLite export read directly, a runtime table without those columns, too many ids, or a
    row that holds what nsys never writes (the view then says what is wrong)."""
    import polars as pl

    direct = trace._sqlite is not None and trace.parquet_dir is None
    cached = trace._lazy is not None and not trace._lazy.off
    present = trace.tables.get(RUNTIME_TABLE, ())
    if not direct or cached or not set(CALL_COLUMNS) <= set(present):
        return None
    if len(correlation_ids) > SQLITE_IDS_MAX:
        return None
    schema = dict.fromkeys(CALL_COLUMNS, pl.Int64)
    if not correlation_ids:  # nothing to look for: no scan
        return pl.DataFrame(schema=schema)
    from . import _resources
    from .trace.parts import sqlite_rows_parts

    found = sqlite_rows_parts(
        trace,
        RUNTIME_TABLE,
        _resources.query("stakeout_call_rows_export"),
        {"correlation_ids": json.dumps(correlation_ids)},
    )
    limit = _schema.TIME_LIMIT_NS
    for row in found:
        if not all(v is None or type(v) is int for v in row):
            return None
        start, end = row[0], row[1]
        if (
            start is None
            or end is None
            or not (-limit <= start <= limit and -limit <= end <= limit)
        ):
            return None
    return pl.DataFrame(found, schema=schema, orient="row")


def _temp_table(con, name: str, frame: pl.DataFrame) -> None:
    """``frame`` as the temp table ``name`` (a table, not a registered view: the planner
    needs its row count)."""
    con.register(f"_{name}", frame.to_arrow())
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM _{name}")
    finally:
        con.unregister(f"_{name}")
