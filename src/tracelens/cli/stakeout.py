"""tracelens stakeout: every launch of one kernel."""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import UsageError
from . import _common as c
from . import app
from ._notes import with_note


@app.command()
def stakeout(
    trace: c.TraceArg = None,
    kernel: Annotated[
        str | None,
        typer.Argument(
            help="Kernel name, or part of it, matched against demangled and short names",
            show_default=False,
        ),
    ] = None,
    demo: c.DemoOpt = None,
    match: Annotated[
        str,
        typer.Option(
            "--match",
            help="exact, contains (substring, case-sensitive) or regex (RE2; matches "
            "anywhere unless anchored with ^ $)",
            metavar="HOW",
        ),
    ] = "contains",
    name: Annotated[
        str,
        typer.Option(
            "--name", help="Kernel name to show: demangled, short or mangled", metavar="KIND"
        ),
    ] = "demangled",
    sort: Annotated[
        str,
        typer.Option(
            "--sort",
            help="start (earliest first) or duration (longest first)",
            metavar="start|duration",
        ),
    ] = "start",
    limit: Annotated[
        int,
        typer.Option("--limit", help="Launches to list (0: every one); the summary covers all"),
    ] = 50,
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Every launch of one kernel: summary, launch configurations, duration histogram, then
    per launch its start (from the trace's first event), duration, configuration, device,
    stream, the CUDA API call that launched it, its queue latency (kernel start - call end)
    and the innermost NVTX range around that call. csv lists the launches only.
    --start/--end count from session start, as in census."""
    from ..census import check_name_kind
    from ..stakeout import check_limit, check_match, check_sort, render, stakeout

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    check_name_kind(name)
    check_match(match)
    check_sort(sort)
    check_limit(limit)
    if demo is not None and kernel is None and trace is not None:
        trace, kernel = None, str(trace)  # `stakeout --demo bs1 KERNEL`
    if kernel is None:
        raise UsageError("missing KERNEL: give a kernel name or part of one")
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        result = stakeout(tr, kernel, match=match, name=name, sort=sort, limit=limit, where=where)
        text = render(result, fmt=fmt, timeunit=timeunit, source=tr.path.name)
        note = tr.graph_note(where)
    c.emit(with_note(text, note, fmt), output)
