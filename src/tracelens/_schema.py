"""The normalized views tracelens queries run against.

NVIDIA's schema "can and will change": columns are added mid-table and tables are created
lazily (absent when nothing was captured). Each view below has a fixed set of columns; a
column the file lacks is NULL, and a table the file lacks becomes an empty view. Queries in
``queries/`` therefore never need to know which nsys version wrote the file.
"""

from __future__ import annotations

import re

# The columns every GPU activity row starts with (kernels, copies, memsets, graph replays,
# synchronizations).
_GPU_ACTIVITY: tuple[tuple[str, str], ...] = (
    ("start", "BIGINT"),
    ("end", "BIGINT"),
    ("deviceId", "BIGINT"),
    ("contextId", "BIGINT"),
    ("streamId", "BIGINT"),
    ("correlationId", "BIGINT"),
    ("globalPid", "BIGINT"),
)

# view name -> (source table, ((column, DuckDB type), ...)); columns are read by name.
VIEWS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "kernels": (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        (
            *_GPU_ACTIVITY,
            ("demangledName", "BIGINT"),
            ("shortName", "BIGINT"),
            ("mangledName", "BIGINT"),
            ("launchType", "BIGINT"),
            ("registersPerThread", "BIGINT"),
            ("gridX", "BIGINT"),
            ("gridY", "BIGINT"),
            ("gridZ", "BIGINT"),
            ("blockX", "BIGINT"),
            ("blockY", "BIGINT"),
            ("blockZ", "BIGINT"),
            ("staticSharedMemory", "BIGINT"),
            ("dynamicSharedMemory", "BIGINT"),
            ("localMemoryPerThread", "BIGINT"),
            ("graphNodeId", "BIGINT"),
            ("graphId", "BIGINT"),
        ),
    ),
    "memcpys": (
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        (
            *_GPU_ACTIVITY,
            ("bytes", "BIGINT"),
            ("copyKind", "BIGINT"),
            ("srcKind", "BIGINT"),
            ("dstKind", "BIGINT"),
            ("srcDeviceId", "BIGINT"),
            ("dstDeviceId", "BIGINT"),
            ("graphNodeId", "BIGINT"),
        ),
    ),
    "memsets": (
        "CUPTI_ACTIVITY_KIND_MEMSET",
        (
            *_GPU_ACTIVITY,
            ("value", "BIGINT"),
            ("bytes", "BIGINT"),
            ("memKind", "BIGINT"),
            ("graphNodeId", "BIGINT"),
        ),
    ),
    # CUDA graph replays traced at graph level (nsys's default --cuda-graph-trace=graph):
    # one row per graph launch executed, and the kernels, memcpys and memsets of that
    # replay are in none of the views above.
    "graph_replays": (
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        (
            *_GPU_ACTIVITY,
            ("graphId", "BIGINT"),
            ("graphExecId", "BIGINT"),
        ),
    ),
    "runtime_calls": (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        (
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("eventClass", "BIGINT"),
            ("globalTid", "BIGINT"),
            ("correlationId", "BIGINT"),
            ("nameId", "BIGINT"),
            ("returnValue", "BIGINT"),
        ),
    ),
    # OS runtime library calls nsys traced with -t osrt (poll, pthread_cond_wait, ioctl...):
    # eventClass 27 is a call; 31 and 32 mark where that tracing started and finished.
    "osrt_calls": (
        "OSRT_API",
        (
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("eventClass", "BIGINT"),
            ("globalTid", "BIGINT"),
            ("nameId", "BIGINT"),
        ),
    ),
    "nvtx_events": (
        # The free-text `text` column is deliberately not here: the profiled program may
        # write bytes that are not UTF-8, which DuckDB's scanner rejects. Labels are
        # resolved through the `nvtx_text` table the loader builds instead.
        "NVTX_EVENTS",
        (
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("eventType", "BIGINT"),
            ("rangeId", "BIGINT"),
            ("category", "BIGINT"),
            ("color", "BIGINT"),
            ("globalTid", "BIGINT"),
            ("endGlobalTid", "BIGINT"),
            ("textId", "BIGINT"),
            ("domainId", "BIGINT"),
        ),
    ),
    # Time the profiler itself took (buffer flushes...), which nsys counts as GPU busy time
    # in its GPU utilization rules (findings parity with `nsys analyze`).
    "profiler_overhead": (
        "PROFILER_OVERHEAD",
        (
            ("start", "BIGINT"),
            ("end", "BIGINT"),
            ("globalTid", "BIGINT"),
            ("nameId", "BIGINT"),
        ),
    ),
    "syncs": (
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        (
            *_GPU_ACTIVITY,
            ("syncType", "BIGINT"),
        ),
    ),
}

