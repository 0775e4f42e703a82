"""tracelens steps: the iterations of the program, and how regular they are."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from ._app import app
from ._notes import join_notes

# every filter but --step: the steps are what this command finds (`--nvtx` narrows each
# step's work to what the matching ranges launched)
STEP_FILTERS = c.filter_options(step=False)


@app.command()
@c.grouped
def steps(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    range_glob: Annotated[
        str | None,
        typer.Option(
            "--range",
            help="The steps are the NVTX ranges with this label (a glob: 'train_step*')",
            metavar="GLOB",
        ),
    ] = None,
    filters: c.Filters = STEP_FILTERS,
    top_kernels: Annotated[
        int,
        c.at_least(
            "--kernels",
            minimum=0,
            help="Kernels with the most time listed per step and device (0: none)",
        ),
    ] = 3,
    fail_if: c.FailIfOpt = None,
    out: c.Output = c.OUTPUT,
) -> None:
    """The iterations of the program: the NVTX ranges --range names; else well-known step
    markers (ProfilerStep#N) or a repeated top-level NVTX range that launched much of the
    GPU work (decode_step_N); else the period of each device's kernel launch sequence; else
    none, saying why. Per step and device: GPU start/end (the work the step launched),
    CPU range, duration, GPU busy, kernels and kernel time; warm-up steps (leading
    outliers) and outliers (median absolute deviation) are flagged; the summary gives the
    steady state's median, mean, std and p90, and the pacing (step time in order, as a
    sparkline); then the kernels with the most time in each step (--kernels; not in CSV,
    which is the steps table alone).

    --nvtx GLOB: the same steps (numbered as without it), each counting only the GPU work
    launched inside the matching NVTX ranges (the time a step spends in attention, say)."""
    from ..steps_text import render, renders_top_kernels
    from ..steps_within import steps_within

    if not renders_top_kernels(out.fmt):
        top_kernels = 0
    with c.open_filtered(trace, demo, filters) as (tr, where, nvtx_note):
        result = steps_within(tr, range=range_glob, where=where, top_kernels=top_kernels)
        note = join_notes(nvtx_note, tr.damage_note())
    gates = c.check_gates(result.figures(), fail_if)
    out.show(render, result, tr, note=note)
    c.fail_if_tripped(gates)
