"""Period steps of a loop on a device where another process only copies (a data loader,
a checkpoint writer: memcpys and memsets, no kernel). Processes on a device were told apart
by their kernel launches alone, so this one was no 'other program' and its copies landed in
the loop's steps by time: the steps ended at its copies and counted their busy time, and
util --step 2 counted its copy as the step's memory time."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import FILL, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch

import tracelens
from tracelens.synth import TraceBuilder


@pytest.fixture(scope="module")
def copies_only(tmp_path_factory):
    """The loop (8 iterations: a 5 µs GEMM, a 1 µs fill, its own 0.5 µs copy, one every
    10 µs) and another process that copies 6 µs every 17 µs on the same device."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python loader.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(8):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
        launch(b, LOOP, t - 80, "copy", t + 6_000, t + 6_500, 7)
    for i in range(5):
        t = 12_345 + i * 17_000
        launch(b, OTHER, t - 100, "copy", t + 3_000, t + 9_000, 9)
    return b.write(tmp_path_factory.mktemp("stepsfix") / "copies.sqlite")


def test_the_other_process_copies_are_in_no_step(copies_only):
    with tracelens.open(copies_only, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period", steps.detail
    assert steps.detail == (
        "8 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 5 copies and memsets of 1 other process on it in no step))"
    )
    rows = steps.frame.select("step", "start_ns", "end_ns", "busy_ns", "kernels", "kernel_ns")
    assert rows.rows() == [
        (i + 1, 10_000 + i * STEP, 16_500 + i * STEP, 6_500, 2, 6_000) for i in range(8)
    ]
    assert steps.processes == {0: (LOOP,)}


def test_util_of_a_step_is_the_loops_work(copies_only, capsys):
    rc, out, _ = run_cli(["util", copies_only, "--step", "1", "-f", "csv"], capsys)
    assert rc == 0
    header, row = out.splitlines()
    got = dict(zip(header.split(","), row.split(","), strict=True))
    assert {k: got[k] for k in ("span_ns", "busy_ns", "memory_ns")} == {
        "span_ns": "6500",
        "busy_ns": "6500",
        "memory_ns": "500",
    }
