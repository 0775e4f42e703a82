"""tracelens: where GPU time goes in an NVIDIA Nsight Systems SQLite export, and why two
runs differ.

    import tracelens
    with tracelens.open("run.sqlite") as trace:
        trace.info              # TraceInfo: versions, GPUs, processes, span, counts
        trace.census(top=10)    # polars DataFrame, times in ns
    trace.census(device=1, start="2s", end="2.5s", nvtx="decode_*")  # keyword filters
    tracelens.decode("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN")   # KernelName
    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        tracelens.diff(a, b).clues   # the evidence board

The library never prints or exits; problems are raised as ``tracelens.TracelensError``
subclasses whose message is one line naming the file and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    ExtensionError,
    MissingDataError,
    QueryError,
    TraceError,
    TracelensError,
    UsageError,
)

# Everything else loads on first use, so that `tracelens --help` (which imports this
# package) stays fast: see tests/test_packaging.py.
_LAZY = {
    "open": "trace",
    "Trace": "trace",
    "TraceInfo": "trace",
    "EventFilter": "filters",
    "parse_time_ns": "filters",
    "diff": "compare",  # the module is not named diff: it would shadow the function
    "TraceDiff": "compare",
    "decode": "kernelnames",
    "decode_column": "kernelnames",
    "KernelName": "kernelnames",
    "classify": "categories",
    "fingerprint": "fingerprint",  # a callable module: fingerprint(trace), fingerprint.compare
    "analyse_ranks": "ranks",
    "RanksResult": "ranks",
}

if TYPE_CHECKING:
    from .categories import classify
    from .compare import TraceDiff, diff
    from .filters import EventFilter, parse_time_ns
    from .fingerprint import fingerprint
    from .kernelnames import KernelName, decode, decode_column
    from .ranks import RanksResult, analyse_ranks
    from .trace import Trace, TraceInfo, open


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tracelens' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The public API, lazy names included (tab completion, dir()); help() lists __all__.
    return sorted(set(__all__) | set(_LAZY) | {n for n in globals() if n.startswith("__")})


__version__ = "0.1.0"

__all__ = [
    "EventFilter",
    "RanksResult",
    "analyse_ranks",
    "KernelName",
    "TraceDiff",
    "classify",
    "decode",
    "decode_column",
    "diff",
    "fingerprint",
    "ExtensionError",
    "MissingDataError",
    "QueryError",
    "Trace",
    "TraceError",
    "TraceInfo",
    "TracelensError",
    "UsageError",
    "open",
    "parse_time_ns",
    "__version__",
]
