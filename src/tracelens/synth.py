"""Write SQLite files shaped like ``nsys export --type sqlite`` output, for tests and demos.

The tables are created from the real nsys DDL vendored in ``tracelens/ddl/`` (one file per
export schema version, the ``CREATE`` statements exactly as found in real exports). As nsys
does, a table is created only when it receives rows, except for the tables nsys always
writes (``StringIds``, the metadata tables, the session start time and the ``ENUM_*``
tables of schema 3.0.0 and newer). Rows are given by column *name*; a field the chosen
schema does not have (``mangledName`` before 2.9.1, ``greenContextId`` before 3.13, ...)
is silently left out, while a name that no vendored schema knows is an error (a typo).

    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(4242, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=6_000)
    b.kernel("void add<float>(float *, int)", start=9_000, end=12_500, correlation_id=cid)
    b.write("tiny.sqlite")

Output is deterministic: the same calls give a byte-identical file with the same SQLite
library (rows are written in call order, in one transaction, and nothing reads the clock).

Where a schema's vendored DDL lacks an event table (the 2.9.1 and 3.0.0 files were captured
without memsets or NVTX), the definition is borrowed from the nearest vendored schema that
has it: the same version's ``_full`` DDL first, then the nearest older version, then the
nearest newer one. ``TraceBuilder.borrowed`` records which tables were borrowed from where.
Metadata tables (``TARGET_INFO_GPU``, ``PROCESSES``, ...) are never borrowed: a schema whose
DDL lacks them simply gets none, which real files show too.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from . import _resources

__all__ = [
    "COPY_KINDS",
    "DEFAULT_SCHEMA",
    "MEM_KINDS",
    "SCHEMAS",
    "TableDef",
    "TraceBuilder",
    "ddl_path",
    "global_pid",
    "global_tid",
    "kernel_short_name",
    "table_defs",
]

DDL_DIR = Path(__file__).resolve().parent / "ddl"

# Export schema versions with a vendored DDL, oldest first. "none-2020.5" is an export made
# before nsys wrote a schema version (nsys 2020.5/2021.3: no metadata table at all).
SCHEMAS: tuple[str, ...] = (
    "none-2020.5",
    "2.9.1",
    "3.0.0",
    "3.4.0",
    "3.13.2",
    "3.23.3",
    "3.24.18",
    "3.25.0",
)
DEFAULT_SCHEMA = "3.25.0"

# nsys version written as EXPORT_PRODUCT_VERSION. Those marked "seen" are copied from the
# real exports in shared/traces; the others are plausible builds of the right release.
PRODUCT_VERSIONS: dict[str, str] = {
    "2.9.1": "2022.2.1.31",  # seen
    "3.0.0": "2022.4.2.1",  # seen
    "3.4.0": "2023.3.3.42",  # seen
    "3.13.2": "2024.5.1.113",
    "3.23.3": "2025.5.1.121",  # seen
    "3.24.18": "2026.1.1.204",  # seen (with schema 3.24.14)
    "3.25.0": "2026.2.1.210",
}

# copyKind (ENUM_CUDA_MEMCPY_OPER): short names accepted by TraceBuilder.memcpy, from the
# one copy-kind vocabulary ('[CUDA memcpy HtoD]' -> "HtoD", '[CUDA Unified Memory memcpy
# HtoD]' -> "UVM_HtoD").
COPY_KINDS: dict[str, int] = {
    label.removeprefix("[CUDA ")
    .removesuffix("]")
    .replace("Unified Memory memcpy ", "UVM_")
    .removeprefix("memcpy "): kind
    for kind, label in _resources.copy_kind_labels().items()
}

# memory kind (ENUM_CUDA_MEM_KIND)
MEM_KINDS: dict[str, int] = {
    "pageable": 0,
    "pinned": 1,
    "device": 2,
    "array": 3,
    "managed": 4,
    "device_static": 5,
    "managed_static": 6,
    "unknown": 7,
}

# (src, dst) memory kinds nsys reports for a plain cudaMemcpy of each copy kind.
_DEFAULT_MEM_KINDS = {1: (0, 2), 2: (2, 0), 8: (2, 2), 9: (0, 0), 10: (2, 2)}

# ENUM_* contents, copied from real exports (nsys 2022.4 and 2026.1 agree on these rows).
_ENUMS: dict[str, tuple[tuple[int, str, str], ...]] = {
    "ENUM_CUDA_MEMCPY_OPER": (
        (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"),
        (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
        (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
        (3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"),
        (4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"),
        (5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"),
        (6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"),
        (7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"),
        (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"),
        (9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"),
        (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"),
        (11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"),
        (12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"),
        (13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"),
    ),
    "ENUM_CUDA_MEM_KIND": (
        (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
        (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
        (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
        (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
        (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
        (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
        (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"),
        (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"),
    ),
    # 3.0.0 spells this table ENUM_CUDA_KRENEL_LAUNCH_TYPE; the rows go to whichever exists.
    "ENUM_CUDA_KERNEL_LAUNCH_TYPE": (
        (0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"),
        (1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"),
        (2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
        (3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"),
    ),
    "ENUM_CUDA_FUNC_CACHE_CONFIG": (
        (0, "CU_FUNC_CACHE_PREFER_NONE", "None"),
        (1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"),
        (2, "CU_FUNC_CACHE_PREFER_L1", "L1"),
        (3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"),
    ),
    "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG": (
        (0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"),
        (1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"),
    ),
    "ENUM_CUPTI_SYNC_TYPE": (
        (0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
        (1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"),
        (2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"),
        (3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"),
        (4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"),
    ),
    # Only the first rows of the real table (ids 0-13 are identical 2022.4 -> 2026.1).
    "ENUM_NSYS_EVENT_CLASS": (
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
        (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (2, "TRACE_PROCESS_EVENT_GL", "GL"),
        (3, "TRACE_PROCESS_EVENT_TSP_OVERHEAD", "TSP overhead"),
        (4, "TRACE_PROCESS_EVENT_GL_DEBUG", "GL debug"),
        (5, "TRACE_PROCESS_EVENT_GL_WORKLOAD", "GL workload"),
        (6, "TRACE_PROCESS_EVENT_NVTX_START", "NVTX start"),
        (7, "TRACE_PROCESS_EVENT_NVTX_FINISH", "NVTX finish"),
        (8, "TRACE_PROCESS_EVENT_GL_START", "GL start"),
        (9, "TRACE_PROCESS_EVENT_GL_FINISH", "GL finish"),
        (10, "TRACE_PROCESS_EVENT_CUDA_START", "CUDA start"),
        (11, "TRACE_PROCESS_EVENT_CUDA_FINISH", "CUDA finish"),
        (12, "TRACE_PROCESS_EVENT_CUDA_INIT_ERROR", "CUDA init error"),
        (13, "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER", "CUDA EGL driver"),
    ),
    # Only the NVTX rows of the real table (134 rows in 2022.4).
    "ENUM_NSYS_EVENT_TYPE": (
        (34, "NvtxMark", "NvtxMark"),
        (59, "NvtxPushPopRange", "NvtxPushPopRange"),
        (60, "NvtxStartEndRange", "NvtxStartEndRange"),
        (70, "NvtxtPushPopRange", "NvtxtPushPopRange"),
        (71, "NvtxtStartEndRange", "NvtxtStartEndRange"),
        (75, "NvtxDomainCreate", "NvtxDomainCreate"),
    ),
}
_ENUM_ALIASES = {"ENUM_CUDA_KERNEL_LAUNCH_TYPE": ("ENUM_CUDA_KRENEL_LAUNCH_TYPE",)}

# Tables that receive events: these may be borrowed from another schema's DDL.
_EVENT_TABLES = frozenset(
    {
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "NVTX_EVENTS",
    }
)

# The order tables are created in (roughly nsys's own); others follow alphabetically.
_FIRST = (
    "StringIds",
    "TARGET_INFO_SYSTEM_ENV",
    "TARGET_INFO_SESSION_START_TIME",
    "ANALYSIS_DETAILS",
    "PROCESSES",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
)
_LAST = (
    "ThreadNames",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_GPU",
)
_META_TABLES = ("EXPORT_META_DATA", "META_DATA_CAPTURE", "META_DATA_EXPORT")

DEFAULT_SESSION_START_UTC_NS = 1_735_732_800_000_000_000  # 2025-01-01T12:00:00Z
SYNTHETIC_MARKER = ("TRACELENS_SYNTHETIC", "tracelens.synth")


# -- ids ---------------------------------------------------------------------------------
def global_pid(pid: int, *, vm_id: int = 1, hw_id: int = 0) -> int:
    """nsys's serialized process id: bits 24-47 PID, 48-55 VM id, 56-63 hardware id.

    Real exports carry VM id 1 (``globalPid >> 48 == 1``), hence the default.
    """
    for what, value, bits in (("pid", pid, 24), ("vm_id", vm_id, 8), ("hw_id", hw_id, 8)):
        if not 0 <= value < (1 << bits):
            raise ValueError(f"{what} {value} does not fit in {bits} bits")
    return (hw_id << 56) | (vm_id << 48) | (pid << 24)


def global_tid(pid: int, tid: int, *, vm_id: int = 1, hw_id: int = 0) -> int:
    """nsys's serialized thread id: :func:`global_pid` with the TID in bits 0-23."""
    if not 0 <= tid < (1 << 24):
        raise ValueError(f"tid {tid} does not fit in 24 bits")
    return global_pid(pid, vm_id=vm_id, hw_id=hw_id) | tid


