"""The steps of a cached trace, kept in its cache entry.

``tracelens steps`` of a whole trace (no filter, no ``--range``) depends on the trace and on
tracelens alone, so the first such search through the cache (``tracelens steps``, or the
report, fingerprint or diff of the whole trace, which hand the search the launches they
read) keeps what it found (the steps
frame, the NVTX ranges of NVTX steps, how they were found and the motif) beside the cached
tables (derived files of :mod:`tracelens.cache`, as util's accounting:
:mod:`tracelens.util_workfile`), and later searches read that back instead of reading,
ordering and searching every launch again (5M-kernel benchmark, cached: the launches' read,
their launch order and the period search are ~0.7 of steps' ~1.2 CPU s). The version is
:func:`tracelens.util_workfile.code_version`: any change to tracelens searches again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .steps_outside import Outside
from .util_workfile import (
    bundle_name,
    code_version,
    read_bundle,
    read_kept,
    write_bundle,
    write_kept,
)

if TYPE_CHECKING:
    import polars as pl

    from .steps import Steps
    from .trace import Trace

__all__ = ["keep_steps", "keep_top_kernels", "kept_steps", "kept_top_kernels"]


_STEPS = "tracelens_steps"


def kept_steps(trace: Trace) -> Steps | None:
    """The steps of the whole trace when an earlier search kept them; else None."""
    import polars as pl

    from .steps import Steps

    # the kernel totals of NVTX steps rank their top kernels (stepwork.step_report); without
    # them that is a pass over every call and kernel (~3.7 of 4.4 CPU s on the 5M-kernel
    # NVTX trace's repeat run)
    parts = ("frame", "ranges", "kernel_totals")
    flags = {"ranges": "has_ranges", "kernel_totals": "has_kernel_totals"}
    kept = read_bundle(trace, _STEPS, parts, flags)
    if kept is None:
        return None
    row, tables = kept
    frame, ranges = tables["frame"], tables["ranges"]
    motif = {int(d): tuple(names) for d, names in json.loads(row["motif"]).items()}
    # The search's frame is sorted by step (and device), which polars knows and Parquet
    # does not say: told again, the per-step group-bys take the same (ordered) path, and
    # floating-point sums (the std of the step times) come out to the same last digit.
    frame = frame.with_columns(pl.col("step").set_sorted())
    totals = tables["kernel_totals"]
    outside = Outside(**json.loads(row["outside"]))
    processes = {int(d): tuple(pids) for d, pids in json.loads(row["processes"]).items()}
    return Steps(
        row["method"],
        row["detail"],
        frame,
        motif,
        row["source"],
        ranges,
        kernel_totals=totals,
        outside=outside,
        processes=processes,
    )


def keep_steps(trace: Trace, steps: Steps) -> None:
    """Keep ``steps`` (of the whole trace) in the trace's cache entry for later searches;
    nothing when the trace reads no cache entry."""
    import polars as pl

    from .util_workfile import keeps

    if not keeps(trace):
        return
    motif = {str(d): list(names) for d, names in steps.motif.items()}
    figures = pl.DataFrame(
        {
            "method": [steps.method],
            "detail": [steps.detail],
            "source": [steps.source],
            "motif": [json.dumps(motif, ensure_ascii=False)],
            "outside": [json.dumps(steps.outside.as_dict())],
            "processes": [json.dumps({str(d): list(p) for d, p in steps.processes.items()})],
            "has_ranges": [steps.ranges is not None],
            "has_kernel_totals": [steps.kernel_totals is not None],
        }
    )
    parts = {"frame": steps.frame, "ranges": steps.ranges, "kernel_totals": steps.kernel_totals}
    write_bundle(trace, _STEPS, parts, figures)


def kept_top_kernels(trace: Trace, top: int) -> pl.DataFrame | None:
    """The ``top`` kernels of each step and device of the whole trace's steps
    (:func:`tracelens.stepwork.step_report`), when an earlier run kept them; else None."""
    return read_kept(trace, _top_kernels_name(top), code_version())


def keep_top_kernels(trace: Trace, top: int, frame: pl.DataFrame) -> None:
    """Keep the ``top`` kernels of each step and device of the whole trace's steps: ranking
    them is a pass over every operation of the steps (1.3 of a repeat's 2.0 s on a 2.5M-launch
    periodic trace, whose steps are kept), which a later run reads back instead; nothing
    when the trace reads no cache entry."""
    write_kept(trace, _top_kernels_name(top), code_version(), frame)


def _top_kernels_name(top: int) -> str:
    return bundle_name(_STEPS, f"top_kernels_{top}")
