"""Which devices' launch loops are one program's steps (:mod:`tracelens.steps_period`).

Each device's launch sequence is searched for a period on its own, and step N of every
device is its Nth iteration: the ranks of one job share step numbers, so ``--step 7`` is
every rank's 7th iteration. Two unrelated programs, each on its own GPU, are no such job:
numbered alike, step 3 was both programs' third iteration and ``util --step 3`` spanned
both. So the devices are grouped into loops: two devices run one loop when a process
launched on both, or when their motifs share at least ``[period] same_loop_min_shared`` of
the smaller motif's distinct kernels (ranks of one job, pipeline stages that share their
layers' kernels); the loop whose steps hold the most GPU time is the steps, and each other
loop is named in the detail, its devices in no step.

Within a device several processes launched on, the loop is one process's (with those whose
steps repeat its kernels: workers of one job): :func:`busiest_process` weighs their steps'
GPU time, and :func:`passed_over` names the other processes' loops."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .units import fmt_ns

if TYPE_CHECKING:
    import polars as pl

    from .steps_period import DevicePeriod
    from .trace import Trace


def busiest_loop(
    trace: Trace,
    found: dict[int, DevicePeriod],
    launchers: dict[int, tuple[int, ...]],
    params: dict[str, Any],
    conf: dict[str, Any],
) -> tuple[dict[int, DevicePeriod], list[str]]:
    """``found`` (each device's period steps) restricted to the devices of the loop whose
    steps hold the most GPU time, and the other loops named for the detail's 'not in the
    steps' (none: every device runs one loop). ``launchers``: per device, its launching
    processes where read; the others' are read (``queries/steps_launch_rows.sql`` again)
    only when motifs alone leave several loops. ``conf``: ``[period]`` of
    ``data/steps.toml``."""
    if len(found) < 2:
        return found, []
    devices = sorted(found)
    kernels = {d: set(found[d].motif) for d in devices}
    share = conf["same_loop_min_shared"]

    def same_motif(a: int, b: int) -> bool:
        common = len(kernels[a] & kernels[b])
        return common >= share * min(len(kernels[a]), len(kernels[b]))

    loops = _groups(devices, same_motif)
    if len(loops) == 1:
        return found, []
    pids = _device_pids(trace, found, launchers, params)
    loops = _groups(devices, lambda a, b: same_motif(a, b) or bool(pids[a] & pids[b]))
    if len(loops) == 1:
        return found, []
    gpu = {d: _gpu_ns(found[d]) for d in devices}
    kept = max(loops, key=lambda loop: (sum(gpu[d] for d in loop), -min(loop)))
    held = set().union(*(kernels[d] for d in kept))
    kept_ns = sum(gpu[d] for d in kept)
    said = []
    for loop in loops:
        if loop is not kept:
            where = f"on device {loop[0]}" if len(loop) == 1 else "on devices " + _and(loop)
            steps = max(found[d].steps["step"].n_unique() for d in loop)
            loop_ns = sum(gpu[d] for d in loop)
            said.append(_other_loop(where, found[loop[0]], held, steps, loop_ns, kept_ns))
    return {d: found[d] for d in kept}, said


def busiest_process(own: list[DevicePeriod | None], conf: dict[str, Any]) -> int:
    """Which of ``own`` (the period steps of each process that launched on one device, in
    launch order; None: no period of its own) is the loop: the process whose steps hold the
    most launches, unless another's steps hold more than ``[period]
    other_process_loop_over`` times its GPU time (``conf``: ``[period]`` of
    ``data/steps.toml``), the one holding the most then. Why: a monitor polling with tiny
    kernels can launch more than the program's loop that does most of the GPU's work."""
    held = [0 if f is None else f.steps.height for f in own]
    gpu = [0 if f is None else _gpu_ns(f) for f in own]
    most = held.index(max(held))
    busiest = max(range(len(own)), key=lambda i: (gpu[i], held[i], -i))
    return busiest if gpu[busiest] > conf["other_process_loop_over"] * gpu[most] else most


def passed_over(device: int, found: DevicePeriod, conf: dict[str, Any]) -> list[str]:
    """The loops of the other processes on ``device`` that ``found`` (its steps) passed
    over (:attr:`DevicePeriod.passed_over`), named for the detail's 'not in the steps'."""
    kept_ns, held = _gpu_ns(found), set(found.motif)
    over = conf["other_process_loop_over"]
    said = []
    for pid, loop in found.passed_over:
        loop_ns = _gpu_ns(loop)
        # with other_process_loop_over above 1, a loop of more GPU time can be passed over
        than = "not more than" if over == 1 else f"not more than {over:g} times"
        than = "less than" if loop_ns < kept_ns else than
        where = f"of process {pid} on device {device}"
        steps = loop.steps["step"].n_unique()
        said.append(_other_loop(where, loop, held, steps, loop_ns, kept_ns, than, " there"))
    return said


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


def _other_loop(
    where: str, first, held, steps, loop_ns, kept_ns, than="less than", there=""
) -> str:
    """'the loop on device 1, another program's (...)' for the detail (``where``: 'on
    device 1', 'of process 5555 on device 0'): ``first``, the period steps of its first
    device (or of its process), ``held`` the steps' tokens."""
    from .steps_period import _launch_count

    common = len(set(first.motif) & held)
    ours = "none of them" if not common else f"{common:,} of them"
    return (
        f"the loop {where}, another program's (a motif of {_launch_count(first.motif)}, "
        f"{ours} the steps', in {steps:,} steps holding {fmt_ns(loop_ns)} of GPU time, "
        f"{than} the steps' {fmt_ns(kept_ns)}{there})"
    )


def _and(items: list[int]) -> str:
    return ", ".join(str(i) for i in items[:-1]) + f" and {items[-1]}"


def copying_programs(found: dict, launchers: dict, copies: pl.DataFrame) -> dict:
    """``found`` (each device's :class:`DevicePeriod`) with the loop's processes set
    (``pids``) on a device where processes that launched nothing there copied or set
    memory (``copies``: ``steps_period_copies.sql``'s rows): a data loader or a checkpoint
    writer is another program too, told apart from the loop by its copies, not by launches
    (it has none). ``launchers``: per device whose loop is every launching process, those
    processes (read where several processes may share a device; a device the export's
    context table gives one process is not listed, and no other process copies there)."""
    import polars as pl

    for device, pids in launchers.items():
        others = copies.filter(pl.col("device") == device, ~pl.col("pid").is_in(list(pids)))
        if others.height:
            count = others["pid"].n_unique()
            found[device] = replace(found[device], pids=pids, other_copies=(others.height, count))
    return found