# -- kernel names ------------------------------------------------------------------------
@lru_cache(maxsize=8192)
def kernel_short_name(demangled: str) -> str:
    """nsys's ``shortName`` for a demangled kernel name: the function's base name.

    ``void at::native::vectorized_elementwise_kernel<4, ...>(int, T2, T3)`` ->
    ``vectorized_elementwise_kernel``; plain C names (``nvjet_...``) come back unchanged.
    """
    # Cut at the top-level '(' that opens the parameter list.
    stack: list[str] = []
    end = len(demangled)
    for i, ch in enumerate(demangled):
        if ch in "<([":
            # The parameter list follows the name (`(anonymous namespace)` does not).
            if (
                ch == "("
                and not stack
                and i > 0
                and (demangled[i - 1].isalnum() or demangled[i - 1] in "_>]")
            ):
                end = i
                break
            stack.append(ch)
        elif ch == ">":
            if stack and stack[-1] == "<":
                stack.pop()
        elif ch in ")]":
            opener = "(" if ch == ")" else "["
            while stack and stack.pop() != opener:
                pass
    head = demangled[:end].rstrip()
    # Drop trailing template arguments.
    if head.endswith(">"):
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            if head[i] == ">":
                depth += 1
            elif head[i] == "<":
                depth -= 1
                if depth == 0:
                    head = head[:i]
                    break
    # Last top-level space separates the return type; last '::' the namespaces.
    depth = 0
    cut = 0
    for i, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            cut = i + 1
    head = head[cut:]
    return head.rsplit("::", 1)[-1] or demangled