# nsys table -> (view name, columns)
VIEWS_BY_TABLE = {table: (view, cols) for view, (table, cols) in VIEWS.items()}

# Views whose start and end nsys always writes (NOT NULL in every schema): a NULL there, or a
# time so far out that subtracting two of them overflows 64 bits, can only be damage. The
# guarded views raise one message naming the table and column instead (see
# _sqlite.explain_scan_error); +-2^61 ns is 73 years either side of the session start.
GUARDED_VIEWS = frozenset(
    {"kernels", "memcpys", "memsets", "graph_replays", "runtime_calls", "syncs"}
)
GUARDED_COLUMNS = ("start", "end")
TIME_LIMIT_NS = 2**61
DAMAGE_MARK = "tracelens-damage: "

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def pid_of(global_id: int) -> int:
    """The operating-system pid in a globalPid/globalTid (bits 24-47), as the SQL macro
    ``pid_of`` of ``queries/_shared.sql`` decodes it, for rows read in Python."""
    return (global_id >> 24) & 0xFFFFFF


def tid_of(global_tid: int) -> int:
    """The operating-system tid in a globalTid (bits 0-23), as the SQL macro ``tid_of``."""
    return global_tid & 0xFFFFFF


def _quote(identifier: str) -> str:
    # Only identifiers from VIEWS (our own constants) reach here; refuse anything else.
    if not _IDENT.match(identifier):
        raise ValueError(f"not a plain identifier: {identifier!r}")
    return '"' + identifier + '"'


def source_sql(table: str, source: str = "sqlite", row_numbers: bool = False) -> str:
    """The table expression that reads nsys table ``table``: from the SQLite export
    (``sqlite``: DuckDB's scanner on ``getvariable('trace_path')``) or from a directory with
    one ``<table>.parquet`` per table (``parquet``: an ``nsys export --type parquetdir``
    directory or a cache entry, ``getvariable('parquet_dir')``; ``row_numbers`` adds the
    column ``file_row_number``, each row's position in the file from 0) or from rows of
    ``table`` that SQLite itself selected, held in the temporary table ``export_rows``
    (``rows``)."""
    if source == "rows":
        return "export_rows"
    if source == "parquet":
        numbers = ", file_row_number = true" if row_numbers else ""
        return (
            f"read_parquet(getvariable('parquet_dir') || '/{_quote(table)[1:-1]}.parquet'{numbers})"
        )
    return f"sqlite_scan(getvariable('trace_path'), '{_quote(table)[1:-1]}')"


def _guarded(table: str, name: str, sqltype: str) -> str:
    col, where = _quote(name), f"{table}.{name}"
    return (
        f"CASE WHEN {col} IS NULL THEN error('{DAMAGE_MARK}{where} is NULL in a row (nsys "
        f"always writes it)') WHEN {col} NOT BETWEEN -{TIME_LIMIT_NS} AND {TIME_LIMIT_NS} THEN "
        f"error('{DAMAGE_MARK}{where} holds a time beyond 2^61 ns (73 years) from the "
        f"session start') ELSE CAST({col} AS {sqltype}) END AS {col}"
    )


def view_sql(
    view: str, present_columns: tuple[str, ...] | None, source: str = "sqlite", guard: bool = True
) -> str:
    """``CREATE OR REPLACE VIEW`` for ``view``; ``present_columns`` is None when the table
    is absent; ``source`` as :func:`source_sql`. ``guard``: check start/end of
    :data:`GUARDED_VIEWS` row by row (off for cache entries, which were checked when built and
    keep their Parquet min/max statistics usable for time filters that way).

    The file path is never part of the text: it is bound once with ``SET VARIABLE
    trace_path`` (or ``parquet_dir``) and read by ``getvariable``.
    """
    select = view_select(view, present_columns, source, guard)
    return f"CREATE OR REPLACE VIEW {_quote(view)} AS {select}"


def view_select(
    view: str, present_columns: tuple[str, ...] | None, source: str = "sqlite", guard: bool = True
) -> str:
    """The SELECT of :func:`view_sql`: ``view``'s columns, typed, from ``source``."""
    table, columns = VIEWS[view]
    present = set(present_columns or ())
    select = []
    for name, sqltype in columns:
        if name in present and guard and view in GUARDED_VIEWS and name in GUARDED_COLUMNS:
            select.append(_guarded(table, name, sqltype))
        elif name in present:
            select.append(f"CAST({_quote(name)} AS {sqltype}) AS {_quote(name)}")
        else:
            select.append(f"CAST(NULL AS {sqltype}) AS {_quote(name)}")
    if present_columns is None:
        return f"SELECT {', '.join(select)} WHERE false"
    return f"SELECT {', '.join(select)} FROM {source_sql(table, source)}"
