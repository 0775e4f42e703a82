"""Steps of a GPU two programs share: one runs an un-annotated loop (no NVTX) that does most
of the GPU's work, the other (a monitor) marks each of its polls with a top-level NVTX
range. The monitor's ranges were taken for the steps ('10 top-level NVTX ranges like
'monitor' that launched 24% of the GPU time'): the loop that does most of the work is the
steps, and the detail names the ranges it passed over (``[ranges] other_loop_over`` in
data/steps.toml). Ranges named by label are still the steps."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, NCCL_SENDRECV, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch

import tracelens
from tracelens.synth import TraceBuilder


def build(path, *, monitor_ns: int, loop_pid: int = LOOP):
    """10 loop iterations of ``loop_pid`` (a 5 µs GEMM and a 1.5 µs fill, one every
    10 µs, no NVTX) and 10 'monitor' ranges of OTHER, each launching a SendRecv of
    ``monitor_ns`` (``loop_pid == OTHER``: one program does both)."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python monitor.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(10):
        t = 10_000 + i * STEP
        launch(b, loop_pid, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, loop_pid, t - 90, FILL, t + 5_000, t + 6_500, 7)
    for i in range(10):
        t = 12_345 + i * STEP
        b.nvtx_range("monitor", start=t - 200, end=t - 50, pid=OTHER, tid=OTHER)
        launch(b, OTHER, t - 100, NCCL_SENDRECV, t + 6_600, t + 6_600 + monitor_ns, 9)
    return b.write(path)


def test_the_loop_that_does_most_of_the_work_is_the_steps(tmp_path):
    path = build(tmp_path / "t.sqlite", monitor_ns=2_000)  # 20 of 85 µs: 24%
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period", steps.detail
    assert steps.detail == (
        "10 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 10 launches of 1 other process on it, which run no such loop, in no "
        "step)); not the steps: the 10 top-level NVTX ranges like 'monitor' of another "
        "program (process 5555), which launched 24% of the GPU time, less than this loop's "
        "76% (named as the steps' range, they are the steps)"
    )
    assert steps.frame.select("step", "start_ns", "kernels").rows() == [
        (i + 1, 10_000 + i * STEP, 2) for i in range(10)
    ]


def test_named_by_label_the_ranges_are_the_steps(tmp_path):
    path = build(tmp_path / "t.sqlite", monitor_ns=2_000)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps(range="monitor")
    assert (steps.method, steps.count) == ("range", 10)
    assert steps.detail == "10 steps from 10 NVTX ranges labelled 'monitor'"


@pytest.mark.parametrize(
    ("monitor_ns", "loop_pid"),
    [(30_000, LOOP), (2_000, OTHER)],
    ids=["the monitor does more", "one program"],
)
def test_the_ranges_stay_the_steps(tmp_path, monitor_ns, loop_pid):
    """The ranges stay the steps when their GPU time is more than the loop's (300 of
    365 µs), or when the loop is their own program's (a loop partly annotated)."""
    path = build(tmp_path / "t.sqlite", monitor_ns=monitor_ns, loop_pid=loop_pid)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "marker", steps.detail
    assert steps.detail.startswith("10 steps from 10 top-level NVTX ranges like 'monitor'")