# -- DDL ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableDef:
    """One ``CREATE TABLE`` from a vendored DDL file."""

    name: str
    sql: str  # the statement verbatim (as nsys writes it into sqlite_master)
    columns: tuple[str, ...]
    types: tuple[str, ...]  # declared type, upper case ("INTEGER", "TEXT", "REAL")
    notnull: tuple[bool, ...]
    source: str  # the DDL file it came from


def ddl_path(schema: str, *, full: bool = False) -> Path:
    """The vendored DDL file of an export schema version."""
    _check_schema(schema)
    return DDL_DIR / f"nsys_export_schema_{schema}{'_full' if full else ''}.sql"


def _check_schema(schema: str) -> None:
    if schema not in SCHEMAS:
        raise ValueError(
            f"unknown nsys export schema {schema!r}; choose one of: {', '.join(SCHEMAS)}"
        )


def _statements(text: str) -> list[str]:
    out, buf = [], ""
    for line in text.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue  # comments between statements are not part of any statement
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip().rstrip(";").rstrip())
            buf = ""
    return out


_CREATE_TABLE = re.compile(r'^CREATE\s+TABLE\s+"?(\w+)"?', re.IGNORECASE)
_CREATE_INDEX = re.compile(
    r'^CREATE\s+(?:UNIQUE\s+)?INDEX\s+.*?\bON\s+"?(\w+)"?', re.IGNORECASE | re.S
)


@cache
def _parse_ddl(path: Path) -> tuple[dict[str, TableDef], tuple[tuple[str, str], ...]]:
    """Tables of one DDL file, and its CREATE INDEX statements as (table, sql)."""
    scratch = sqlite3.connect(":memory:")
    tables: dict[str, TableDef] = {}
    indexes: list[tuple[str, str]] = []
    for stmt in _statements(path.read_text(encoding="utf-8")):
        if m := _CREATE_TABLE.match(stmt):
            name = m.group(1)
            scratch.execute(stmt)
            info = scratch.execute(f'SELECT name, type, "notnull" FROM pragma_table_info("{name}")')
            cols = info.fetchall()
            tables[name] = TableDef(
                name=name,
                sql=stmt,
                columns=tuple(c[0] for c in cols),
                types=tuple((c[1] or "").upper() for c in cols),
                notnull=tuple(bool(c[2]) for c in cols),
                source=path.name,
            )
        elif m := _CREATE_INDEX.match(stmt):
            indexes.append((m.group(1), stmt))
    scratch.close()
    return tables, tuple(indexes)


def table_defs(schema: str) -> dict[str, TableDef]:
    """The tables the vendored DDL of ``schema`` defines (a real, lazily written export)."""
    tables, _ = _parse_ddl(ddl_path(schema))
    return dict(tables)


def _version_key(schema: str) -> tuple[int, ...]:
    if schema.startswith("none"):
        return (0,)
    return tuple(int(p) for p in schema.split("."))


@cache
def _known_columns(table: str) -> frozenset[str]:
    """Every column ``table`` has in any vendored schema (to catch misspelled fields)."""
    cols: set[str] = set()
    for path in sorted(DDL_DIR.glob("nsys_export_schema_*.sql")):
        tdef = _parse_ddl(path)[0].get(table)
        if tdef is not None:
            cols.update(tdef.columns)
    return frozenset(cols)


@cache
def _resolve_table(schema: str, table: str, borrow: bool) -> TableDef | None:
    own = _parse_ddl(ddl_path(schema))[0].get(table)
    if own is not None:
        return own
    full = ddl_path(schema, full=True)
    if full.exists() and table in _parse_ddl(full)[0]:
        return _parse_ddl(full)[0][table]
    if not borrow:
        return None
    key = _version_key(schema)
    candidates = []
    for other in SCHEMAS:
        if other == schema:
            continue
        for path in (ddl_path(other), ddl_path(other, full=True)):
            if path.exists() and table in _parse_ddl(path)[0]:
                okey = _version_key(other)
                # nearest older first (its columns are a subset), then nearest newer
                rank = (0, tuple(-k for k in okey)) if okey < key else (1, okey)
                candidates.append((rank, _parse_ddl(path)[0][table]))
                break
    return min(candidates, key=lambda c: c[0])[1] if candidates else None


