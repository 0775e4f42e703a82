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
        str,
        typer.Option(
            "--gap",
            help="Idle stretches of a device longer than TIME become rows of kind gap",
            metavar="TIME",
        ),
    ] = "100us",
    name: Annotated[
        str,
        typer.Option(
            "--name", help="Kernel name to show: demangled, short or mangled", metavar="KIND"
        ),
    ] = "demangled",
    limit: Annotated[int, typer.Option("--limit", "-n", help="Rows to show (0: every row)")] = 100,
    offset: Annotated[int, typer.Option("--offset", help="Rows to skip first")] = 0,
    device: Annotated[
        int | None,
        typer.Option("--device", help="Only GPU rows of this CUDA device (NVTX and API stay)"),
    ] = None,
    pid: c.PidOpt = None,
    stream: Annotated[
        int | None,
        typer.Option("--stream", help="Only GPU rows of this CUDA stream (NVTX and API stay)"),
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            "--start",
            help="Window start, from the trace's first event like the Start column (census "
            "counts from session start); events that start in, end in or span the window "
            "are kept",
            metavar="TIME",
        ),
    ] = None,
    end: Annotated[
        str | None, typer.Option("--end", help="Window end (see --start)", metavar="TIME")
    ] = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Kernels, memcpys (kind, bytes, GB/s), memsets and NVTX ranges in time order, with the
    idle gaps of each device, times from the trace's first event."""
    from ..census import check_name_kind
    from ..filters import EventFilter, parse_time_ns
    from ..timeline import check_gap, check_paging, render, timeline

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    check_name_kind(name)
    check_paging(limit, offset)
    gap_ns = check_gap(parse_time_ns(gap, option="--gap"))
    rel_start = parse_time_ns(start, option="--start")
    rel_end = parse_time_ns(end, option="--end")
    EventFilter(start_ns=rel_start, end_ns=rel_end)  # the order check, before opening
    with c.open_trace(trace, demo) as tr:
        origin = tr.info.start_ns or 0
        where = EventFilter(
            device=device,
            pid=pid,
            stream=stream,
            start_ns=None if rel_start is None else origin + rel_start,
            end_ns=None if rel_end is None else origin + rel_end,
        )
        result = timeline(
            tr, api=api, gap_ns=gap_ns, name=name, limit=limit, offset=offset, where=where
        )
        text = render(result, fmt=fmt, timeunit=timeunit, source=tr.path.name)
    c.emit(text, output)
