"""The diff's GPU wall time per step does not depend on how many steps a capture holds:
from the first GPU operation to the last, n steps hold only n - 1 of the idle gaps that
follow a step, so the per-step figure adds one (review7 B4)."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.compare import diff
from tracelens.synth import TraceBuilder

US = 1_000
PID = 9
KERNELS = [("a", 40 * US), ("b", 30 * US), ("c", 20 * US), ("d", 10 * US)]


def build(path, steps: int, loading_us: int):
    """``steps`` NVTX train_step ranges of a, b, c, d (100 us of kernels in a 103 us
    window, launched 20 us ahead), then ``loading_us`` of host data loading before the
    next step: each step lasts 134 us + loading_us."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    for _ in range(steps):
        step_start, gpu = t, t + 20 * US
        for name, dur in KERNELS:
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US, pid=PID)
            b.kernel(f"void {name}(float*)", start=gpu, end=gpu + dur, pid=PID, correlation_id=cid)
            t, gpu = t + 4 * US, gpu + dur + 1 * US
        t = max(t, gpu) + 10 * US
        b.nvtx_range("train_step", start=step_start, end=t, pid=PID)
        t += loading_us * US
    b.write(path)
    return path


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def test_the_same_program_captured_for_fewer_steps_has_the_same_time_per_step(tmp_path):
    """20 and 4 steps of one program: 2.134 ms per step in both, no time-accounting clue
    (it said 2.03 ms -> 1.63 ms, idle -406 us per step)."""
    d = pair(build(tmp_path / "a.sqlite", 20, 2000), build(tmp_path / "b.sqlite", 4, 2000))
    assert (d.steps_a, d.steps_b) == (20, 4)
    assert "time_accounting" not in {c.id for c in d.clues}


def test_longer_loading_between_fewer_steps_counts_in_full(tmp_path):
    """3 ms of loading per step in B (4 steps) against 2 ms in A (20 steps): 2.13 ms ->
    3.13 ms per step, all of it idle: +1 ms per step (it said +344 us)."""
    d = pair(build(tmp_path / "a.sqlite", 20, 2000), build(tmp_path / "b.sqlite", 4, 3000))
    (clue,) = [c for c in d.clues if c.id == "time_accounting"]
    assert clue.impact_ns == pytest.approx(1_000 * US)
    assert "2.13 ms → 3.13 ms" in clue.clue and "idle +1.00 ms" in clue.verdict


# One step of a program whose steps `tracelens steps` does not place in time: its NVTX
# ranges hold only kernel a's launch (a third of the GPU busy time, under the half the diff
# asks of steps), so the diff counts the repetitions of the launch sequence. Each step:
# the batch copied in (20 us, at the step's start), then a, b, c, d with 15 us idle between
# them on the GPU: 120 us busy of every 1 ms (at 1 ms a step), so 880 us idle per step.
STEP_KERNELS = [("a", 100, 40), ("b", 155, 30), ("c", 200, 20), ("d", 235, 10)]


def build_repetitions(path, steps: int, period_us: int = 1_000, devices: int = 1):
    """``steps`` steps of STEP_KERNELS, one every ``period_us`` (times in us from each
    step's start, durations in us); with ``devices``, each device after the first runs
    the step's last two kernels, 300 us later than the one before."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    for device in range(devices):
        b.gpu(device)
    for k in range(steps):
        t = 1_000 * US + k * period_us * US
        cid = b.runtime("cudaMemcpyAsync_v3020", start=t - 10 * US, end=t - 5 * US, pid=PID)
        b.memcpy("HtoD", 1 << 20, start=t, end=t + 20 * US, pid=PID, correlation_id=cid)
        for device in range(devices):
            for name, at, dur in STEP_KERNELS[2 if device else 0 :]:
                call = t + (at - 50 + 300 * device) * US
                cid = b.runtime("cudaLaunchKernel_v7000", start=call, end=call + 2 * US, pid=PID)
                start = call + 50 * US
                b.kernel(f"void {name}(float*)", start=start, end=start + dur * US, pid=PID, device=device, correlation_id=cid)  # fmt: skip
                if name == "a" and device == 0:
                    b.nvtx_range("train_step", start=call - US, end=call + 3 * US, pid=PID)
    b.write(path)
    return path


def test_repetitions_of_one_program_captured_for_fewer_steps_cost_the_same_per_step(tmp_path):
    """Steps that cannot be placed in time (the repetitions of the launch sequence): 20 and
    4 steps of one program cost 1 ms per step, 880 us of it idle, in both, and no
    time-accounting clue (it said 962.2 us -> 811.2 us: the span from the first GPU
    operation to the last holds 19 and 3 of the waits between steps)."""
    a, b = build_repetitions(tmp_path / "a.sqlite", 20), build_repetitions(tmp_path / "b.sqlite", 4)
    d = pair(a, b)
    assert (d.steps_a, d.steps_b) == (20, 4)
    # the steps tracelens steps finds hold a third of the GPU time: not the per-step unit
    assert "launched 33% of the GPU time" in d.notes[0]
    assert "time_accounting" not in {c.id for c in d.clues}
    # each against a slower copy of itself: the same figures per step for A, 20 or 4 steps
    for steps in (20, 4):
        slower = build_repetitions(tmp_path / f"slow{steps}.sqlite", steps, period_us=1_500)
        d = pair(build_repetitions(tmp_path / f"{steps}.sqlite", steps), slower)
        (clue,) = [c for c in d.clues if c.id == "time_accounting"]
        assert "GPU wall time per step: 1.00 ms → 1.50 ms" in clue.clue
        assert "exposed memory 20.00 µs → 20.00 µs; idle 880.0 µs → 1.38 ms" in clue.evidence
        assert clue.verdict == "what moved it: idle +500.0 µs"


def test_repetitions_on_two_devices_are_timed_on_each(tmp_path):
    """Two devices, device 1 running c and d 300 us after device 0 in every step: 20 and
    4 steps of one program still cost the same per step (each device's steps timed by its
    own launches: 1 ms a step on each)."""
    a = build_repetitions(tmp_path / "a.sqlite", 20, devices=2)
    b = build_repetitions(tmp_path / "b.sqlite", 4, devices=2)
    d = pair(a, b)
    assert (d.steps_a, d.steps_b) == (20, 4)
    assert "time_accounting" not in {c.id for c in d.clues}
    slower = build_repetitions(tmp_path / "slow.sqlite", 4, period_us=1_500, devices=2)
    (clue,) = [c for c in pair(a, slower).clues if c.id == "time_accounting"]
    assert "GPU wall time per step: 1.00 ms → 1.50 ms" in clue.clue
