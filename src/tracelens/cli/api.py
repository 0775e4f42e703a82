"""tracelens api: time in CUDA API calls, per kernel API vs queue vs kernel time, and time
in OS runtime calls."""

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
    osrt: Annotated[
        bool,
        typer.Option(
            "--osrt",
            help="OS runtime calls instead (osrt_sum, needs a capture with -t osrt): per "
            "function (poll, pthread_cond_wait, ioctl, read...), how long the threads were "
            "in it; where the CPU side waits while the GPU idles",
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
    long the calling threads spent in it (CPU time), version suffixes removed as nsys does.

    --osrt: OS runtime calls by time, as `nsys stats --report osrt_sum`: per function the
    threads called (poll, pthread_cond_wait, sem_timedwait, ioctl...), how long they were
    in it, blocked or not. nsys records only calls longer than its --osrt-threshold
    (1000 ns by default)."""
    from .. import api as lib
    from ..errors import UsageError
    from ..filters import EventFilter
    from ..nvtx import render

    if exec_ and osrt:
        raise UsageError(lib.EXEC_OR_OSRT.format(exec="--exec", osrt="--osrt"))
    with c.open_trace(trace, demo) as tr:
        report = lib.api_report(tr, exec=exec_, osrt=osrt, name=name, pid=pid)
        # an empty --pid says why, as every command's filters do: by the processes that
        # made the calls listed (--exec lists kernels: by their GPU work)
        if osrt:
            hint = None if report.frame.height else lib.why_no_osrt(tr, pid)
        elif exec_:
            hint = c.empty_hint(tr, EventFilter(pid=pid), report.frame.height)
        else:
            hint = None if report.frame.height else lib.why_no_api(tr, pid)
        # --exec lists kernels: graph replays traced at graph level are left out
        note = tr.graph_note(EventFilter(pid=pid)) if exec_ else None
    c.show(
        render, report, fmt=fmt, output=output, note=note, hint=hint, timeunit=timeunit,
        source=tr.path.name, top=top,
    )  # fmt: skip
