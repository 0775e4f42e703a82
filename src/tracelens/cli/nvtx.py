"""tracelens nvtx: NVTX ranges, their CPU time and the GPU work they launched."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from . import app


@app.command()
def nvtx(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    style: Annotated[
        str | None,
        typer.Option(
            "--style",
            help="Only push/pop ranges (nvtx_pushpop_sum) or start/end ranges (nvtx_startend_sum)",
            metavar="pushpop|startend",
        ),
    ] = None,
    gpu: Annotated[
        bool,
        typer.Option(
            "--gpu",
            help="GPU time per range group (nvtx_gpu_proj_sum): each range projected onto "
            "the GPU, from the first to the last GPU operation it launched",
        ),
    ] = False,
    each: Annotated[
        bool,
        typer.Option(
            "--each",
            help="With --gpu: one row per range (nvtx_gpu_proj_trace), with its "
            "level, parent and range stack",
        ),
    ] = False,
    kernels: Annotated[
        bool,
        typer.Option("--kernels", help="Kernels per range group (nvtx_kern_sum)"),
    ] = False,
    group: Annotated[
        str,
        typer.Option(
            "--group",
            help="Group --gpu/--kernels rows by the range's name (nsys), its full path "
            "of names from the top range down, or PyTorch op ('aten::mm, seq = 12, ...' "
            "-> 'aten::mm')",
            metavar="name|path|torch",
        ),
    ] = "name",
    top: c.TopOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """NVTX ranges by time, as `nsys stats --report nvtx_sum`: per range name and style,
    how long the ranges were open (CPU time). Ranges in a named domain are 'domain:label';
    a range left open at the end of the capture lasts until the last NVTX event.

    A GPU operation belongs to a range when the CUDA API call that launched it lies inside
    the range on the same thread (nsys's rule; nested ranges all hold it)."""
    from ..nvtx import TABLE_COLUMNS, nvtx_report

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    with c.open_trace(trace, demo) as tr:
        df, what = nvtx_report(tr, style=style, gpu=gpu, each=each, kernels=kernels, group=group)
        title = f"nvtx of {tr.path.name}: {what}"
    shown = df.head(top) if top else df
    wide = "each" if each else "gpu" if gpu and not kernels else None
    if fmt == "table" and wide:
        shown = shown.select(TABLE_COLUMNS[wide])
    caption = f"{shown.height} of {df.height} rows" if top else f"{df.height} rows"
    c.emit(c.render_frame(shown, fmt, timeunit, title=title, caption=caption), output)
