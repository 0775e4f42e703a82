"""Step ranges the capture stopped inside: an NVTX range that would be a step but has no
end (nsys writes end NULL for a range still open when the capture stopped). Cut by the
capture's end it is no complete step: its time is not a step's time, so it is not counted
(no row, not in the steady-state figures, as the period route drops the incomplete period
after the last complete one), and the steps' detail names it as left out rather than
dropping it silently ("the range 'ProfilerStep#20' (step 21) never ended: the capture
stopped inside it; left out"). nsys's own NVTX reports time such a range to the latest NVTX
timestamp; the steps' enclosing rules do the same (``queries/_nvtx_ranges.sql``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .escape import printable

if TYPE_CHECKING:
    from .trace import Trace


def quoted(label: str) -> str:
    """An NVTX label or a label glob in the steps' detail: in single quotes as the program
    wrote it (or the user typed it), control characters shown as ``\\xNN`` as every other
    output shows them (:func:`tracelens.escape.printable`); not a Python repr, which
    doubles backslashes and switches quotes ('train\\nstep', "it's")."""
    return f"'{printable(label)}'"


def left_open(trace: Trace, pattern: str, match: str, top_level: bool) -> str:
    """'; ...: left out' naming the step ranges (``queries/steps_range_open.sql`` for the
    steps' ``pattern``, ``match`` and ``top_level``) the capture stopped inside, with the
    step number each would have; '' when there is none. Needs ``trace.load_nvtx_text()``."""
    from .steps_judge import step_list

    rows = trace.query_rows(
        "steps_range_open", pattern=pattern, match=match, top_level=top_level
    ).data
    if not rows:
        return ""
    steps = sorted({step for step, *_ in rows})
    labels = sorted({label for _, label, *_ in rows if label is not None})
    processes = len({tid >> 24 for *_, tid in rows})
    named = f" {quoted(labels[0])}" if len(labels) == 1 else ""
    where = f", in {processes:,} processes" if processes > 1 else ""
    numbers = f"step{'s' if len(steps) > 1 else ''} {step_list(steps)}{where}"
    if len(rows) == 1:
        return (
            f"; the range{named} ({numbers}) never ended: the capture stopped inside it; left out"
        )
    return (
        f"; {len(rows):,} ranges{named} ({numbers}) never ended: the capture stopped inside "
        "them; left out"
    )
