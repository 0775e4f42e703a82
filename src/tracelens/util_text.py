"""The text of a :class:`~tracelens.util.Util`: ``table``/``markdown`` (devices, idle
causes, communication, message sizes), ``json`` (one object) or ``csv`` (one row per
device)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .render import DEFAULT_WIDTH
from .util import FRAME_COLUMNS, IDLE_CAUSES, Util

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FRAME_COLUMNS", "render"]


def render(
    result: Util,
    *,
    fmt: str,
    timeunit: str,
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """The result as text: ``table``/``markdown`` (devices, idle causes, communication),
    ``json`` (one object: devices, idle_causes, communication, window, notes; the keys are
    documented in the README) or ``csv`` (one row per device: :data:`FRAME_COLUMNS`, then
    ``idle_<cause>_ns`` for each of :data:`IDLE_CAUSES`)."""
    from . import render as r

    if fmt == "json":
        return _json(result, timeunit)
    if fmt == "csv":
        return _csv(result, timeunit)
    if result.frame.is_empty():
        return f"util of {source}: no GPU work in the window\n"
    sections = _sections(result, source)
    notes = "".join(f"note: {n}\n" for n in result.notes)
    if fmt == "markdown":
        body = "\n".join(
            r.markdown(r.convert_times(df, timeunit), timeunit=timeunit, title=t)
            for df, t in sections
        )
        return body + ("\n" + notes if notes else "")
    captions = {
        0: (
            "busy = compute + exposed communication + exposed memory; busy + idle = span; "
            "memory is copies, memsets and copy kernels (more than `tracelens memory`'s copies)"
        ),
        1: "the causes add up to the idle time (`tracelens util --help` says what each means)",
    }
    body = "\n".join(
        r.frame(
            df,
            fmt="table",
            timeunit=timeunit,
            title=t,
            caption=captions.get(i),
            width=width,
            color=color,
        )
        for i, (df, t) in enumerate(sections)
    )
    return body + notes


def _json(result: Util, timeunit: str) -> str:
    import json

    from . import render as r

    window: dict = {"start_ns": result.start_ns, "end_ns": result.end_ns}
    if result.covered_ns is not None:  # --nvtx: the selected ranges' GPU projection
        window["covered_ns"] = result.covered_ns
    doc = {
        "window": window,
        "devices": r.convert_times(result.frame, timeunit).to_dicts(),
        "idle_causes": r.convert_times(result.idle_causes, timeunit).to_dicts(),
        "communication": r.convert_times(result.communication, timeunit).to_dicts(),
        "message_sizes": None if result.message_sizes is None else result.message_sizes.to_dicts(),
        "notes": list(result.notes),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _csv(result: Util, timeunit: str) -> str:
    """One row per device: the frame, then ``idle_<cause>_ns`` per cause (0 when absent)."""
    import polars as pl

    from . import render as r

    wide = result.frame
    for cause in IDLE_CAUSES:
        times = result.idle_causes.filter(cause=cause).select(
            "device", pl.col("time_ns").alias(f"idle_{cause}_ns")
        )
        wide = wide.join(times, on="device", how="left").with_columns(
            pl.col(f"idle_{cause}_ns").fill_null(0)
        )
    return r.frame(wide, fmt="csv", timeunit=timeunit)


def _sections(result: Util, source: str) -> list[tuple[pl.DataFrame, str]]:
    """The (frame, title) of each terminal/Markdown table, in order."""
    import polars as pl

    from .units import fmt_ns

    span = fmt_ns(None if result.start_ns is None else (result.end_ns or 0) - result.start_ns)
    if result.covered_ns is not None:  # --nvtx: over the selected ranges' GPU projection
        span = f"the selected NVTX ranges' GPU projection ({fmt_ns(result.covered_ns)} of {span})"
    devices = result.frame.with_columns(
        utilization_pct=(pl.col("utilization") * 100).round(1)
    ).drop("utilization")
    idle = result.idle_causes.join(
        result.frame.select("device", "idle_ns"), on="device", how="left"
    ).select(
        "device",
        "cause",
        pl.col("count").alias("gaps"),
        "time_ns",
        idle_pct=(pl.col("time_ns") * 100 / pl.col("idle_ns")).round(1),
    )
    sections = [
        (devices, f"util of {source}: GPU time per device over {span}"),
        (idle, "idle time by cause"),
    ]
    if not result.communication.is_empty():
        sections.append((result.communication, "communication by collective"))
    if result.message_sizes is not None:
        sections.append((result.message_sizes, "NCCL message sizes (NVTX payloads, bytes)"))
    return sections
