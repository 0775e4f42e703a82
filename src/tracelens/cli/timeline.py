"""tracelens timeline: what ran when."""

from __future__ import annotations

from typing import Annotated

import typer

from . import _common as c
from ._app import app
from ._notes import MACHINE_FORMATS, join_notes

# timeline filters only its GPU rows by device and stream; NVTX ranges and API calls stay.
_GpuRowsDevice = Annotated[
    int | None,
    typer.Option("--device", help="Only GPU rows of this CUDA device (NVTX and API stay)"),
]
_GpuRowsStream = Annotated[
    int | None,
    typer.Option("--stream", help="Only GPU rows of this CUDA stream (NVTX and API stay)"),
]

_FILTERS = c.filter_options(device=_GpuRowsDevice, stream=_GpuRowsStream)


@app.command()
@c.grouped
def timeline(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    api: Annotated[bool, typer.Option("--api", help="Also list CUDA API calls")] = False,
    gap: Annotated[
        int,
        c.time_option(
            "--gap", "Idle stretches of a device longer than TIME become rows of kind gap"
        ),
    ] = "100us",
    name: c.NameOpt = "demangled",
    limit: Annotated[
        int,
        c.at_least(
            "--limit", "-n", minimum=0, meaning="every row", help="Rows to show (0: every row)"
        ),
    ] = 100,
    offset: Annotated[int, c.at_least("--offset", minimum=0, help="Rows to skip first")] = 0,
    filters: c.Filters = _FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """Kernels, memcpys (kind, bytes, GB/s), memsets, CUDA graph replays traced at graph
    level (kind graph) and NVTX ranges in time order, with the idle gaps of each device; times (the Start column, --start/--end) from session start,
    as in every command."""
    from .. import timeline as analysis

    with c.open_filtered(trace, demo, filters) as (tr, where, note):
        # a page as plain rows (no polars import); every row of a big trace from columns
        read = analysis.timeline_rows if limit else analysis.timeline
        result = read(tr, api=api, gap_ns=gap, name=name, limit=limit, offset=offset, where=where)
        # table and markdown say it in their caption; csv and json hold only the rows
        cut = analysis.cut_note(result) if out.fmt in MACHINE_FORMATS else None
        gaps = analysis.selection_gaps_note(result, where)
        note = join_notes(note, tr.damage_note(), gaps, cut)
        hint = c.empty_hint(tr, where, result.total)
        if not (hint or result.total or api) and (calls := analysis.api_calls_only(tr)):
            hint = (
                f"no GPU work or NVTX range in {tr.path.name}, only {calls:,} CUDA API "
                f"{'call' if calls == 1 else 'calls'}: --api lists {'it' if calls == 1 else 'them'}"
            )
    out.show(analysis.render, result, tr, note=note, hint=hint)