def _utc_text(ns: int) -> str:
    t = _dt.datetime.fromtimestamp(ns // 1_000_000_000, tz=_dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


# -- the builder -------------------------------------------------------------------------
class TraceBuilder:
    """Collects rows, then :meth:`write` creates the export.

    Every ``start``/``end`` is integer nanoseconds from session start. ``pid`` defaults to
    the first process registered with :meth:`process`; ``tid`` to the pid (main thread).
    Text may be ``bytes`` to store bytes that are not UTF-8 in a TEXT column, as real
    profiled programs do (bound as ``CAST(? AS TEXT)``: the column holds TEXT, not a BLOB).
    """

    def __init__(
        self,
        schema: str = DEFAULT_SCHEMA,
        *,
        vm_id: int = 1,
        product_version: str | None = None,
        session_start_utc_ns: int = DEFAULT_SESSION_START_UTC_NS,
    ) -> None:
        _check_schema(schema)
        self.schema = schema
        self.vm_id = vm_id
        self.product_version = product_version or PRODUCT_VERSIONS.get(schema)
        self.session_start_utc_ns = session_start_utc_ns
        self.default_pid: int | None = None
        self._strings: dict[bytes, int] = {}
        self._string_values: list[str | bytes] = []
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._extra_metadata: list[tuple[str, str | bytes]] = []
        self._next_correlation = 1
        self._next_grid = 1
        self.borrowed: dict[str, str] = {}  # table -> DDL file its definition came from
        self._accepts: dict[str, frozenset[str]] = {}
        self._gpids: dict[int, int] = {}

    # -- schema ------------------------------------------------------------------------
    def table_def(self, table: str, *, borrow: bool | None = None) -> TableDef | None:
        """Definition used for ``table`` (None: this schema cannot hold it)."""
        if borrow is None:
            borrow = table in _EVENT_TABLES
        return _resolve_table(self.schema, table, borrow)

    def has_table(self, table: str) -> bool:
        return self.table_def(table) is not None

    # -- generic rows ------------------------------------------------------------------
    def add_row(self, table: str, /, **values: Any) -> None:
        """Append one row to ``table``; keys are column names.

        Columns this schema lacks are dropped; a key no vendored schema has for the table
        raises ValueError. Raises ValueError when the schema cannot hold the table at all.
        """
        self.add_rows(table, (values,))

    def add_rows(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        known = self._accepting(table)
        bucket = self._rows.setdefault(table, [])
        for row in rows:
            if not known.issuperset(row):
                unknown = ", ".join(sorted(set(row) - known))
                raise ValueError(f"{table} has no column {unknown} in any schema")
            bucket.append(dict(row))

    def _accepting(self, table: str) -> frozenset[str]:
        """Columns ``table`` accepts (any schema's); raises if this schema cannot hold it."""
        known = self._accepts.get(table)
        if known is None:
            tdef = self.table_def(table)
            if tdef is None:
                raise ValueError(
                    f"export schema {self.schema} has no table {table} (and none to borrow)"
                )
            if tdef.source != ddl_path(self.schema).name:
                self.borrowed[table] = tdef.source
            known = self._accepts[table] = _known_columns(table)
        return known

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows given so far for ``table`` (copies; all fields as passed)."""
        return [dict(r) for r in self._rows.get(table, ())]

    def count(self, table: str) -> int:
        return len(self._rows.get(table, ()))

    # -- strings, processes, threads ---------------------------------------------------
    def string(self, text: str | bytes) -> int:
        """The StringIds id of ``text``, interned (ids are given from 0 in call order)."""
        key = _as_bytes(text)
        sid = self._strings.get(key)
        if sid is None:
            sid = self._strings[key] = len(self._string_values)
            self._string_values.append(text)
        return sid

    def process(self, pid: int, name: str | bytes) -> int:
        """Register a process (PROCESSES row); returns its globalPid."""
        gpid = global_pid(pid, vm_id=self.vm_id)
        if self.has_table("PROCESSES"):
            self.add_row("PROCESSES", globalPid=gpid, pid=pid, name=name)
        if self.default_pid is None:
            self.default_pid = pid
        return gpid

    def thread(
        self,
        name: str | bytes,
        *,
        pid: int | None = None,
        tid: int | None = None,
        priority: int = 20,
    ) -> int:
        """Name a thread (ThreadNames row); returns its globalTid."""
        pid = self._pid(pid)
        gtid = global_tid(pid, pid if tid is None else tid, vm_id=self.vm_id)
        self.add_row("ThreadNames", nameId=self.string(name), priority=priority, globalTid=gtid)
        return gtid

    def _pid(self, pid: int | None) -> int:
        if pid is not None:
            return pid
        if self.default_pid is None:
            raise ValueError("pass pid= or register a process with TraceBuilder.process() first")
        return self.default_pid

    def _gpid(self, pid: int | None) -> int:
        pid = self._pid(pid)
        gpid = self._gpids.get(pid)
        if gpid is None:
            gpid = self._gpids[pid] = global_pid(pid, vm_id=self.vm_id)
        return gpid

    def _gtid(self, pid: int | None, tid: int | None) -> int:
        gpid = self._gpid(pid)
        tid = self._pid(pid) if tid is None else tid  # a process's main thread: tid = pid
        if not 0 <= tid < (1 << 24):
            raise ValueError(f"tid {tid} does not fit in 24 bits")
        return gpid | tid

    def correlation_id(self) -> int:
        """A new correlation id (what CUPTI gives each API call)."""
        cid = self._next_correlation
        self._next_correlation += 1
        return cid

    @staticmethod
    def _check_span(start: int, end: int | None) -> None:
        if end is not None and end < start:
            raise ValueError(f"event ends before it starts (start={start}, end={end})")

    # -- hardware ----------------------------------------------------------------------
    def gpu(
        self,
        id: int = 0,  # noqa: A002 - the column's name
        name: str = "NVIDIA H100 80GB HBM3",
        *,
        sm_count: int = 132,
        total_memory: int = 85_520_809_984,
        compute_capability: tuple[int, int] = (9, 0),
        bus_location: str = "0000:18:00.0",
        chip_name: str = "GH100",
        uuid: str | None = None,
        clock_rate: int = 1_980_000_000,
        l2_cache_size: int = 52_428_800,
        memory_bandwidth: int = 3_352_320_000_000,
        cuda_device: int | None = None,
        **extra: Any,
    ) -> bool:
        """Describe a GPU in TARGET_INFO_GPU (and TARGET_INFO_CUDA_GPU in 2020.5 exports).

        Returns False when this schema's DDL has no such table (nothing is written).
        """
        major, minor = compute_capability
        uuid = uuid or f"00000000-0000-4000-8000-{id:012x}"
        common = {
            "name": name,
            "bus_location": bus_location,
            "l2_cache_size": l2_cache_size,
            "total_memory": total_memory,
            "memory_bandwidth": memory_bandwidth,
            "clock_rate": clock_rate,
            "sm_count": sm_count,
            "major": major,
            "minor": minor,
        }
        written = False
        if self.has_table("TARGET_INFO_GPU"):
            row = _gpu_row(
                self.vm_id, id, uuid=uuid, chip_name=chip_name, cuda_device=cuda_device, **common
            )
            row.update(extra)
            self.add_row("TARGET_INFO_GPU", **row)
            written = True
        if self.has_table("TARGET_INFO_CUDA_GPU"):  # nsys <= 2021
            self.add_row("TARGET_INFO_CUDA_GPU", **_cuda_gpu_row(self.vm_id, id, **common))
            written = True
        return written

    def system_env(self, name: str | bytes, value: str | bytes, *, enum: int = 0) -> None:
        """A TARGET_INFO_SYSTEM_ENV row (real files hold bytes that are not UTF-8 here)."""
        self.add_row(
            "TARGET_INFO_SYSTEM_ENV",
            globalVid=self.vm_id << 48,
            devStateName="Local",
            name=name,
            nameEnum=enum,
            value=value,
        )

    def metadata(self, name: str, value: str | bytes) -> None:
        """An extra row for the export metadata table (after the standard ones)."""
        self._extra_metadata.append((name, value))

    # -- events ------------------------------------------------------------------------
    def kernel(
        self,
        name: str | bytes,
        *,
        start: int,
        end: int,
        short_name: str | bytes | None = None,
        mangled_name: str | bytes | None = None,
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        grid: tuple[int, int, int] = (1, 1, 1),
        block: tuple[int, int, int] = (128, 1, 1),
        registers: int = 32,
        static_shared: int = 0,
        dynamic_shared: int = 0,
        local_per_thread: int = 0,
        local_total: int = 0,
        shared_executed: int | None = None,
        launch_type: int = 1,
        cache_config: int = 1,
        graph_node_id: int | None = None,
        graph_id: int | None = None,
        **extra: Any,
    ) -> int:
        """A CUDA kernel (demangled ``name``); returns its correlationId.

        ``short_name`` defaults to :func:`kernel_short_name` of ``name``; ``mangled_name`` None
        stores NULL (nsys does for some kernels). Pass the correlationId of the API call
        that launched it (see :meth:`runtime`), or get a fresh one.
        """
        self._check_span(start, end)
        if short_name is None:
            if isinstance(name, str):
                short_name = kernel_short_name(name)
            else:
                text = bytes(name).decode("utf-8", "surrogateescape")
                short_name = kernel_short_name(text).encode("utf-8", "surrogateescape")
        cid = self.correlation_id() if correlation_id is None else correlation_id
        grid_id = self._next_grid
        self._next_grid += 1
        if shared_executed is None:
            used = static_shared + dynamic_shared
            shared_executed = 0 if used == 0 else min(1 << max(used - 1, 1).bit_length(), 233472)
        row = {
            "start": start,
            "end": end,
            "deviceId": device,
            "contextId": context,
            "streamId": stream,
            "correlationId": cid,
            "globalPid": self._gpid(pid),
            "demangledName": self.string(name),
            "shortName": self.string(short_name),
            "mangledName": None if mangled_name is None else self.string(mangled_name),
            "launchType": launch_type,
            "cacheConfig": cache_config,
            "registersPerThread": registers,
            "gridX": grid[0],
            "gridY": grid[1],
            "gridZ": grid[2],
            "blockX": block[0],
            "blockY": block[1],
            "blockZ": block[2],
            "staticSharedMemory": static_shared,
            "dynamicSharedMemory": dynamic_shared,
            "localMemoryPerThread": local_per_thread,
            "localMemoryTotal": local_total,
            "gridId": grid_id,
            "sharedMemoryExecuted": shared_executed,
            "graphNodeId": graph_node_id,
            "sharedMemoryLimitConfig": 0,
            "graphId": graph_id,
        }
        row.update(extra)
        self.add_row("CUPTI_ACTIVITY_KIND_KERNEL", **row)
        return cid

    def memcpy(
        self,
        kind: str | int,
        bytes: int,  # noqa: A002 - the column's name
        *,
        start: int,
        end: int,
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        src_kind: str | int | None = None,
        dst_kind: str | int | None = None,
        src_device: int | None = None,
        dst_device: int | None = None,
        **extra: Any,
    ) -> int:
        """A memory copy; ``kind`` is a :data:`COPY_KINDS` name (``"HtoD"``) or number."""
        self._check_span(start, end)
        copy_kind = COPY_KINDS[kind] if isinstance(kind, str) else int(kind)
        dsrc, ddst = _DEFAULT_MEM_KINDS.get(copy_kind, (7, 7))
        src = dsrc if src_kind is None else _mem_kind(src_kind)
        dst = ddst if dst_kind is None else _mem_kind(dst_kind)
        cid = self.correlation_id() if correlation_id is None else correlation_id
        row = {
            "start": start,
            "end": end,
            "deviceId": device,
            "contextId": context,
            "streamId": stream,
            "correlationId": cid,
            "globalPid": self._gpid(pid),
            "bytes": bytes,
            "copyKind": copy_kind,
            "srcKind": src,
            "dstKind": dst,
            "srcDeviceId": src_device if src_device is not None else (device if src == 2 else None),
            "dstDeviceId": dst_device if dst_device is not None else (device if dst == 2 else None),
            "copyCount": 1,
        }
        row.update(extra)
        self.add_row("CUPTI_ACTIVITY_KIND_MEMCPY", **row)
        return cid

    def memset(
        self,
        bytes: int,  # noqa: A002 - the column's name
        *,
        start: int,
        end: int,
        value: int = 0,
        mem_kind: str | int = "device",
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        **extra: Any,
    ) -> int:
        """A cudaMemset on the device; returns its correlationId."""
        self._check_span(start, end)
        cid = self.correlation_id() if correlation_id is None else correlation_id
        row = {
            "start": start,
            "end": end,
            "deviceId": device,
            "contextId": context,
            "streamId": stream,
            "correlationId": cid,
            "globalPid": self._gpid(pid),
            "value": value,
            "bytes": bytes,
            "memKind": _mem_kind(mem_kind),
        }
        row.update(extra)
        self.add_row("CUPTI_ACTIVITY_KIND_MEMSET", **row)
        return cid

    def runtime(
        self,
        name: str | bytes,
        *,
        start: int,
        end: int,
        pid: int | None = None,
        tid: int | None = None,
        correlation_id: int | None = None,
        event_class: int = 0,
        return_value: int = 0,
        **extra: Any,
    ) -> int:
        """A CUDA API call (``cudaLaunchKernel_v7000``; ``event_class`` 0 runtime, 1 driver).

        Returns its correlationId: give the same id to the kernel/memcpy/memset it launched.
        """
        self._check_span(start, end)
        cid = self.correlation_id() if correlation_id is None else correlation_id
        row = {
            "start": start,
            "end": end,
            "eventClass": event_class,
            "globalTid": self._gtid(pid, tid),
            "correlationId": cid,
            "nameId": self.string(name),
            "returnValue": return_value,
        }
        row.update(extra)
        self.add_row("CUPTI_ACTIVITY_KIND_RUNTIME", **row)
        return cid

    def nvtx_range(
        self,
        text: str | bytes,
        *,
        start: int,
        end: int,
        pid: int | None = None,
        tid: int | None = None,
        registered: bool = False,
        event_type: int = 59,
        range_id: int | None = None,
        domain_id: int | None = None,
        category: int | None = None,
        color: int | None = None,
        **extra: Any,
    ) -> None:
        """An NVTX range (59 push/pop; 60 start/end). The label goes in ``text``, or in
        StringIds via ``textId`` when ``registered`` (an nvtxStringRegister'ed string)."""
        self._check_span(start, end)
        gtid = self._gtid(pid, tid)
        row = {
            "start": start,
            "end": end,
            "eventType": event_type,
            "rangeId": range_id,
            "category": category,
            "color": color,
            "text": None if registered else text,
            "textId": self.string(text) if registered else None,
            "globalTid": gtid,
            "endGlobalTid": gtid if event_type == 60 else None,
            "domainId": domain_id,
        }
        row.update(extra)
        self.add_row("NVTX_EVENTS", **row)

    def nvtx_mark(
        self,
        text: str | bytes,
        *,
        at: int,
        pid: int | None = None,
        tid: int | None = None,
        **extra: Any,
    ) -> None:
        """An NVTX mark (eventType 34; ``end`` is NULL)."""
        row = {
            "start": at,
            "end": None,
            "eventType": 34,
            "text": text,
            "globalTid": self._gtid(pid, tid),
        }
        row.update(extra)
        self.add_row("NVTX_EVENTS", **row)

    # -- writing -----------------------------------------------------------------------
    def _span(self) -> tuple[int, int]:
        starts, ends = [], []
        for table in _EVENT_TABLES:
            for r in self._rows.get(table, ()):
                starts.append(r["start"])
                ends.append(r["end"] if r.get("end") is not None else r["start"])
        return (min(starts), max(ends)) if starts else (0, 0)

    def _metadata_rows(self, table: str) -> list[tuple[str, str | bytes]]:
        version = self.product_version or ""
        major, minor, micro = self.schema.split(".")
        rows: list[tuple[str, str | bytes]] = [
            ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
            ("EXPORT_PRODUCT_VERSION", version),
            ("EXPORT_PRODUCT_DATE", ".".join(version.split(".")[:2])),
            ("EXPORT_SCHEMA_VERSION", self.schema),
            ("EXPORT_SCHEMA_VERSION_MAJOR", major),
            ("EXPORT_SCHEMA_VERSION_MINOR", minor),
            ("EXPORT_SCHEMA_VERSION_MICRO", micro),
            ("EXPORT_PLATFORM", "linux-desktop"),
            ("EXPORT_ARCH", "x64"),
            ("EXPORT_TIME_UTC", _utc_text(self.session_start_utc_ns + 60_000_000_000)),
        ]
        if table == "EXPORT_META_DATA":  # <= 3.0.0; note the misspelled OUTUPT keys
            rows += [
                ("EXPORT_INPUT_FILE", "(removed)"),
                ("EXPORT_OUTUPT_FILE", "(removed)"),
                ("EXPORT_OVERWRITE", "true"),
                ("EXPORT_LAZY", "true"),
            ]
        else:
            out = "OUTUPT" if _version_key(self.schema) < (3, 23) else "OUTPUT"
            rows += [
                ("EXPORT_PARAM_INPUT_FILE", "(removed)"),
                (f"EXPORT_PARAM_{out}_FILE", "(removed)"),
                ("EXPORT_PARAM_OVERWRITE", "true"),
                ("EXPORT_PARAM_LAZY", "true"),
                ("EXPORT_PARAM_TIME_NORMALIZE", "false"),
                ("EXPORT_PARAM_TIME_SHIFT", "0"),
                ("EXPORT_CONFIG_TIME_SHIFT", "0"),
            ]
        return rows + [SYNTHETIC_MARKER] + self._extra_metadata

    def _implicit_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Rows of the tables nsys always writes (computed at write time)."""
        out: dict[str, list[dict[str, Any]]] = {}
        if not self.schema.startswith("none"):
            for table in ("EXPORT_META_DATA", "META_DATA_EXPORT"):
                if self.has_table(table):
                    out[table] = [{"name": k, "value": v} for k, v in self._metadata_rows(table)]
            if self.has_table("META_DATA_CAPTURE"):
                out["META_DATA_CAPTURE"] = [
                    {"name": "DEVICE_ID", "value": "Local (CLI)"},
                    {"name": "CAPTURE_EVENT_TYPE", "value": "Cuda"},
                ]
        if self.has_table("TARGET_INFO_SESSION_START_TIME"):
            text = _utc_text(self.session_start_utc_ns)
            out["TARGET_INFO_SESSION_START_TIME"] = [
                {"utcEpochNs": self.session_start_utc_ns, "utcTime": text, "localTime": text}
            ]
        if self.has_table("ANALYSIS_DETAILS"):
            first, last = self._span()
            out["ANALYSIS_DETAILS"] = [
                {
                    "globalVid": self.vm_id << 48,
                    "duration": last - first,
                    "startTime": first,
                    "stopTime": last,
                }
            ]
        for enum, values in _ENUMS.items():
            for table in (enum, *_ENUM_ALIASES.get(enum, ())):
                if self.table_def(table, borrow=False) is not None:
                    out[table] = [{"id": i, "name": n, "label": lab} for i, n, lab in values]
        return out

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the export to ``path`` (replacing it) in one transaction; returns the path.

        The schema DDL's ``CREATE INDEX`` statements run for the tables that exist (only the
        3.25.0 file has any: ``_nsysai_*`` indexes, which the nsys-ai tool had added to that
        real export).
        """
        path = Path(path)
        tables: dict[str, list[dict[str, Any]]] = {
            "StringIds": [{"id": i, "value": v} for i, v in enumerate(self._string_values)]
        }
        tables.update(self._implicit_rows())
        for table, rows in self._rows.items():
            tables.setdefault(table, []).extend(rows)
        rank = {t: i for i, t in enumerate(_FIRST)}

        def order(table: str) -> tuple[int, str]:
            if table in rank:
                return (0, f"{rank[table]:03d}")
            if table in _LAST:
                return (2, f"{_LAST.index(table):03d}")
            if table.startswith("ENUM_"):
                return (3, table)
            if table in _META_TABLES:
                return (4, table)
            return (1, table)

        tmp = path.with_name(path.name + ".synth-tmp")
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA synchronous = OFF")
            con.execute("PRAGMA cache_size = -65536")  # 64 MiB: faster index builds
            con.execute("BEGIN")
            created: set[str] = set()
            for table in sorted(tables, key=order):
                tdef = self.table_def(table, borrow=table in _EVENT_TABLES)
                assert tdef is not None, table
                con.execute(tdef.sql)
                created.add(table)
                placeholders = ", ".join(
                    "CAST(? AS TEXT)" if t == "TEXT" else "?" for t in tdef.types
                )
                cols = ", ".join(f'"{c}"' for c in tdef.columns)
                defaults = [
                    ("" if t == "TEXT" else 0) if nn else None
                    for t, nn in zip(tdef.types, tdef.notnull, strict=True)
                ]
                pairs = list(zip(tdef.columns, defaults, strict=True))
                con.executemany(
                    f'INSERT INTO "{table}" ({cols}) VALUES ({placeholders})',
                    (
                        tuple(d if (v := row.get(c)) is None else v for c, d in pairs)
                        for row in tables[table]
                    ),
                )
            # Indexes this schema's DDL defines, for the tables that exist.
            for itable, sql in _parse_ddl(ddl_path(self.schema))[1]:
                if itable in created:
                    con.execute(sql)
            con.execute("COMMIT")
        except BaseException:
            con.close()
            tmp.unlink(missing_ok=True)
            raise
        con.close()
        os.replace(tmp, path)
        return path


def _mem_kind(kind: str | int) -> int:
    return MEM_KINDS[kind] if isinstance(kind, str) else int(kind)


def _gpu_row(
    vm_id: int,
    id: int,  # noqa: A002 - the column's name
    *,
    name: str,
    bus_location: str,
    l2_cache_size: int,
    total_memory: int,
    memory_bandwidth: int,
    clock_rate: int,
    sm_count: int,
    major: int,
    minor: int,
    uuid: str,
    chip_name: str,
    cuda_device: int | None,
) -> dict[str, Any]:
    """A TARGET_INFO_GPU row (see :meth:`TraceBuilder.gpu`)."""
    return {
        "vmId": vm_id << 48,
        "id": id,
        "deviceId": id,  # the 2020.5 name of the column
        "name": name,
        "busLocation": bus_location,
        "isDiscrete": 1,
        "l2CacheSize": l2_cache_size,
        "totalMemory": total_memory,
        "memoryBandwidth": memory_bandwidth,
        "clockRate": clock_rate,
        "smCount": sm_count,
        "pwGpuId": id,
        "uuid": uuid,
        "luid": 0,
        "chipName": chip_name,
        "cuDevice": id if cuda_device is None else cuda_device,
        "computeMajor": major,
        "computeMinor": minor,
        "smMajor": major,
        "smMinor": minor,
        "threadsPerWarp": 32,
        "maxThreadsPerBlock": 1024,
        "maxRegistersPerBlock": 65536,
        "maxBlockDimX": 1024,
        "maxBlockDimY": 1024,
        "maxBlockDimZ": 64,
        "maxGridDimX": 2147483647,
        "maxGridDimY": 65535,
        "maxGridDimZ": 65535,
    }


def _cuda_gpu_row(
    vm_id: int,
    id: int,  # noqa: A002 - the column's name
    *,
    name: str,
    bus_location: str,
    l2_cache_size: int,
    total_memory: int,
    memory_bandwidth: int,
    clock_rate: int,
    sm_count: int,
    major: int,
    minor: int,
) -> dict[str, Any]:
    """A TARGET_INFO_CUDA_GPU row, the table of nsys <= 2021 (see :meth:`TraceBuilder.gpu`)."""
    return {
        "vmId": vm_id << 48,
        "name": name,
        "pciBusId": bus_location,
        "globalMemoryBandwidth": memory_bandwidth,
        "globalMemorySize": total_memory,
        "constantMemorySize": 65536,
        "l2CacheSize": l2_cache_size,
        "numThreadsPerWarp": 32,
        "coreClockRate": clock_rate,
        "numMemcpyEngines": 3,
        "numMultiprocessors": sm_count,
        "maxIPC": 4,
        "maxWarpsPerMultiprocessor": 64,
        "maxBlocksPerMultiprocessor": 32,
        "maxRegistersPerBlock": 65536,
        "maxSharedMemoryPerBlock": 49152,
        "maxThreadsPerBlock": 1024,
        "maxBlockDimX": 1024,
        "maxBlockDimY": 1024,
        "maxBlockDimZ": 64,
        "maxGridDimX": 2147483647,
        "maxGridDimY": 65535,
        "maxGridDimZ": 65535,
        "computeCapabilityMajor": major,
        "computeCapabilityMinor": minor,
        "deviceId": id,
    }
