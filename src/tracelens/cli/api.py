"""tracelens api: time in CUDA API calls, and per kernel API vs queue vs kernel time."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from ._app import app


@app.command()
def api(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    exec_: Annotated[
        bool,
        typer.Option(
            "--exec",
            help="Per kernel and launching thread: API time, queue time and kernel time "
            "(cuda_kern_exec_sum); long API times next to short kernels mean launch-bound",
        ),
    ] = False,
    name: c.NameOpt = "demangled",
    pid: c.PidOpt = None,
    top: c.TopOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """CUDA API calls by time, as `nsys stats --report cuda_api_sum`: per API function, how
    long the calling threads spent in it (CPU time), version suffixes removed as nsys does."""
    from ..api import api_report
    from ..filters import EventFilter
    from ..nvtx import render

    with c.open_trace(trace, demo) as tr:
        report = api_report(tr, exec=exec_, name=name, pid=pid)
        # an empty --pid says why, as every command's filters do
        hint = c.empty_hint(tr, EventFilter(pid=pid), report.frame.height)
        # --exec lists kernels: graph replays traced at graph level are left out
        note = tr.graph_note(EventFilter(pid=pid)) if exec_ else None
    c.show(
        render, report, fmt=fmt, output=output, note=note, hint=hint, timeunit=timeunit,
        source=tr.path.name, top=top,
    )  # fmt: skip
