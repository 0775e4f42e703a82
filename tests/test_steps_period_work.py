"""Steps from the period of the launch sequence hold every GPU operation of their window, not
only their kernels: a step's copies and memsets count in its end, duration and busy time, as
``--step`` selects the step's work (util --step N) and as NVTX steps count it. Before, a
step ended at its last kernel, so one program read 1.10x slower per step with NVTX step
ranges than without. Expected values come from the fixture."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.compare import diff
from tracelens.synth import TraceBuilder

US = 1_000
STEPS = 6


def build(path, *, nvtx: bool, trailing_kernel: bool = False, results_copy: bool = False):
    """Six steps on device 0: kernels kern_0..kern_5 (10..15 us, each 5 us after its
    launch, 10 us apart), then a 5 us DtoD memcpy 3 us after its call; with ``nvtx``,
    train_step_N ranges around each step. ``trailing_kernel``: a lone kernel after the
    steps, 100 us after the last memcpy, then a short DtoH copy. ``results_copy``: after
    the steps, a 2 ms DtoH copy of the results, 1 us after the last memcpy."""
    b = TraceBuilder("3.25.0")
    b.process(100, "python p.py")
    b.gpu(0)
    t = 1_000 * US
    for s in range(STEPS):
        s0 = t
        for i in range(6):
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
            d = 10 * US + i * US
            b.kernel(f"kern_{i}(float*)", start=t + 5 * US, end=t + 5 * US + d, correlation_id=c)
            t += d + 10 * US
        c = b.runtime("cudaMemcpyAsync_v3020", start=t, end=t + 2 * US)
        b.memcpy("DtoD", 1 << 20, start=t + 3 * US, end=t + 8 * US, correlation_id=c)
        t += 20 * US
        if nvtx:
            b.nvtx_range(f"train_step_{s}", start=s0 - 1 * US, end=t)
    if results_copy:
        c = b.runtime("cudaMemcpy_v3020", start=t - 19 * US, end=t + 2_000 * US)
        b.memcpy("DtoH", 1 << 28, start=t - 11 * US, end=t + 1_989 * US, correlation_id=c)
    if trailing_kernel:
        t += 100 * US
        c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
        b.kernel("tail(float*)", start=t + 5 * US, end=t + 6 * US, correlation_id=c)
        c = b.runtime("cudaMemcpyAsync_v3020", start=t + 10 * US, end=t + 12 * US)
        b.memcpy("DtoH", 4, start=t + 13 * US, end=t + 14 * US, correlation_id=c)
    b.write(path)
    return path


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("period_work")
    return build(root / "plain.sqlite", nvtx=False), build(root / "nvtx.sqlite", nvtx=True)


# Step 1: first kernel at 1,005 us; the memcpy ends 1,143 us; kernels 10+..+15 = 75 us, and
# the memcpy's 5 us do not overlap them: busy 80 us.
STEP_1 = {"start_ns": 1_005 * US, "end_ns": 1_143 * US, "duration_ns": 138 * US}


def test_a_period_step_holds_its_copies(pair):
    with tracelens.open(pair[0]) as trace:
        s = trace.steps()
        util = trace.util(step=1).frame.row(0, named=True)
    assert s.method == "period" and s.count == STEPS
    row = s.frame.row(0, named=True)
    assert {k: row[k] for k in STEP_1} == STEP_1
    assert (row["busy_ns"], row["kernels"], row["kernel_ns"]) == (80 * US, 6, 75 * US)
    # every step alike, the last one too (its memcpy after its kernels is its own)
    assert s.frame["duration_ns"].to_list() == [138 * US] * STEPS
    assert s.frame["busy_ns"].to_list() == [80 * US] * STEPS
    # the step's work as --step selects it: the same span and busy time
    assert (util["span_ns"], util["busy_ns"]) == (138 * US, 80 * US)


def test_period_steps_and_nvtx_steps_of_one_program_agree(pair):
    with tracelens.open(pair[0]) as plain, tracelens.open(pair[1]) as nvtx:
        by_period, by_range = plain.steps(), nvtx.steps()
    assert (by_period.method, by_range.method) == ("period", "marker")
    columns = ["step", "start_ns", "end_ns", "duration_ns", "busy_ns", "kernels", "kernel_ns"]
    assert by_period.frame.select(columns).equals(by_range.frame.select(columns))


def test_the_diff_of_one_program_with_and_without_step_ranges_has_no_step_clue(pair):
    with tracelens.open(pair[0]) as a, tracelens.open(pair[1]) as b:
        d = diff(a, b)
    assert d.clues == ()
    assert d.figures["step_median_ms"] == d.figures["step_median_ms_a"] == pytest.approx(0.138)


def test_the_last_step_ends_before_the_next_launch(tmp_path):
    # A kernel after the steps (not a complete period) bounds the last step's window: the
    # copy after that kernel is in no step.
    with tracelens.open(build(tmp_path / "tail.sqlite", nvtx=False, trailing_kernel=True)) as t:
        s = t.steps()
    assert s.count == STEPS and "(1 kernel outside complete periods)" in s.detail
    assert s.frame["duration_ns"].to_list() == [138 * US] * STEPS


def test_the_copy_of_the_results_after_the_loop_is_not_the_last_steps(tmp_path):
    # It starts inside the last step's window but runs far past a step's length: the
    # step keeps its own memcpy and ends as the others do.
    with tracelens.open(build(tmp_path / "results.sqlite", nvtx=False, results_copy=True)) as t:
        s = t.steps()
    assert s.count == STEPS and s.summary()["outlier_steps"] == []
    assert s.frame["duration_ns"].to_list() == [138 * US] * STEPS
    assert s.frame["busy_ns"].to_list() == [80 * US] * STEPS
