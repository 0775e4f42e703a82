"""The devices a traced process opened that ran no GPU work in util's window.

A GPU a job holds and leaves idle is the commonest waste on a multi-GPU box, and util's
sweep only sees devices with operations. A device counts as opened when a traced process
had a CUDA context on it: ``TARGET_INFO_CUDA_CONTEXT_INFO`` (schema 3.13.2 and later) or,
before it, ``TARGET_INFO_CUDA_NULL_STREAM`` (one default stream per context), whose
``deviceId`` is the CUDA ordinal of the activity rows and of ``--device``. Not the GPUs the
export lists: ``TARGET_INFO_GPU`` is the machine's inventory (the shared CPU-only export
lists a GPU) and ``TARGET_INFO_CUDA_DEVICE`` the devices a process could see (the shared
2-GPU export lists both for a process whose one context is on device 0); nsys's own
gpu-low-util and stats never report a device without work either. An export without
either context table adds no device.

Such a device gets a row (utilization 0) so that ``util_min`` gates catch it; util's
aggregate figures (util, busy, idle and its causes) and the diff's time accounting sum the
devices busy in the window alone (:func:`busy_devices`), so a context left open on a
spare GPU does not move them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._resources import query

if TYPE_CHECKING:
    import polars as pl

    from .filters import EventFilter
    from .trace import Trace

__all__ = [
    "IDLE_DEVICE_CAUSE",
    "IDLE_DEVICE_REASON",
    "busy_devices",
    "opened_devices",
    "with_idle_devices",
]

#: The idle cause of an opened device that ran nothing: the whole window is the time
#: before its first GPU operation (there is none). The closest existing cause, so that
#: the causes still add up to the idle time and the CSV keeps its columns.
IDLE_DEVICE_CAUSE = "before_first"
#: Why, in the note util adds for such a device.
IDLE_DEVICE_REASON = (
    "a traced process had a CUDA context on it but it ran no kernel, memcpy or memset in "
    "the window (or only ones of 0 ns): its whole span is idle (counted as before_first); "
    "util_min counts it, util, busy and idle do not"
)

#: The export tables with one row per CUDA context, newest first, and the query that
#: reads the devices of their contexts.
_CONTEXT_TABLES = (
    ("TARGET_INFO_CUDA_CONTEXT_INFO", "util_context_devices"),
    ("TARGET_INFO_CUDA_NULL_STREAM", "util_null_stream_devices"),
)


def opened_devices(trace: Trace) -> list[int]:
    """The CUDA device ordinals some traced process had a context on, sorted (empty when
    the export has no context table)."""
    ordinals: set[int] = set()
    for table, name in _CONTEXT_TABLES:
        if trace.has_table(table):
            # A small metadata table: SQLite reads it natively, no DuckDB scan.
            ordinals.update(r[0] for r in trace._sqlite_rows(query(name)))
    return sorted(o for o in ordinals if isinstance(o, int))


def with_idle_devices(
    trace: Trace,
    where: EventFilter | None,
    devices: pl.DataFrame,
    causes: pl.DataFrame,
    window: tuple[int | None, int | None],
) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """(``devices``, ``causes``, notes) with a row for each opened device
    (:func:`opened_devices`) that has none in ``devices`` (util's frame, by device): span
    the window, busy 0, idle the span, utilization 0, and its idle time under
    :data:`IDLE_DEVICE_CAUSE`. Only for the whole trace or a time window: a filter that
    names devices, a process or a stream, or selects work (--nvtx, --step), keeps only the
    devices of the work it selects. Nothing is added when ``devices`` is empty (no GPU work
    at all in the window)."""
    import polars as pl

    t0, t1 = window
    filtered = where is not None and any(
        v is not None for k, v in where.params().items() if k not in ("start_ns", "end_ns")
    )
    if filtered or devices.is_empty() or t0 is None or t1 is None:
        return devices, causes, []
    seen = set(devices["device"].to_list())
    idle = [d for d in opened_devices(trace) if d not in seen]
    if not idle:
        return devices, causes, []
    span = t1 - t0
    zero = {c: 0 for c in devices.columns}
    rows = [
        zero
        | {"device": d, "span_ns": span, "idle_ns": span, "utilization": 0.0 if span > 0 else None}
        for d in idle
    ]
    devices = pl.concat([devices, pl.DataFrame(rows, schema=devices.schema)]).sort("device")
    if span > 0:
        added = pl.DataFrame(
            {"device": idle, "cause": IDLE_DEVICE_CAUSE, "count": 1, "time_ns": span},
            schema=causes.schema,
        )
        # Stable: each device's causes keep their display order.
        causes = pl.concat([causes, added]).sort("device", maintain_order=True)
    notes = [f"device {d}: {IDLE_DEVICE_REASON}" for d in idle]
    return devices, causes, notes


def busy_devices(devices: pl.DataFrame, causes: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of util's ``devices`` and ``causes`` of the devices busy in the window
    (busy > 0): what util's aggregate figures and the diff's time accounting sum. An opened
    device that ran nothing (:func:`with_idle_devices`) is left out, as nsys leaves a
    device without work out of its figures: it shows in its row and in ``util_min``. All of
    them when none was busy (only zero-length operations): their idle time is all there is."""
    import polars as pl

    busy = devices.filter(pl.col("busy_ns") > 0)
    if busy.height == devices.height or busy.is_empty():
        return devices, causes
    return busy, causes.filter(pl.col("device").is_in(busy["device"].implode()))
