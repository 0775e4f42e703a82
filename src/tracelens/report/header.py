"""The header of one trace's section: the export (file, nsys and schema versions, capture
time, span), its event counts, processes and GPUs (:attr:`Trace.info`)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from ..units import fmt_bytes, fmt_ns
from . import svg

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..trace import Trace

HEADER_PROCESSES = 4  # processes named in the header


def gpu_kinds(trace: Trace) -> list[str]:
    """One line per kind of GPU: 'GPU 0: NAME (SMs, memory, sm X.Y)' or 'N × NAME (...)'."""
    kinds: dict[str, list[Any]] = {}
    for g in trace.info.gpus:
        bits = []
        if g.sm_count:
            bits.append(f"{g.sm_count} SMs")
        if g.memory_bytes:
            bits.append(f"{g.memory_bytes / 2**30:,.1f} GiB")  # info's figure
        if g.compute_capability:
            bits.append(f"sm {g.compute_capability}")
        text = (g.name or "unknown GPU") + (f" ({', '.join(bits)})" if bits else "")
        # the CUDA ordinal, as --device and the page's tables and lanes number the GPU
        # (nsys's own id of it can differ)
        kinds.setdefault(text, []).append(g.id if g.cuda_device is None else g.cuda_device)
    return [
        (f"{len(ids)} × " if len(ids) > 1 else f"GPU {ids[0]}: ") + text
        for text, ids in kinds.items()
    ]


def header_rows(
    trace: Trace,
    busy_ns: int | None,
    where: EventFilter | None = None,
    selected: str | None = None,
) -> list[tuple[str, str]]:
    """(label, value) rows describing the export; ``busy_ns``: the GPU busy time of the work
    shown, ``where`` (None: all) and ``selected``, what it selects in words (the 'selected'
    row: every other section shows that work alone)."""
    info = trace.info
    started = "—"
    if info.session_start_utc_ns:
        t = _dt.datetime.fromtimestamp(info.session_start_utc_ns / 1e9, tz=_dt.UTC)
        started = t.strftime("%Y-%m-%d %H:%M:%S UTC")
    span = fmt_ns(info.duration_ns)
    if busy_ns:
        # util's busy time holds graph-level CUDA graph replays, which the 'not in this
        # report' row says no kernel or memory figure holds: said, so the two agree
        replays = " with its CUDA graph replays" if trace.graph_replays(where)[0] else ""
        span += f" (GPU busy {fmt_ns(busy_ns)}{' in the selection' if selected else ''}{replays})"
    procs = [f"{p.pid} {p.name or ''}".strip() for p in info.processes]
    shown = "; ".join(svg.clip_text(p, 90) for p in procs[:HEADER_PROCESSES]) or "—"
    if len(procs) > HEADER_PROCESSES:
        shown += f"; +{len(procs) - HEADER_PROCESSES} more"
    rows = [("selected", selected)] if selected else []
    rows += [
        ("file", f"{trace.path.name} ({fmt_bytes(info.size_bytes)})"),
        (
            "nsys / schema",
            f"{info.nsys_version or 'unknown (no metadata)'} / {info.schema_version or '—'}",
        ),
        ("captured", started),
        ("span", span),
        (
            "GPU events",
            f"{event_count(info, 'kernel', 'kernels')} · {event_count(info, 'memcpy', 'memcpys')} · "
            f"{event_count(info, 'memset', 'memsets')}",
        ),
        ("CPU events", cpu_events(info)),
        ("processes", shown),
        ("GPUs", "; ".join(gpu_kinds(trace)) or "—"),
    ]
    notes = left_out_notes(trace, where)
    if notes:
        rows.append(("not in this report", "; ".join(notes)))
    return rows


def cpu_events(info: Any) -> str:
    """'N CUDA API calls · N NVTX events', and the OS runtime calls where the export has
    their table (as info's osrt line; without it, nothing is said: most exports of GPU
    work do not trace them)."""
    said = f"{event_count(info, 'runtime', 'CUDA API calls')} · {event_count(info, 'nvtx', 'NVTX events')}"
    osrt = next((e for e in info.events if e.kind == "osrt"), None)
    if osrt is not None and osrt.present:
        said += f" · {event_count(info, 'osrt', 'OS runtime calls')}"
    return said


def event_count(info: Any, kind: str, label: str) -> str:
    """'N label', or, when the export has no table of the kind, that it was not captured
    (as info says): 0 would read as 'nothing happened', which nobody looked for."""
    event = next((e for e in info.events if e.kind == kind), None)
    if event is not None and not event.present:
        return f"{label.removesuffix(' events')} not captured"
    n = info.count(kind)
    return f"{n:,} {label.removesuffix('s') if n == 1 else label}"  # '1 kernel'


def left_out_notes(trace: Trace, where: EventFilter | None = None) -> list[str]:
    """What no figure of a single trace's report holds, one sentence each (the page's 'not
    in this report' row, the Markdown summary's notes): CUDA graph replays traced at graph
    level (their GPU time is in no kernel or category figure) and damaged records."""
    return [n for n in (trace.graph_note(where), trace.damage_note()) if n]
