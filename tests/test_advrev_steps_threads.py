"""Adversarial review of 344dc92 (steps_outside.launching_threads): one process whose
threads drive GPUs of their own. Thread A (tid 100) runs ``step N`` ranges launching 3
kernels to GPU 0; thread B (tid 101) runs its own ``step N`` ranges launching 2 kernels to
GPU 1 and, with ``both``, one small kernel to GPU 0 too; thread L (tid 102, a loader)
runs ``step N`` ranges beside A's, one kernel each to GPU 0. The left-out line says "on
each GPU, a process's steps are those of its thread whose ranges launched the most
there": GPU 0's steps are A's, whatever B also launched there."""

from __future__ import annotations

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
PID = 100


def _launch(b, at, tid, name, stream, device, dur=30):
    cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5 * US, pid=PID, tid=tid)
    b.kernel(f"void {name}(float*)", start=at + 20 * US, end=at + (20 + dur) * US, pid=PID,
             correlation_id=cid, stream=stream, device=device)  # fmt: skip


def _build(path, *, a_steps=5, b_steps=7, both=False):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.gpu(1)
    b.process(PID, "python train.py")
    for tid, name in ((PID, "A"), (PID + 1, "B"), (PID + 2, "L")):
        b.thread(name, pid=PID, tid=tid)
    t0 = 2_000 * US
    for s in range(a_steps):
        t = t0 + s * 1_000 * US
        b.nvtx_range(f"step {s + 1}", start=t, end=t + 300 * US, pid=PID, tid=PID)
        for k in range(3):
            _launch(b, t + 10 * US + k * 60 * US, PID, f"a{k}", 7, 0)
        at = t + 400 * US
        b.nvtx_range(f"step {s + 1}", start=at, end=at + 100 * US, pid=PID, tid=PID + 2)
        _launch(b, at + 10 * US, PID + 2, "load", 9, 0, dur=10)
    for s in range(b_steps):
        t = t0 + s * 1_000 * US + 500 * US
        b.nvtx_range(f"step {s + 1}", start=t, end=t + 300 * US, pid=PID, tid=PID + 1)
        for k in range(2):
            _launch(b, t + 10 * US + k * 60 * US, PID + 1, f"b{k}", 11, 1, dur=50)
        if both:
            _launch(b, t + 200 * US, PID + 1, "bx", 12, 0, dur=5)
    return b.write(path)


def _steps(path):
    with tracelens.open(path, cache=False) as trace:
        return trace.steps()


def test_two_loops_of_5_and_7_steps_and_a_loader(tmp_path):
    """Holds: each loop's steps on its GPU (5 on GPU 0, 7 on GPU 1), the loader's ranges
    left out, its launches counted."""
    steps = _steps(_build(tmp_path / "t.sqlite"))
    frame = steps.frame.sort("step", "device")
    assert frame.select("step", "device", "kernels").rows() == [
        *((s, d, 3 if d == 0 else 2) for s in range(1, 6) for d in (0, 1)),
        (6, 1, 2),
        (7, 1, 2),
    ]
    assert (steps.outside.left_ranges, steps.outside.left_threads) == (5, 1)
    assert steps.outside.left_launches == 5


def test_a_loop_that_also_launches_to_the_other_gpu_does_not_take_its_steps(tmp_path):
    """B launches 21 operations in its ranges (14 to GPU 1, 7 small ones to GPU 0), A 15,
    all to GPU 0: A launched the most there, so GPU 0's steps hold A's 3 kernels a step
    (and B's one there). Before, B, the busiest thread, took GPU 0 too, A was left out
    (its 15 kernels in no step) and GPU 0's steps held B's one small kernel each."""
    steps = _steps(_build(tmp_path / "t.sqlite", both=True))
    frame = steps.frame.sort("step", "device")
    assert frame.select("step", "device", "kernels").rows() == [
        *((s, d, 4 if d == 0 else 2) for s in range(1, 6) for d in (0, 1)),
        (6, 0, 1),
        (6, 1, 2),
        (7, 0, 1),
        (7, 1, 2),
    ]
    assert (steps.outside.left_ranges, steps.outside.left_threads) == (5, 1)
    assert steps.outside.left_launches == 5  # the loader's, alone
