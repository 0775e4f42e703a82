"""tracelens memory: GPU time or bytes per memory operation."""

from __future__ import annotations

from typing import Annotated

from ..choices import MEMORY_BY
from . import _common as c
from ._app import app
from ._notes import join_notes


@app.command()
@c.grouped
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
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """Memcpy and memset per operation ([CUDA memcpy HtoD], ..., [CUDA memset]), by GPU time
    or by bytes, as `nsys stats` prints them."""
    from .. import views
    from ..memory import memory_summary, replays_note

    with c.open_filtered(trace, demo, filters) as (tr, where, note):
        df = memory_summary(tr, by=by, where=where)
        note = join_notes(note, replays_note(tr, where), tr.damage_note(("memcpy", "memset")))
        hint = c.empty_hint(tr, where, df.height)
    out.show(views.memory, df, tr, note=note, hint=hint, by=by)
