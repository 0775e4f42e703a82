"""Which devices' launch loops are one program's steps (:mod:`tracelens.steps_period`).

Each device's launch sequence is searched for a period on its own, and step N of every
device is its Nth iteration: the ranks of one job share step numbers, so ``--step 7`` is
every rank's 7th iteration. Two unrelated programs, each on its own GPU, are no such job:
numbered alike, step 3 was both programs' third iteration and ``util --step 3`` spanned
both. So the devices are grouped into loops: two devices run one loop when a process
launched on both, or when their motifs share at least ``[period] same_loop_min_shared`` of
the smaller motif's distinct kernels (ranks of one job, pipeline stages that share their
layers' kernels); the loop whose steps hold the most GPU time is the steps, and each other
loop is named in the detail, its devices in no step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .units import fmt_ns

if TYPE_CHECKING:
    from .steps_period import DevicePeriod
    from .trace import Trace


def busiest_loop(
    trace: Trace,
    found: dict[int, DevicePeriod],
    launchers: dict[int, tuple[int, ...]],
    params: dict[str, Any],
    conf: dict[str, Any],
) -> tuple[dict[int, DevicePeriod], str]:
    """``found`` (each device's period steps) restricted to the devices of the loop whose
    steps hold the most GPU time, and '; not in the steps: ...' naming the other loops ('':
    every device runs one loop). ``launchers``: per device, its launching processes where
    read; the others' are read (``queries/steps_launch_rows.sql`` again) only when motifs
    alone leave several loops. ``conf``: ``[period]`` of ``data/steps.toml``."""
    if len(found) < 2:
        return found, ""
    devices = sorted(found)
    kernels = {d: set(found[d].motif) for d in devices}
    share = conf["same_loop_min_shared"]

    def same_motif(a: int, b: int) -> bool:
        common = len(kernels[a] & kernels[b])
        return common >= share * min(len(kernels[a]), len(kernels[b]))

    loops = _groups(devices, same_motif)
    if len(loops) == 1:
        return found, ""
    pids = _device_pids(trace, found, launchers, params)
    loops = _groups(devices, lambda a, b: same_motif(a, b) or bool(pids[a] & pids[b]))
    if len(loops) == 1:
        return found, ""
    gpu = {d: _gpu_ns(found[d]) for d in devices}
    kept = max(loops, key=lambda loop: (sum(gpu[d] for d in loop), -min(loop)))
    held = set().union(*(kernels[d] for d in kept))
    kept_ns = sum(gpu[d] for d in kept)
    said = [
        _other_loop(loop, found, held, sum(gpu[d] for d in loop), kept_ns)
        for loop in loops
        if loop is not kept
    ]
    return {d: found[d] for d in kept}, "; not in the steps: " + "; ".join(said)


def _groups(devices: list[int], joined) -> list[list[int]]:
    """``devices`` parted into groups, two devices in one group when ``joined(a, b)`` links
    them directly or through others; each group sorted, the groups by their first device."""
    group = {d: d for d in devices}

    def root(d: int) -> int:
        while group[d] != d:
            d = group[d]
        return d

    for i, a in enumerate(devices):
        for b in devices[i + 1 :]:
            if root(a) != root(b) and joined(a, b):
                group[root(b)] = root(a)
    parts: dict[int, list[int]] = {}
    for d in devices:
        parts.setdefault(root(d), []).append(d)
    return sorted(parts.values(), key=min)


def _device_pids(trace, found, launchers, params) -> dict[int, set[int]]:
    """Per device of ``found``, the processes that launched there: the loop's (``pids``)
    where other programs launched too, else ``launchers``, else read."""
    pids = {d: set(f.pids) for d, f in found.items() if f.pids is not None}
    pids |= {d: set(p) for d, p in launchers.items() if d in found and d not in pids}
    missing = [d for d in found if d not in pids]
    if missing:
        # Read again with their processes (the export's context table gave one process per
        # device, so the search did not read them): rare, several devices' loops differing.
        rows = trace.query("steps_launch_rows", any_order=True, **params, streams=False, pids=True)
        for d, launched in rows.group_by("device").agg("pid").rows():
            if d in missing:
                pids[d] = set(launched)
    return pids


def _gpu_ns(found: DevicePeriod) -> int:
    """The launches' GPU time in one device's steps (kernels and graph replays)."""
    import polars as pl

    return int(found.steps.select((pl.col("end_ns") - pl.col("start_ns")).sum()).item() or 0)


def _other_loop(loop: list[int], found, held: set[int], loop_ns: int, kept_ns: int) -> str:
    """'the loop on device 1, another program's (...)' for the detail."""
    from .steps_period import _launch_count

    first = found[loop[0]]
    where = f"device {loop[0]}" if len(loop) == 1 else "devices " + _and(loop)
    common = len(set(first.motif) & held)
    ours = "none of them" if not common else f"{common:,} of them"
    steps = max(found[d].steps["step"].n_unique() for d in loop)
    return (
        f"the loop on {where}, another program's (a motif of {_launch_count(first.motif)}, "
        f"{ours} the steps', in {steps:,} steps holding {fmt_ns(loop_ns)} of GPU time, less "
        f"than the steps' {fmt_ns(kept_ns)})"
    )


def _and(items: list[int]) -> str:
    return ", ".join(str(i) for i in items[:-1]) + f" and {items[-1]}"
