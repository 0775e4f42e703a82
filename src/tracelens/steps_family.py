"""Whether a family of top-level NVTX ranges is the steps, or another program's loop is.

A family of repeated top-level ranges (``[ranges]`` in ``data/steps.toml``) is taken as the
steps before the launch period is searched. On a GPU two programs share, the ranges can be
the wrong program's: a monitor that marks each poll and launches a quarter of the GPU time,
beside a training loop with no NVTX that launches the rest. A profiler user expects the
loop that does most of the GPU work to be the steps. So a family yields to the launch
period when the period's loop is another program's (none of its devices' loop processes
ran the family's ranges) and its steps' kernels hold more than ``[ranges]
other_loop_over`` times the family's GPU time; the detail then names the ranges passed
over, which are still the steps when named as their range (``find_steps(range=...)``).

The period is searched only when it could win: when the GPU time launched from threads
that run no top-level range at all is more than that share (a single annotated program
launches from its ranges' threads; its loop is its own, and it keeps its NVTX steps
without a second search)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .steps_open import quoted

if TYPE_CHECKING:
    import polars as pl

    from .steps import Steps
    from .steps_ranges import Launched
    from .trace import Trace


def other_programs_loop(
    trace: Trace,
    row: dict[str, Any],
    ranges: pl.DataFrame,
    launched: Launched | None,
    params: dict[str, Any],
    launches: pl.DataFrame | None,
) -> Steps | None:
    """The period steps of another program's loop that did more of the GPU's work than
    the family ``row`` (a row of ``steps_range_families.sql``; ``ranges``: its steps'
    ranges, :attr:`Steps.ranges`), with the detail saying why the family is not the steps;
    None when the family is the steps (see the module docstring). ``launched``: the
    operations the family search read (:func:`tracelens.steps_ranges.range_families`);
    ``launches``: as :func:`tracelens.steps.find_steps` takes them."""
    import polars as pl

    from ._schema import pid_of
    from .steps import settings
    from .steps_period import period_steps

    conf = settings()
    over = conf["ranges"]["other_loop_over"]
    if launched is None or not launched.ops.height:
        return None
    ops = launched.ops
    dur = pl.col("end") - pl.col("start")
    # lazily: the sum reads two columns of those rows, no copy of every column
    unmarked = ops.lazy().filter(pl.col("thread").is_null()).select(dur.sum()).collect().item()
    unmarked = unmarked or 0
    if unmarked <= over * row["gpu_ns"]:
        return None
    found = period_steps(trace, params, conf, launches)
    if found is None or not found.count:
        return None
    pids = {pid_of(tid) for tid in ranges["global_tid"].unique().to_list()}
    if not _loop_is_another_programs(found, pids, _family_devices(row, launched)):
        return None
    loop_ns = int(found.frame["kernel_ns"].sum())
    if loop_ns <= over * row["gpu_ns"]:
        return None
    total = row["total_gpu_ns"]
    listed = ", ".join(str(p) for p in sorted(pids)[:3]) + (" and more" if len(pids) > 3 else "")
    said = (
        f"; not the steps: the {row['ranges']:,} top-level NVTX ranges like "
        f"{quoted(row['example'])} of another program (process{'es' if len(pids) > 1 else ''} "
        f"{listed}), which launched {row['gpu_ns'] / total:.0%} of the GPU time, less than "
        f"this loop's {loop_ns / total:.0%} (named as the steps' range, they are the steps)"
    )
    return replace(found, detail=found.detail + said)


def _family_devices(row: dict[str, Any], launched: Launched) -> set[int]:
    """The devices that work launched from the family's threads ran on."""
    import polars as pl

    tops = launched.tops
    if tops is None:
        return set()
    tids = set(tops.filter(pl.col("family") == row["family"])["globalTid"].to_list())
    threads = [i + 1 for i, tid in enumerate(launched.tids) if tid in tids]
    held = launched.ops.lazy().filter(pl.col("thread").is_in(threads)).select("device")
    return set(held.unique().collect()["device"].to_list())


def _loop_is_another_programs(found: Steps, pids: set[int], devices: set[int]) -> bool:
    """Whether no device's loop of ``found`` (period steps) is run by the family's
    processes ``pids``: where other programs launched too, its loop's processes
    (:attr:`Steps.processes`) are none of them; elsewhere (the loop is every process's
    there) the family's threads launched nothing on the device (``devices``)."""
    for device in found.frame["device"].unique().to_list():
        loop = found.processes.get(device)
        if loop is None and device in devices:
            return False
        if loop is not None and pids & set(loop):
            return False
    return True
