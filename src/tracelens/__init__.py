"""tracelens: where GPU time goes in an NVIDIA Nsight Systems SQLite export, and why two
runs differ.

    import tracelens
    with tracelens.open("run.sqlite") as trace:
        trace.info              # TraceInfo: versions, GPUs, processes, span, counts
        trace.census(top=10)    # polars DataFrame, times in ns

The library never prints or exits; problems are raised as ``tracelens.TracelensError``
subclasses whose message is one line naming the file and the fix.
"""

from __future__ import annotations

from .errors import ExtensionError, MissingDataError, TraceError, TracelensError, UsageError
from .filters import EventFilter, parse_time_ns
from .trace import Trace, TraceInfo, open

__version__ = "0.1.0"

__all__ = [
    "EventFilter",
    "ExtensionError",
    "MissingDataError",
    "Trace",
    "TraceError",
    "TraceInfo",
    "TracelensError",
    "UsageError",
    "open",
    "parse_time_ns",
]
