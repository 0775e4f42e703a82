"""Why a valid query came back empty: one sentence for the person who asked.

An empty result is not an error (exit 0), but "nothing" reads like a bug when the window
lies outside the trace or the device does not exist; :func:`why_empty` says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .units import fmt_ns

if TYPE_CHECKING:
    from .filters import EventFilter
    from .trace import Trace


@dataclass(frozen=True)
class Hint:
    """Why a result is empty, when the fix is a parameter: ``template`` has ``{param}``
    where its name goes, so that the command line can say its flag instead (as
    :meth:`tracelens.errors.UsageError.naming`)."""

    template: str
    param: str

    def __str__(self) -> str:
        return self.naming(self.param)

    def naming(self, name: str) -> str:
        return self.template.replace("{param}", name)


def why_empty(trace: Trace, where: EventFilter | None) -> str | None:
    """The reason a result filtered by ``where`` is empty, when the filter explains it:
    a window outside the trace's span, or a device, stream or process with no GPU work
    (listing those present). None when the filters do not explain it."""
    from .filters import in_window

    if where is None:
        return None
    # the span only when a window asks: reading it scans every GPU record of the export
    # (1.5 CPU s of a 5M-kernel one read directly), which an empty result without a
    # window (findings where no rule fired) must not pay
    # the window asked, not the selected work's span an --nvtx or --step selection set
    # inside it (filters.window_to_selection): a window nobody asked for is not named
    start, end = where.asked_window or (where.start_ns, where.end_ns)
    windowed = start is not None or end is not None
    info = trace.info if windowed else None
    if info is not None and info.start_ns is not None:
        t0 = start if start is not None else info.start_ns
        t1 = end if end is not None else info.end_ns
        if not in_window(info.start_ns, info.end_ns, start, end):
            if start is None:
                window = f"window until {fmt_ns(t1)}"
            elif end is None:
                window = f"window from {fmt_ns(t0)}"
            else:
                window = f"window {fmt_ns(t0)}–{fmt_ns(t1)}"
            return (
                f"{window} is outside the trace's span "
                f"{fmt_ns(info.start_ns)}–{fmt_ns(info.end_ns)} from session start"
            )
    asked = {"device": where.device, "stream": where.stream, "pid": where.pid}
    if all(v is None for v in asked.values()):
        return None
    present: dict[str, list[int]] = {"device": [], "stream": [], "pid": []}
    for kind, value in trace.query_rows("gpu_work_ids").data:
        present[kind].append(value)
    plural = {"device": "devices", "stream": "streams", "pid": "processes"}
    for kind, value in asked.items():
        if value is not None and value not in present[kind]:
            ids = ", ".join(str(i) for i in present[kind]) or "none"
            return f"no GPU work on {kind} {value}; {plural[kind]} present: {ids}"
    return None


# --style value as nsys names it -> (its words, the other style's words, its flag value)
_STYLE_WORDS = {"PushPop": ("push/pop", "start/end", "startend"),
                "StartEnd": ("start/end", "push/pop", "pushpop")}  # fmt: skip


def why_no_ranges(trace: Trace, style: str | None = None) -> Hint | None:
    """Why ``nvtx`` found no NVTX range (``style``: 'PushPop' or 'StartEnd' as nsys names
    them, or None for both) in an export that has an NVTX table: it is empty, none of its
    events is a range (marks and registrations only), or none is of that style. None when
    there are such ranges."""
    trace.load_nvtx_text()
    pushpop, startend, other = trace.query_rows("nvtx_event_kinds").data[0]
    if style in _STYLE_WORDS:
        asked, others = (pushpop, startend) if style == "PushPop" else (startend, pushpop)
        if others and not asked:
            words, other_words, flag = _STYLE_WORDS[style]
            ranges = "its NVTX range is" if others == 1 else f"its {others:,} NVTX ranges are"
            return Hint(f"no {words} NVTX ranges: {ranges} {other_words} ({{param}} {flag})",
                        "style")  # fmt: skip
    if pushpop or startend:
        return None
    if not other:
        return Hint("no NVTX ranges: the export's NVTX table is empty", "style")
    if other == 1:
        events = "its one NVTX event is a mark or a domain or string registration"
    else:
        events = f"its {other:,} NVTX events are marks or domain and string registrations"
    return Hint(f"no NVTX ranges: {events}, which nsys does not sum either", "style")
