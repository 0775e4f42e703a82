"""The devices the export lists that ran no GPU work in util's window.

A GPU that ran nothing is the commonest waste on a multi-GPU box, and util's sweep only
sees devices with operations. The export lists the devices the capture saw: the CUDA
ordinals of ``TARGET_INFO_CUDA_DEVICE`` (per process, 3.23+) or, without its rows,
``TARGET_INFO_GPU``'s (``cuDevice``, or ``deviceId`` in nsys <= 2021): the ordinal that
the activity rows' ``deviceId`` (and ``--device``) use. A device none of them lists is
never added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._resources import query

if TYPE_CHECKING:
    import polars as pl

    from .filters import EventFilter
    from .trace import Trace

__all__ = ["IDLE_DEVICE_CAUSE", "IDLE_DEVICE_REASON", "listed_devices", "with_idle_devices"]

#: The idle cause of a listed device that ran nothing: the whole window is the time
#: before its first GPU operation (there is none). The closest existing cause, so that
#: the causes still add up to the idle time and the CSV keeps its columns.
IDLE_DEVICE_CAUSE = "before_first"
#: Why, in the note util adds for such a device.
IDLE_DEVICE_REASON = (
    "the export lists it (the capture saw it) but it ran no kernel, memcpy or memset in "
    "the window: its whole span is idle (counted as before_first)"
)


def listed_devices(trace: Trace) -> list[int]:
    """The CUDA device ordinals the export lists, sorted (empty when it lists none)."""
    ordinals = set()
    if trace.has_table("TARGET_INFO_CUDA_DEVICE"):
        # A small metadata table: SQLite reads it natively, no DuckDB scan.
        ordinals = {r[0] for r in trace._sqlite_rows(query("util_listed_devices"))}
    if not ordinals:  # an export without the table, or with it empty
        ordinals = {g.cuda_device for g in trace.gpus()}
    return sorted(o for o in ordinals if isinstance(o, int))


def with_idle_devices(
    trace: Trace,
    where: EventFilter | None,
    devices: pl.DataFrame,
    causes: pl.DataFrame,
    window: tuple[int | None, int | None],
) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """(``devices``, ``causes``, notes) with a row for each device the export lists that
    has none in ``devices`` (util's frame, by device): span the window, busy 0, idle the
    span, utilization 0, and its idle time under :data:`IDLE_DEVICE_CAUSE`. Only for the
    whole trace or a time window: a filter that names devices, a process or a stream, or
    selects work (--nvtx, --step), keeps only the devices of the work it selects. Nothing
    is added when ``devices`` is empty (no GPU work at all in the window)."""
    import polars as pl

    t0, t1 = window
    filtered = where is not None and any(
        v is not None for k, v in where.params().items() if k not in ("start_ns", "end_ns")
    )
    if filtered or devices.is_empty() or t0 is None or t1 is None:
        return devices, causes, []
    seen = set(devices["device"].to_list())
    idle = [d for d in listed_devices(trace) if d not in seen]
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
