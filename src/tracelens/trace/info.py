"""What the export is: versions, hardware, processes, span and event counts
(:class:`TraceInfo`), read through SQLite from the export's own tables, and the CUDA graph
replays the views cannot break down."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _schema
from .._sqlite import decode_text

if TYPE_CHECKING:
    from ..filters import EventFilter

# CUDA graph replays traced at graph level: their kernels are missing from the kernel table.
GRAPH_TABLE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as the export describes it (fields the file lacks are None)."""

    id: int | None
    name: str | None
    bus_location: str | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    compute_capability: str | None = None
    cuda_device: int | None = None


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    name: str | None


@dataclass(frozen=True)
class EventCount:
    # kernel, memcpy, memset, runtime, nvtx, osrt (OS runtime calls), graph (CUDA graph replays)
    kind: str
    table: str  # the nsys table it comes from
    present: bool  # False when the export has no such table (nothing was captured)
    count: int
    first_ns: int | None
    last_ns: int | None


@dataclass(frozen=True)
class TraceInfo:
    """What the export is: versions, hardware, processes, span and event counts."""

    path: str
    size_bytes: int
    nsys_version: str | None
    schema_version: str | None
    metadata_table: str | None  # META_DATA_EXPORT, EXPORT_META_DATA or None (<= 2021)
    session_start_utc_ns: int | None
    start_ns: int | None  # first event of any kind, ns from session start
    end_ns: int | None
    gpus: tuple[GpuInfo, ...]
    processes: tuple[ProcessInfo, ...]
    events: tuple[EventCount, ...]
    # Summed duration of the CUDA graph replays traced at graph level (the `graph` events),
    # ns: GPU time whose kernels the export does not list. 0 without such replays.
    graph_replay_ns: int
    tables: tuple[str, ...] = field(repr=False)
    metadata: dict[str, str] = field(repr=False)

    @property
    def duration_ns(self) -> int | None:
        if self.start_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.start_ns

    def count(self, kind: str) -> int:
        return next((e.count for e in self.events if e.kind == kind), 0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["duration_ns"] = self.duration_ns
        return d

    def _repr_html_(self) -> str:
        """In Jupyter: what ``tracelens info`` prints (the dataclass's repr is one line of
        nested tuples), escaped (process command lines come from the profiled program)."""
        import html

        from ..escape import escape_controls
        from ..info_text import describe_info

        return f"<pre>{html.escape(escape_controls(describe_info(self)))}</pre>"


_EVENT_KINDS = (
    ("kernel", "kernels"),
    ("memcpy", "memcpys"),
    ("memset", "memsets"),
    ("runtime", "runtime_calls"),
    ("nvtx", "nvtx_events"),
    ("osrt", "osrt_calls"),
    ("graph", "graph_replays"),
)
# Kinds counted but not in the span (start_ns, end_ns): the span is what origin_ns and every
# Start column count from (queries/_first_event.sql), which OS runtime calls never moved.
_NOT_IN_SPAN = frozenset({"osrt"})


def graph_level_reason(replays: int) -> str:
    """Why kernels are missing from an export with ``replays`` graph-level CUDA graph replays
    (for messages that say a kernel was not found)."""
    one = replays == 1
    return (
        f"its {replays:,} CUDA graph {'replay was' if one else 'replays were'} traced at graph "
        "level, which records no kernels; profile with --cuda-graph-trace=node"
    )


class InfoMethods:
    """The :class:`~tracelens.Trace` methods that say what the export is (metadata, GPUs,
    processes, session start, event counts) and what its views leave out (graph replays)."""

    def _metadata(self) -> tuple[str | None, dict[str, str]]:
        for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
            if table in self.tables:
                rows = self._sqlite_rows(f'SELECT name, value FROM "{table}"')
                return table, {decode_text(k): decode_text(v) for k, v in rows}
        return None, {}

    def _nsys_version(self, meta: dict[str, str]) -> str | None:
        if meta.get("EXPORT_PRODUCT_VERSION"):
            return meta["EXPORT_PRODUCT_VERSION"]
        if "TARGET_INFO_SYSTEM_ENV" in self.tables:
            # Filter in SQL: other rows of this table hold bytes that are not UTF-8.
            rows = self._sqlite_rows(
                "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'TargetInstallDir'"
            )
            for (value,) in rows:
                m = re.search(r"(20\d\d\.\d+(?:\.\d+)*)", decode_text(value) or "")
                if m:
                    return m.group(1)
        return None

    def _gpus(self) -> tuple[GpuInfo, ...]:
        if "TARGET_INFO_GPU" not in self.tables:
            return ()
        cols = self.tables["TARGET_INFO_GPU"]
        rows = self._sqlite_rows('SELECT * FROM "TARGET_INFO_GPU"')
        extra: dict[int, dict[str, Any]] = {}
        if "TARGET_INFO_CUDA_GPU" in self.tables:  # nsys <= 2021 keeps SMs/memory here
            ccols = self.tables["TARGET_INFO_CUDA_GPU"]
            for r in self._sqlite_rows('SELECT * FROM "TARGET_INFO_CUDA_GPU"'):
                d = dict(zip(ccols, r, strict=False))
                extra[d.get("deviceId")] = d
        gpus = []
        for r in rows:
            d = dict(zip(cols, r, strict=False))
            gid = d.get("id", d.get("deviceId"))
            e = extra.get(gid, {})
            major = d.get("computeMajor", e.get("computeCapabilityMajor"))
            minor = d.get("computeMinor", e.get("computeCapabilityMinor"))
            gpus.append(
                GpuInfo(
                    id=gid,
                    name=decode_text(d.get("name")),
                    bus_location=decode_text(d.get("busLocation", e.get("pciBusId"))),
                    sm_count=d.get("smCount", e.get("numMultiprocessors")),
                    memory_bytes=d.get("totalMemory", e.get("globalMemorySize")),
                    compute_capability=f"{major}.{minor}" if major is not None else None,
                    # the CUDA ordinal that activity rows (and --device) use; nsys <= 2021
                    # describes GPUs by it directly (deviceId)
                    cuda_device=d.get("cuDevice", d.get("deviceId")),
                )
            )
        return tuple(sorted(gpus, key=lambda g: (g.id is None, g.id)))

    def _processes(self, pid_lists: list[list[int] | None]) -> tuple[ProcessInfo, ...]:
        pids = sorted({pid for kind_pids in pid_lists for pid in kind_pids or ()})
        names: dict[int, str | None] = {}
        if "PROCESSES" in self.tables and "pid" in self.tables["PROCESSES"]:
            for pid, name in self._sqlite_rows("SELECT pid, name FROM PROCESSES"):
                names.setdefault(pid, decode_text(name))
        return tuple(ProcessInfo(pid, names.get(pid)) for pid in pids)

    @property
    def origin_ns(self) -> int:
        """The start of the first event of any kind, ns from session start (0 when there is
        none): what the Start columns of stakeout and timeline count from. Same as
        ``info.start_ns``, without reading the counts and processes when info is not loaded."""
        self._check_open()
        if self._info is not None:
            return self._info.start_ns or 0
        if self._origin_ns is None:
            self._origin_ns = self.query_rows("_first_event").data[0][0] or 0
        return self._origin_ns

    @property
    def info(self) -> TraceInfo:
        """What the export is (read once, then kept; raises TraceError once closed)."""
        self._check_open()
        if self._info is None:
            self._info = self._read_info()
        return self._info

    def _read_info(self) -> TraceInfo:
        # plain rows: `tracelens info` then never imports polars (0.2 CPU s of its run)
        counts = self.query_rows("_event_counts")
        by_kind = {row[0]: dict(zip(counts.columns, row, strict=True)) for row in counts.data}
        return self._info_from_counts(by_kind)

    def info_with_gpu_counts(self, given: dict[str, dict[str, Any]]) -> TraceInfo:
        """:attr:`info`, the figures of some kinds given (``given``: kind -> the columns of
        ``queries/_event_counts.sql``'s row of that kind: events, first_ns, last_ns, pids)
        by a caller that holds those events already: kernel, memcpy and memset always, the
        runtime calls optionally; the other kinds read (``queries/_host_event_counts.sql``;
        the OS runtime calls ``queries/info_osrt_calls.sql``),
        so the kernel table (and the runtime table, when given) is not scanned again. Kept
        as :attr:`info`; when info is loaded already, that is returned as it is."""
        self._check_open()
        if self._info is None:
            counts = self.query_rows("_host_event_counts", runtime="runtime" not in given)
            host = {row[0]: dict(zip(counts.columns, row, strict=True)) for row in counts.data}
            self._info = self._info_from_counts({**host, **given})
        return self._info

    def _info_from_counts(self, by_kind: dict[str, dict[str, Any]]) -> TraceInfo:
        """The info, with each kind's figures (``queries/_event_counts.sql``'s row of it)
        given and the rest read from the export's own tables."""
        table, meta = self._metadata()
        if "osrt" not in by_kind:
            by_kind = {**by_kind, "osrt": self._osrt_counts()}
        events = []
        for kind, view in _EVENT_KINDS:
            source = _schema.VIEWS[view][0]
            row = by_kind[kind]
            events.append(
                EventCount(
                    kind,
                    source,
                    source in self.tables,
                    row["events"],
                    row["first_ns"],
                    row["last_ns"],
                )
            )
        spanned = [e for e in events if e.kind not in _NOT_IN_SPAN]
        firsts = [e.first_ns for e in spanned if e.first_ns is not None]
        lasts = [e.last_ns for e in spanned if e.last_ns is not None]
        session_start = self.session_start_utc_ns()
        from ..inputs import input_bytes

        return TraceInfo(
            path=str(self.path),
            size_bytes=input_bytes(self.path),
            nsys_version=self._nsys_version(meta),
            schema_version=meta.get("EXPORT_SCHEMA_VERSION"),
            metadata_table=table,
            session_start_utc_ns=session_start,
            start_ns=min(firsts) if firsts else None,
            end_ns=max(lasts) if lasts else None,
            gpus=self._gpus(),
            processes=self._processes([row["pids"] for row in by_kind.values()]),
            events=tuple(events),
            graph_replay_ns=self.graph_replays()[1],
            tables=tuple(sorted(self.tables)),
            metadata=meta,
        )

    def _osrt_counts(self) -> dict[str, Any]:
        """info's osrt row (``queries/info_osrt_calls.sql``): the OS runtime calls. Without
        an OSRT_API table (no -t osrt) nothing is queried."""
        if _schema.VIEWS["osrt_calls"][0] not in self.tables:
            return {"events": 0, "first_ns": None, "last_ns": None, "pids": None}
        rows = self.query_rows("info_osrt_calls")
        return dict(zip(rows.columns, rows.data[0], strict=True))

    # -- what the views leave out -------------------------------------------------------
    def graph_replays(self, where: EventFilter | None = None) -> tuple[int, int]:
        """(replays, summed duration in ns) of the CUDA graph replays traced at graph level
        that pass ``where`` (device, pid, stream, time window: the rules of census).

        nsys traces CUDA graphs at graph level by default (``--cuda-graph-trace=graph``):
        each replay is one row of CUPTI_ACTIVITY_KIND_GRAPH_TRACE, and its kernels, memcpys
        and memsets are in no other table. (0, 0) when the export has no such table.
        """
        if GRAPH_TABLE not in self.tables:
            return 0, 0  # the common case costs nothing: no query, no DuckDB
        from ..filters import EventFilter

        rows = self.query_rows("_graph_replays", **(where or EventFilter()).params())
        replays, total_ns = rows.data[0]
        return int(replays), int(total_ns)

    def graph_note(self, where: EventFilter | None = None) -> str | None:
        """One sentence saying what every kernel and memory figure leaves out: the CUDA
        graph replays traced at graph level that pass ``where``; None when there are none
        (then nothing is left out).

        The sentence has no prefix; the command line prints it as ``note: …`` after a
        table or Markdown output and as ``tracelens: note: …`` on stderr for csv/json.
        """
        replays, total_ns = self.graph_replays(where)
        if not replays:
            return None
        from ..units import fmt_ns

        one = replays == 1
        return (
            f"{replays:,} CUDA graph {'replay' if one else 'replays'} "
            f"({fmt_ns(total_ns)} of GPU time) {'is' if one else 'are'} not broken down by "
            f"kernel and {'is' if one else 'are'} not in these numbers; profile with "
            f"--cuda-graph-trace=node to see {'its' if one else 'their'} kernels"
        )

    def session_start_utc_ns(self) -> int | None:
        """When the profiling session started, ns since the epoch (the base of every time in
        the export), without reading the events as ``info`` does; None when unrecorded.
        Raises TraceError when the value is no integer (a damaged file: SQLite hands back
        what the page holds, bytes or text, which info, the report and ranks cannot use)."""
        if "TARGET_INFO_SESSION_START_TIME" not in self.tables:
            return None
        rows = self._sqlite_rows("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")
        start = rows[0][0] if rows else None
        if start is None or (isinstance(start, int) and not isinstance(start, bool)):
            return start
        from ..errors import TraceError

        raise TraceError(
            self.path,
            "is corrupt: its session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs) is "
            f"{type(start).__name__}, not a number; copy or export it again",
        )

    def table_rows(self, table: str) -> int:
        """How many rows the export's table ``table`` (its nsys name) has; 0 when absent.
        Through SQLite's count, which reads no column: on a 5M-kernel export ~0.1 CPU s,
        where :attr:`info`'s scan of the kernel table costs about a census; or, once the
        trace's connection reads a cache entry holding a copy of the table, from that copy
        (:meth:`~tracelens.trace.lazy.LazyCache.table_rows`: the connection is not opened
        for it)."""
        if table not in self.tables:
            return 0
        cached = self._lazy.table_rows(table) if self._lazy is not None else None
        if cached is not None:
            return cached
        return self._sqlite_rows(f'SELECT count(*) FROM "{table}"')[0][0]

    def gpus(self) -> tuple[GpuInfo, ...]:
        """The GPUs the export describes (``info.gpus``, without reading the events)."""
        return self._info.gpus if self._info is not None else self._gpus()
