"""tracelens census: top kernels by GPU time."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app
from ._notes import with_note


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
    """Top kernels by GPU time, as `nsys stats --report cuda_gpu_kern_sum`.

    CUDA graph replays traced at graph level (nsys's default --cuda-graph-trace=graph) are
    not broken down by kernel, so they are not in these numbers: when the trace has some,
    a last line 'note: N CUDA graph replays (T of GPU time) ...' says so (table, markdown),
    or 'tracelens: note: ...' on stderr (csv, json: stdout stays data only). The same
    holds for lineup, danger, stakeout and decode --trace.
    """
    from ..census import check_name_kind, kernel_summary_rows

    check_choice_args(fmt, timeunit)
    check_name_kind(name)
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        df = kernel_summary_rows(
            tr, name=name, by_launch_config=by_launch_config, top=top, where=where
        )
        title = f"census of {tr.path.name}: GPU time by kernel"
        note = tr.graph_note(where)
    shown = f"{df.height} kernel rows" + (f" (top {top})" if top else "")
    text = c.render_frame(df, fmt, timeunit, title=title, caption=shown)
    c.emit(with_note(text, note, fmt), output)


def check_choice_args(fmt: str, timeunit: str) -> None:
    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
