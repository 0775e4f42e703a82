"""tracelens util: what each GPU did with its wall time, and why it was idle."""

from __future__ import annotations

from . import _common as c
from . import app


@app.command()
def util(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    nvtx: c.NvtxOpt = None,
    step: c.StepOpt = None,
    fail_if: c.FailIfOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Per device over the capture span (or --start/--end): busy (kernels, copies and memsets
    across streams), idle, utilization; busy split into compute, communication and memory
    with the communication and copies no compute hid (exposed); idle split by cause (sync
    calls, launch-bound gaps, before the first / after the last GPU work, unexplained); and
    communication per collective kind (AllReduce, AllGather, ...).

    Idle causes, per gap in the device's work: sync (the work after the gap was launched
    after the gap began, while the host was blocked in cudaDeviceSynchronize,
    cudaStreamSynchronize, a synchronous cudaMemcpy, ...), launch_bound (launched after the
    gap began, no sync: the GPU waited for the host), unexplained (the work after the gap
    was already queued: a dependency, an event wait), and before_first / after_last (the
    window before the device's first and after its last GPU operation)."""
    from ..util import figures, gpu_time_accounting, render

    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        where, note = c.nvtx_filter(tr, nvtx, where, step)
        result = gpu_time_accounting(tr, where)
        gates = c.check_gates(figures(tr, where, result) if fail_if else {}, fail_if)
    c.show(
        render, result, fmt=fmt, output=output, note=note, timeunit=timeunit, source=tr.path.name
    )
    c.fail_if_tripped(gates)
