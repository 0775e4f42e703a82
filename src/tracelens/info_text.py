"""A :class:`~tracelens.trace.TraceInfo` as text (``tracelens info``): the export, its
nsys and schema versions, span, GPUs, processes and event counts."""

from __future__ import annotations

from .units import fmt_ns


def describe_info(info) -> str:
    """A TraceInfo as readable text."""
    size_mb = info.size_bytes / 1e6
    schema = info.schema_version or "none (exports before nsys 2022.2 carry no schema version)"
    lines = [
        f"file       {info.path} ({size_mb:,.1f} MB)",
        f"nsys       {info.nsys_version or 'unknown'}",
        f"schema     {schema}" + (f" [{info.metadata_table}]" if info.metadata_table else ""),
        f"span       {fmt_ns(info.start_ns)} → {fmt_ns(info.end_ns)} "
        f"(duration {fmt_ns(info.duration_ns)}, from session start)",
    ]
    if not info.gpus:
        lines.append("gpus       none described in the export")
    for g in info.gpus:
        bits = [
            b
            for b in (
                f"--device {g.cuda_device}" if g.cuda_device is not None else None,
                g.bus_location,
                f"{g.sm_count} SMs" if g.sm_count else None,
                f"{g.memory_bytes / 2**30:,.1f} GiB" if g.memory_bytes else None,
                f"sm_{g.compute_capability.replace('.', '')}" if g.compute_capability else None,
            )
            if b
        ]
        lines.append(
            f"gpu {g.id!s:<6} {g.name or 'unnamed'}" + (f" ({', '.join(bits)})" if bits else "")
        )
    if not info.processes:
        lines.append("processes  none with CUDA activity")
    for p in info.processes:
        lines.append(f"process    {p.pid} {p.name or ''}".rstrip())
    for e in info.events:
        if e.kind == "graph":  # shown only when the export has graph-level replays
            if e.present:
                lines.append(f"{e.kind:<10} {_graph_replays(e.count, info.graph_replay_ns)}")
            continue
        count = f"{e.count:,}" if e.present else "not captured (no table)"
        lines.append(f"{e.kind:<10} {count}")
    return "\n".join(lines) + "\n"


def _graph_replays(count: int, total_ns: int) -> str:
    return (
        f"{count:,} {'replay' if count == 1 else 'replays'}, {fmt_ns(total_ns)} of GPU time, "
        "not broken down by kernel (re-profile with --cuda-graph-trace=node)"
    )
