"""tracelens util: what each GPU did with its wall time, and why it was idle."""

from __future__ import annotations

from dataclasses import replace

from . import _common as c
from ._app import app
from ._notes import join_notes


@app.command()
@c.grouped
def util(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    filters: c.Filters = c.FILTERS,
    fail_if: c.FailIfOpt = None,
    out: c.Output = c.OUTPUT,
) -> None:
    """Per device over the capture span (or --start/--end): busy (kernels, copies and memsets
    across streams), idle, utilization; busy split into compute, communication and memory
    with the communication and copies no compute hid (exposed); idle split by cause (sync
    calls, launch-bound gaps, before the first / after the last GPU work, unexplained); and
    communication per collective kind (AllReduce, AllGather, ...).

    Idle causes, per gap in the device's work: sync (the work after the gap was launched
    after the gap began, by a thread blocked during the gap in cudaDeviceSynchronize,
    cudaStreamSynchronize, a synchronous cudaMemcpy, ... entered before that launch: the
    thread whose API call launched the work), launch_bound (launched after the gap began,
    no sync of that thread before the launch: the GPU waited for the host), unexplained (the work after the gap
    was already queued: a dependency, an event wait), and before_first / after_last (the
    window before the device's first and after its last GPU operation)."""
    from ..util import figures, gpu_time_accounting
    from ..util_text import render

    with c.open_filtered(trace, demo, filters) as (tr, where, note):
        result = gpu_time_accounting(tr, where)
        if damage := tr.damage_note():  # what the figures leave out: util's own notes
            result = replace(result, notes=(*result.notes, damage))
        if out.fmt == "csv":  # csv has no place for util's own notes: stderr, as every note
            note = join_notes(note, *result.notes)
        gates = c.check_gates(figures(tr, where, result) if fail_if else {}, fail_if)
    out.show(render, result, tr, note=note)
    c.fail_if_tripped(gates)
