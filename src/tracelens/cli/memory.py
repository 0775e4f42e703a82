"""tracelens memory: GPU time or bytes per memory operation."""

from __future__ import annotations

from typing import Annotated

from ..choices import MEMORY_BY
from . import _common as c
from . import app


@app.command()
def memory(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    by: Annotated[
        str,
        c.choice(
            "--by",
            values=MEMORY_BY,
            help="time: GPU time per operation, as `nsys stats --report cuda_gpu_mem_time_sum`; "
            "size: bytes per operation in MB (10^6 bytes), as cuda_gpu_mem_size_sum",
        ),
    ] = "time",
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    nvtx: c.NvtxOpt = None,
    step: c.StepOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Memcpy and memset per operation ([CUDA memcpy HtoD], ..., [CUDA memset]), by GPU time
    or by bytes, as `nsys stats` prints them."""
    from .. import views
    from ..memory import memory_summary

    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        where, note = c.nvtx_filter(tr, nvtx, where, step)
        df = memory_summary(tr, by=by, where=where)
        hint = c.empty_hint(tr, where, df.height)
    c.show(
        views.memory,
        df,
        by=by,
        fmt=fmt,
        output=output,
        note=note,
        hint=hint,
        timeunit=timeunit,
        source=tr.path.name,
    )
