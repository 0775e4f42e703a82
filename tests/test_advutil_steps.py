"""Adversarial review of `tracelens steps`: period steps of a loop on a device that another
program (a second job, a monitor) also used. Its launches are in no step, as the header
says; its copies and memsets, which the period steps take by time on the device, must not
be either: they made the loop's steps end at the other program's copy and count its busy
time (step 1 of 6 µs said 11.3 µs)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import FILL, NCCL_SENDRECV, XMMA_GEMM

import tracelens
from tracelens.synth import TraceBuilder

LOOP, OTHER = 4242, 5555
STEP = 10_000  # ns from one iteration's first launch to the next's


def launch(b, pid, at, kind, start, end, stream):
    """A kernel (a name) or a device-to-device copy ('copy') of ``pid``, launched at ``at``."""
    api = "cudaMemcpyAsync_v3020" if kind == "copy" else "cudaLaunchKernel_v7000"
    cid = b.runtime(api, start=at, end=at + 5, pid=pid)
    common = {"start": start, "end": end, "pid": pid, "stream": stream, "correlation_id": cid}
    if kind == "copy":
        b.memcpy("DtoD", 4096, **common)
    else:
        b.kernel(kind, **common)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """The loop (8 iterations: a 5 µs GEMM, a 1 µs fill, then its own 0.5 µs copy: 6.5 µs a
    step, one every 10 µs) and another program on the same device: 5 times a 3 µs SendRecv
    then a 6 µs copy, every 17 µs, unrelated to the loop."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(8):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
        launch(b, LOOP, t - 80, "copy", t + 6_000, t + 6_500, 7)
    for i in range(5):
        t = 12_345 + i * 17_000
        launch(b, OTHER, t - 100, NCCL_SENDRECV, t, t + 3_000, 9)
        launch(b, OTHER, t - 90, "copy", t + 3_000, t + 9_000, 9)
    return b.write(tmp_path_factory.mktemp("advutil") / "shared.sqlite")


def test_the_other_programs_copies_are_in_no_step(shared):
    with tracelens.open(shared, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period", steps.detail
    assert "(the 5 launches of 1 other process on it, which run no such loop, in no step)" in (
        steps.detail
    )
    rows = steps.frame.select("step", "start_ns", "end_ns", "busy_ns", "kernels", "kernel_ns")
    assert rows.rows() == [
        (i + 1, 10_000 + i * STEP, 16_500 + i * STEP, 6_500, 2, 6_000) for i in range(8)
    ]


def test_the_steps_table_says_so(shared, capsys):
    rc, out, err = run_cli(["steps", shared, "--kernels", "0", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("step,device,start_ns,end_ns,")
    assert [line.split(",")[2:4] for line in lines[1:]] == [
        [str(10_000 + i * STEP), str(16_500 + i * STEP)] for i in range(8)
    ]


def test_a_window_over_the_whole_capture_changes_nothing(shared):
    """steps --start/--end recounts the steps from their work in the window
    (queries/steps_window_work.sql), which took every operation on the device in a step's
    window: the other program's SendRecv was a third kernel of steps 1, 2, 4, 6 and 8."""
    from tracelens.filters import EventFilter

    with tracelens.open(shared, cache=False) as trace:
        whole = trace.steps().frame
        windowed = trace.steps(where=EventFilter(start_ns=0, end_ns=1_000_000)).frame
    columns = ["step", "start_ns", "end_ns", "busy_ns", "kernels", "kernel_ns"]
    assert windowed.select(columns).rows() == whole.select(columns).rows()


def test_util_of_a_step_is_the_loops_work(shared, capsys):
    """util --step 2 selects step 2's work (the same windows): it held the other program's
    3 µs SendRecv (exposed communication the loop never launched) and its copy."""
    rc, out, _ = run_cli(["util", shared, "--step", "2", "-f", "csv"], capsys)
    assert rc == 0
    header, row = out.splitlines()
    got = dict(zip(header.split(","), row.split(","), strict=True))
    assert {k: got[k] for k in ("span_ns", "busy_ns", "communication_ns", "memory_ns")} == {
        "span_ns": "6500",
        "busy_ns": "6500",
        "communication_ns": "0",
        "memory_ns": "500",
    }
