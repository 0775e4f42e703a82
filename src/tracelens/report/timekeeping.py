"""GPU time accounting on the page: utilization per device (:meth:`Trace.util`) and the
steps table (:meth:`Trace.steps`), or a note where a trace is too big to sort every GPU
operation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .omitted import Omitted

if TYPE_CHECKING:
    from ..compare.collect import Side as DiffSide
    from ..steps import Steps
    from ..trace import Trace
    from ..util import Util

STEP_ROWS = 40  # steps listed per trace (outliers and warm-up steps always are)


# trace.util() and trace.steps() sort every GPU operation; above the diff's limit
# (data/clues.toml threshold.util_max_launches, with its reason) the page leaves them out
# and says so.
def _max_operations() -> int:
    from ..compare.clues import threshold

    return int(threshold("util_max_launches"))


def util_rows(util: Util | None) -> list[dict[str, Any]]:
    """:meth:`tracelens.Trace.util` per device, with each part of the span as a share."""
    if util is None:
        return []
    rows = []
    for r in util.frame.iter_rows(named=True):
        span = r["span_ns"] or 1
        parts = {
            "compute": r["compute_ns"],
            "communication": r["exposed_communication_ns"],
            "memory": r["exposed_memory_ns"],
            "idle": r["idle_ns"],
        }
        rows.append({**r, "parts": {k: v / span for k, v in parts.items()}})
    return rows


def step_rows(steps: Steps | None) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """The rows of the steps table (the first STEP_ROWS steps, and every outlier or warm-up
    step after them), the summary (:meth:`Steps.summary`), and what was left out."""
    if steps is None or not steps.count:
        return [], {}, None
    frame = steps.frame.sort("step", "device")
    keep = frame.filter((frame["step"] <= STEP_ROWS) | frame["outlier"] | frame["warmup"])
    left = frame["step"].n_unique() - keep["step"].n_unique()
    note = f"{left:,} more steps without anything unusual are not listed" if left else None
    return keep.to_dicts(), steps.summary(), note


def timekeeping(
    trace: Trace, label: str, omitted: list[Omitted], read: DiffSide | None = None
) -> tuple[Util | None, Steps | None]:
    """trace.util() and trace.steps() (those the diff read, ``read``, when it did), unless
    the trace has more than threshold.util_max_launches GPU operations (then None, None,
    and the page says so)."""
    info = trace.info
    ops = info.count("kernel") + info.count("memcpy") + info.count("memset")
    limit = _max_operations()
    if ops > limit:
        omitted.append(
            Omitted(
                f"{label}: steps and utilization",
                f"left out above {limit:,} GPU operations ({ops:,} here; they sort every "
                "operation): run `tracelens steps` and `tracelens util`; "
                "the detail window is the busiest stretch instead of a step",
            )
        )
        return None, None
    if read is not None and read.util is not None and read.steps is not None:
        return read.util, read.steps
    return trace.util(), trace.steps()
