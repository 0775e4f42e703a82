"""What the diff reads from one trace: totals, census, copies, launch sequences, launch
grids and hidden CUDA graph replays, all through query files and public functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace

# Launches per device that the in-order alignment looks at (difflib is quadratic in the
# worst case; the earliest launches are where a changed path first shows).
ALIGN_LIMIT = 20_000


@dataclass
class Side:
    totals: dict[str, int | None]
    census: pl.DataFrame  # name, instances, total_ns, avg_ns, med_ns, ...
    copies: dict[int, dict[str, int]]
    sequences: dict[int, list[str]]
    launches_per_device: dict[int, int]
    blocks: dict[str, float]  # mean thread blocks per launch, per kernel name
    graph: tuple[int, int]  # CUDA graph replays traced at graph level: (count, ns)


def collect(trace: Trace, name_kind: str, where: EventFilter) -> Side:
    from ..census import kernel_summary

    trace.require_kernels()
    window = {"start_ns": where.start_ns, "end_ns": where.end_ns}
    totals = trace.query("trace_totals", **window).to_dicts()[0]
    census = kernel_summary(trace, name=name_kind, where=where)
    copies = {r["copy_kind"]: r for r in trace.query("copy_kinds", **window).iter_rows(named=True)}
    seq = trace.query("launch_sequence", name_kind=name_kind, limit=ALIGN_LIMIT, **window)
    sequences: dict[int, list[str]] = {}
    for device, name in seq.select("device", "name").iter_rows():
        sequences.setdefault(device, []).append(name)
    launches = dict(trace.query("launches_per_device", **window).iter_rows())
    blocks = {
        name: avg
        for name, avg, _threads in trace.query(
            "kernel_blocks", name_kind=name_kind, **window
        ).iter_rows()
    }
    graph = trace.graph_replays(where)
    return Side(totals, census, copies, sequences, launches, blocks, graph)
