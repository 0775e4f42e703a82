"""NVTX region times per step (the diff's regions, compare.regions) of period steps on a
device another program used too: that program's work inside its own NVTX range was counted
in the loop's steps by time on the device (region 'monitor' in steps 1, 3, 4, ...), while
the steps say its launches are in no step (Steps.processes; found by advutil)."""

from __future__ import annotations

from fixtures.builder import FILL, NCCL_SENDRECV, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch

import tracelens
from tracelens.compare.regions import region_times
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder


def test_another_programs_regions_are_in_no_step(tmp_path):
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python monitor.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(8):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
    for i in range(5):
        t = 12_345 + i * 17_000
        b.nvtx_range("monitor", start=t - 200, end=t - 50, pid=OTHER, tid=OTHER)
        launch(b, OTHER, t - 100, NCCL_SENDRECV, t, t + 500, 9)
    path = b.write(tmp_path / "t.sqlite")
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
        assert steps.method == "period", steps.detail
        regions = region_times(trace, EventFilter(), steps)
    assert regions.rows() == [("monitor", None, 5, 2_500)]
