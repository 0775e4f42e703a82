"""tracelens memory: GPU time or bytes per memory operation."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app


@app.command()
def memory(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="time: GPU time per operation, as `nsys stats --report cuda_gpu_mem_time_sum`; "
            "size: bytes per operation in MB (10^6 bytes), as cuda_gpu_mem_size_sum",
            metavar="time|size",
        ),
    ] = "time",
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Memcpy and memset per operation ([CUDA memcpy HtoD], ..., [CUDA memset]), by GPU time
    or by bytes, as `nsys stats` prints them."""
    from ..memory import check_by, memory_summary

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    check_by(by)
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        df = memory_summary(tr, by=by, where=where)
        title = f"memory of {tr.path.name}: " + (
            "GPU time by operation" if by == "time" else "bytes by operation (MB = 10^6 bytes)"
        )
    c.emit(
        c.render_frame(df, fmt, timeunit, title=title, caption=f"{df.height} operations"), output
    )
