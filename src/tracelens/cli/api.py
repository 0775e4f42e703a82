"""tracelens api: time in CUDA API calls, and per kernel API vs queue vs kernel time."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app


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
    name: Annotated[
        str,
        typer.Option("--name", help="With --exec: demangled, short or mangled", metavar="KIND"),
    ] = "demangled",
    pid: c.PidOpt = None,
    top: c.TopOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """CUDA API calls by time, as `nsys stats --report cuda_api_sum`: per API function, how
    long the calling threads spent in it (CPU time), version suffixes removed as nsys does."""
    from ..api import EXEC_TABLE_COLUMNS, api_report

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    with c.open_trace(trace, demo) as tr:
        df, what = api_report(tr, exec=exec_, name=name, pid=pid)
        title = f"api of {tr.path.name}: {what}"
    shown = df.head(top) if top else df
    if fmt == "table" and exec_:
        shown = shown.select(EXEC_TABLE_COLUMNS)
    caption = f"{shown.height} of {df.height} rows" if top else f"{df.height} rows"
    c.emit(c.render_frame(shown, fmt, timeunit, title=title, caption=caption), output)
