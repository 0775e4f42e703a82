"""tracelens census: top kernels by GPU time."""

from __future__ import annotations

from typing import Annotated

import typer

from ..choices import NAME_KINDS
from . import _common as c
from ._app import app
from ._notes import join_notes


@app.command()
@c.grouped
def census(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    name: Annotated[
        str,
        c.choice(
            "--name", values=NAME_KINDS, help="Kernel name to group by: {values}", metavar="KIND"
        ),
    ] = "demangled",
    by_launch_config: Annotated[
        bool,
        typer.Option("--by-launch-config", help="Also group by grid and block (GridXYZ, BlockXYZ)"),
    ] = False,
    per_step: Annotated[
        bool,
        typer.Option(
            "--per-step",
            help="Time and calls per step: the work of the steady-state steps (or --steps "
            "A:B), divided by their number",
        ),
    ] = False,
    top: c.TopOpt = None,
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """Top kernels by GPU time, as `nsys stats --report cuda_gpu_kern_sum`.

    CUDA graph replays traced at graph level (nsys's default --cuda-graph-trace=graph) are
    not broken down by kernel, so they are not in these numbers: when the trace has some,
    a last line 'note: N CUDA graph replays (T of GPU time) ...' says so (table, markdown),
    or 'tracelens: note: ...' on stderr (csv, json: stdout stays data only). The same
    holds for lineup, danger, stakeout, decode --trace, nvtx --kernels and api --exec.

    --per-step: Per step (time) and Calls per step instead of Total and Instances, over the
    GPU work of the steps (see `tracelens steps`): the steady state, warm-up set aside, or
    --steps A:B; a note says how many steps and how they were found.
    """
    from .. import views
    from ..census import census_rows, kernel_summary_per_step_rows

    options = dict(name=name, by_launch_config=by_launch_config, top=top)
    with c.open_filtered(trace, demo, filters, step=not per_step) as (tr, where, nvtx_note):
        if per_step:
            rows, chosen = kernel_summary_per_step_rows(
                tr, **options, where=where, steps=filters.step
            )
            where, nvtx_note = chosen.where, join_notes(nvtx_note, chosen.note(per_step=True))
            damage = tr.damage_note(("kernel",))
        else:
            rows, damage = census_rows(tr, **options, where=where)
        note = join_notes(nvtx_note, tr.graph_note(where), damage)
        hint = c.empty_hint(tr, where, rows.height)
    out.show(views.census, rows, tr, note=note, hint=hint, top=top)
