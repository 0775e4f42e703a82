"""The two sides of a diff: how they are named (:func:`side_labels`) and read
(:func:`collect_sides`: each through its filter, once when a file is compared with itself,
side by side in two threads when both are small enough files)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..filters import EventFilter

if TYPE_CHECKING:
    from pathlib import Path

    from ..trace import Trace


def side_labels(
    path_a: Path, path_b: Path, label_a: str | None = None, label_b: str | None = None
) -> tuple[str, str, bool]:
    """How the two sides are named, and whether they are one file. By default each side is
    its file name; two files of the same name in different directories are told apart by
    as many parent directories as it takes (``run1/x.sqlite``, ``run2/x.sqlite``); a file
    compared with itself keeps its name on both sides (a note says so). Given labels are
    kept as they are unless they are equal (then ``A (...)``/``B (...)``)."""
    try:
        same_file = os.path.samefile(path_a, path_b)
    except OSError:
        same_file = False
    if label_a is None and label_b is None and not same_file and path_a.name == path_b.name:
        parts_a, parts_b = path_a.resolve().parts, path_b.resolve().parts
        keep = 1
        while keep < min(len(parts_a), len(parts_b)) and parts_a[-keep:] == parts_b[-keep:]:
            keep += 1
        label_a, label_b = "/".join(parts_a[-keep:]), "/".join(parts_b[-keep:])
    label_a = label_a or path_a.name
    label_b = label_b or path_b.name
    if label_a == label_b and not same_file:
        label_a, label_b = f"A ({label_a})", f"B ({label_b})"
    return label_a, label_b, same_file


def collect_sides(traces, name, wheres, same_file, limits, keep_work):
    """What the diff reads of each side (:func:`.collect.collect`), through each side's
    filter (None: none), and each side's kernels per device (:func:`_collect_side`). A
    file compared with itself through the same filter is one read, made once (a selection
    id belongs to the trace that made it, so none may be in it). Two different exports
    are read side by side when :func:`_side_by_side` allows it."""
    (a, b) = traces
    where_a, where_b = (where or EventFilter() for where in wheres)
    same_read = same_file and where_a == where_b and where_a.selection is None
    if same_read:
        # One read compared with itself: every device pair changed alike (1.0), nothing to
        # count.
        sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work, False)
        return sa, sa, (kernels_a, kernels_a)
    if not same_file and _side_by_side(a, b):
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        # B in a second thread, in this thread's context (the engine's limits): the reads
        # and sweeps run in DuckDB and polars, which leave the interpreter lock, so the two
        # sides share the machine's cores instead of taking turns.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tracelens-diff") as pool:
            context = contextvars.copy_context()
            side_b = pool.submit(context.run, _collect_side, b, name, where_b, limits, keep_work)
            sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work)
            sb, kernels_b = side_b.result()
    else:
        sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work)
        sb, kernels_b = _collect_side(b, name, where_b, limits, keep_work)
    return sa, sb, (kernels_a, kernels_b)


def _side_by_side(a: Trace, b: Trace) -> bool:
    """Whether two different exports are read at once, each in its own thread: when both
    are files (SQLite exports or Parquet-cached ones) whose sizes add up to at most
    ``concurrent_sides_max_mb`` (data/clues.toml): the two reads then hold their peak
    memory at the same time."""
    import stat

    from .clues import threshold

    total = 0
    for trace in (a, b):
        try:
            info = os.stat(trace.path)
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
        total += info.st_size
    return total <= threshold("concurrent_sides_max_mb") * 1e6


def _collect_side(trace, name, where, limits, keep_work, per_device=True):
    """One side (:func:`.collect.collect`) and, unless its export lists one GPU, its
    kernels per device (:func:`.model.device_kernels`, for the per-device typical change),
    from the figures per device and name id collect takes while it reads the side (not
    the work: ~360 MB on two 4-GPU 5M-kernel traces). A trace of one GPU reads as before
    (None), as does any with ``per_device`` false."""
    from . import model
    from .collect import collect

    util_limit, nvtx_limit = limits
    many = per_device and len(trace.gpus()) != 1
    side = collect(trace, name, where, util_limit, nvtx_limit, keep_work, per_device=many)
    kernels = model.device_kernels(side) if many else None
    side.kernel_ids_by_device = None
    return side, kernels
