"""tracelens census: top kernels by GPU time."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app


@app.command()
def census(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    name: Annotated[
        str,
        typer.Option(
            "--name", help="Kernel name to group by: demangled, short or mangled", metavar="KIND"
        ),
    ] = "demangled",
    by_launch_config: Annotated[
        bool,
        typer.Option("--by-launch-config", help="Also group by grid and block (GridXYZ, BlockXYZ)"),
    ] = False,
    top: c.TopOpt = None,
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Top kernels by GPU time, as `nsys stats --report cuda_gpu_kern_sum`."""
    from ..census import check_name_kind, kernel_summary_rows

    check_choice_args(fmt, timeunit)
    check_name_kind(name)
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        df = kernel_summary_rows(
            tr, name=name, by_launch_config=by_launch_config, top=top, where=where
        )
        title = f"census of {tr.path.name}: GPU time by kernel"
    shown = f"{df.height} kernel rows" + (f" (top {top})" if top else "")
    c.emit(c.render_frame(df, fmt, timeunit, title=title, caption=shown), output)


def check_choice_args(fmt: str, timeunit: str) -> None:
    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
