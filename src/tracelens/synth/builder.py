"""The builder: :class:`TraceBuilder` collects rows by column name against one export
schema's tables, interns strings and hands out ids; the events, the hardware and the
writing are its methods from :mod:`.events`, :mod:`.hardware` and :mod:`.writer`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .ddl import (
    DEFAULT_SCHEMA,
    EVENT_TABLES,
    TableDef,
    check_schema,
    ddl_path,
    known_columns,
    resolve_table,
)
from .events import EventMethods
from .hardware import HardwareMethods
from .ids import global_pid, global_tid, tid_bits
from .vocab import PRODUCT_VERSIONS
from .writer import WriterMethods

DEFAULT_SESSION_START_UTC_NS = 1_735_732_800_000_000_000  # 2025-01-01T12:00:00Z


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


class TraceBuilder(EventMethods, HardwareMethods, WriterMethods):
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
        check_schema(schema)
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
            borrow = table in EVENT_TABLES
        return resolve_table(self.schema, table, borrow)

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
            known = self._accepts[table] = known_columns(table)
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
        return gpid | tid_bits(tid)

    def correlation_id(self) -> int:
        """A new correlation id (what CUPTI gives each API call)."""
        cid = self._next_correlation
        self._next_correlation += 1
        return cid

    def metadata(self, name: str, value: str | bytes) -> None:
        """An extra row for the export metadata table (after the standard ones)."""
        self._extra_metadata.append((name, value))
