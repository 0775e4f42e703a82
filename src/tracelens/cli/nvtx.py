"""tracelens nvtx: NVTX ranges, their CPU time and the GPU work they launched."""

from __future__ import annotations

from typing import Annotated

import typer

from ..choices import NVTX_GROUPS, NVTX_STYLES
from . import _common as c
from ._app import app


@app.command()
def nvtx(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    style: Annotated[
        str | None,
        c.choice(
            "--style",
            values=NVTX_STYLES,
            help="Only push/pop ranges (nvtx_pushpop_sum) or start/end ranges (nvtx_startend_sum)",
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
            help="With --gpu: one row per range (nvtx_gpu_proj_trace), with its level, "
            "parent and range stack",
        ),
    ] = False,
    kernels: Annotated[
        bool, typer.Option("--kernels", help="Kernels per range group (nvtx_kern_sum)")
    ] = False,
    group: Annotated[
        str,
        c.choice(
            "--group",
            values=NVTX_GROUPS,
            help="Group --gpu/--kernels rows by the range's name (nsys), its path of names "
            "from the top range down, or PyTorch op ('aten::mm, seq = 12, ...' -> 'aten::mm')",
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
    from .. import nvtx as lib
    from ..errors import UsageError

    if each and not gpu:
        raise UsageError(lib.EACH_NEEDS_GPU.format(each="--each", gpu="--gpu"))
    if group != "name" and not (gpu or kernels):
        raise UsageError(
            lib.GROUP_NEEDS_GPU.format(group="--group", gpu="--gpu", kernels="--kernels")
        )
    with c.open_trace(trace, demo) as tr:
        report = lib.nvtx_report(
            tr, style=style, gpu=gpu, each=each, kernels=kernels, group=group, top=top
        )
        # graph replays traced at graph level: left out of --kernels, counted by --gpu
        note = lib.replays_note(tr, gpu=gpu, kernels=kernels)
        hint = None
        if not report.frame.height and not kernels:  # say why no range was found
            from ..hints import why_no_ranges

            hint = c.hint_text(why_no_ranges(tr, lib.check_style(style) if not gpu else None))
    c.show(
        lib.render, report, fmt=fmt, output=output, note=note, hint=hint, timeunit=timeunit,
        source=tr.path.name, top=top,
    )  # fmt: skip
