"""A :class:`~tracelens.trace.TraceInfo` as text (``tracelens info``): the export, its
nsys and schema versions, span, GPUs, processes and event counts."""

from __future__ import annotations

from .escape import printable
from .units import fmt_ns


def describe_info(info) -> str:
    """A TraceInfo as readable text: one ``key value`` line per fact."""
    return "".join(f"{key:<10} {value}\n" for key, value in info_fields(info))


def info_markdown(info) -> str:
    """A TraceInfo as Markdown: the lines of :func:`describe_info` as a two-column table
    (the program's process names escaped, see :func:`~tracelens.escape.md_text`)."""
    from pathlib import Path

    from .escape import md_text

    rows = "".join(f"| {md_text(key)} | {md_text(value)} |\n" for key, value in info_fields(info))
    title = f"**info of {md_text(Path(info.path).name)}**"
    return f"{title}\n\n| Field | Value |\n| :--- | :--- |\n{rows}"


def info_fields(info) -> list[tuple[str, str]]:
    """The facts of a TraceInfo as (key, value) pairs, in the order ``tracelens info``
    prints them (a GPU's key is ``gpu ID``; a kind of event's key is the kind)."""
    size_mb = info.size_bytes / 1e6
    schema = info.schema_version or "none (exports before nsys 2022.2 carry no schema version)"
    fields = [
        ("file", f"{info.path} ({size_mb:,.1f} MB)"),
        ("nsys", f"{info.nsys_version or 'unknown'}"),
        ("schema", schema + (f" [{info.metadata_table}]" if info.metadata_table else "")),
        (
            "span",
            f"{fmt_ns(info.start_ns)} → {fmt_ns(info.end_ns)} "
            f"(duration {fmt_ns(info.duration_ns)}, from session start)",
        ),
    ]
    if not info.gpus:
        fields.append(("gpus", "none described in the export"))
    fields += [(f"gpu {g.id}", _gpu(g)) for g in info.gpus]
    if not info.processes:
        fields.append(("processes", "none with CUDA activity"))
    # the program's names: a line break in one would start a line without a key
    fields += [("process", f"{p.pid} {printable(p.name or '')}".rstrip()) for p in info.processes]
    for e in info.events:
        if e.kind == "graph":  # shown only when the export has graph-level replays
            if e.present:
                fields.append((e.kind, _graph_replays(e.count, info.graph_replay_ns)))
            continue
        if e.kind == "osrt":  # shown only when captured (-t osrt), so other exports read as before
            if e.present:
                fields.append((e.kind, _osrt_calls(e.count)))
            continue
        fields.append((e.kind, f"{e.count:,}" if e.present else "not captured (no table)"))
    return fields


def _osrt_calls(count: int) -> str:
    # where to read them: an export with only these calls otherwise looks empty
    if not count:
        return "0 OS runtime calls"
    return f"{count:,} OS runtime {'call' if count == 1 else 'calls'} (by function: tracelens api --osrt)"


def _gpu(g) -> str:
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
    # nsys 2021.3 wrote 'NVIDIA GeForce RTX 3060 Laptop ' (a trailing space)
    name = printable((g.name or "").strip()) or "unnamed"
    return name + (f" ({', '.join(bits)})" if bits else "")


def _graph_replays(count: int, total_ns: int) -> str:
    return (
        f"{count:,} {'replay' if count == 1 else 'replays'}, {fmt_ns(total_ns)} of GPU time, "
        "not broken down by kernel (re-profile with --cuda-graph-trace=node)"
    )
