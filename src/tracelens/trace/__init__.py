"""``tracelens.open(path) -> Trace``: one nsys SQLite export, opened read-only.

The :class:`Trace` class is put together from one module per concept: :mod:`.core` (the
class: connections, closing, running queries; and :func:`open`), :mod:`.opening` (the
inputs: SQLite export, report, parquetdir, private copy), :mod:`.views` (the DuckDB views
and the cache entry they read), :mod:`.text` (the ``strings`` and ``nvtx_text`` tables),
:mod:`.info` (:class:`TraceInfo`: metadata, GPUs, processes, counts, graph replays) and
:mod:`.analyses` (the analysis methods and their keyword :class:`Filters`).
"""

from __future__ import annotations

from .analyses import Filters
from .core import KERNEL_TABLE, Trace, list_param, open
from .info import GRAPH_TABLE, EventCount, GpuInfo, ProcessInfo, TraceInfo, graph_level_reason
from .text import NVTX_BATCH_ROWS

__all__ = [
    "GRAPH_TABLE",
    "KERNEL_TABLE",
    "NVTX_BATCH_ROWS",
    "EventCount",
    "Filters",
    "GpuInfo",
    "ProcessInfo",
    "Trace",
    "TraceInfo",
    "graph_level_reason",
    "list_param",
    "open",
]
