"""Event filters shared by every analysis, and parsing of times with units."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .errors import UsageError

if TYPE_CHECKING:
    from .trace import Trace

TIME_UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s)?\s*$")


def parse_time_ns(text: str | int | None, *, param: str = "time") -> int | None:
    """``'1.5ms'`` -> 1500000. A bare number is nanoseconds. None stays None. A malformed
    time is a UsageError naming ``param``."""
    if text is None or isinstance(text, int):
        return text
    m = _TIME.match(str(text))
    if not m:
        raise UsageError(
            f"{{param}} {text!r} is not a time; use a number with an optional unit ns, us, ms "
            "or s (e.g. 1.5ms)",
            param=param,
        )
    unit = (m.group(2) or "ns").replace("µs", "us")
    return round(float(m.group(1)) * TIME_UNITS_NS[unit])


@dataclass(frozen=True)
class EventFilter:
    """Which events an analysis looks at. None means "all".

    The time window follows nsys: an event is kept when it starts in, ends in, or spans
    ``[start_ns, end_ns]`` (ns from session start, the time base of the export).
    """

    device: int | None = None
    pid: int | None = None
    stream: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None

    def __post_init__(self) -> None:
        if self.start_ns is not None and self.end_ns is not None and self.end_ns < self.start_ns:
            raise UsageError(
                f"end ({self.end_ns} ns) is before start ({self.start_ns} ns)", param="window"
            )

    def params(self) -> dict[str, int | None]:
        return {
            "device": self.device,
            "pid": self.pid,
            "stream": self.stream,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
        }


def nvtx_window(trace: Trace, pattern: str, where: EventFilter | None = None) -> EventFilter:
    """``where`` narrowed to the GPU work launched inside the NVTX ranges whose label matches
    ``pattern`` (exact, or a glob such as ``decode_step_*``): from the start of the first
    GPU operation those ranges launched to the end of the last (NVTX ranges are CPU time;
    their GPU work runs later). A pattern that matches nothing is a UsageError naming the
    closest labels."""
    import difflib

    trace.load_nvtx_text()
    row = trace.query("nvtx_range_window", pattern=pattern).to_dicts()[0]
    if not row["ranges"]:
        labels = trace.query("nvtx_labels")["label"].to_list()
        if not labels:
            raise UsageError(f"{trace.path}: no NVTX ranges to match {pattern!r}")
        close = difflib.get_close_matches(pattern, labels, n=3, cutoff=0.4) or labels[:3]
        raise UsageError(
            f"{trace.path}: no NVTX range labelled {pattern!r}; "
            f"closest: {', '.join(repr(x) for x in close)}"
        )
    if not row["gpu_ops"]:
        raise UsageError(
            f"{trace.path}: the {row['ranges']} NVTX range(s) labelled {pattern!r} launched no "
            "GPU work (no kernel, memcpy or memset whose API call is inside them)"
        )
    return replace(where or EventFilter(), start_ns=row["start_ns"], end_ns=row["end_ns"])
