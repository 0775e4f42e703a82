"""tracelens timeline: what ran when."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app


@app.command()
def timeline(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    api: Annotated[bool, typer.Option("--api", help="Also list CUDA API calls")] = False,
    gap: Annotated[
        int,
        c.time_option(
            "--gap", "Idle stretches of a device longer than TIME become rows of kind gap"
        ),
    ] = "100us",
    name: c.NameOpt = "demangled",
    limit: Annotated[
        int,
        c.at_least(
            "--limit", "-n", minimum=0, meaning="every row", help="Rows to show (0: every row)"
        ),
    ] = 100,
    offset: Annotated[int, c.at_least("--offset", minimum=0, help="Rows to skip first")] = 0,
    device: Annotated[
        int | None,
        typer.Option("--device", help="Only GPU rows of this CUDA device (NVTX and API stay)"),
    ] = None,
    pid: c.PidOpt = None,
    stream: Annotated[
        int | None,
        typer.Option("--stream", help="Only GPU rows of this CUDA stream (NVTX and API stay)"),
    ] = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    nvtx: c.NvtxOpt = None,
    step: c.StepOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Kernels, memcpys (kind, bytes, GB/s), memsets and NVTX ranges in time order, with the
    idle gaps of each device; times (the Start column, --start/--end) from session start,
    as in every command."""
    from .. import timeline as analysis

    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        where, note = c.nvtx_filter(tr, nvtx, where, step)
        result = analysis.timeline(
            tr, api=api, gap_ns=gap, name=name, limit=limit, offset=offset, where=where
        )
        hint = c.empty_hint(tr, where, result.total)
    c.show(
        analysis.render,
        result,
        fmt=fmt,
        output=output,
        note=note,
        hint=hint,
        timeunit=timeunit,
        source=tr.path.name,
    )
