"""Per-step figures of a capture that starts and ends mid-step: the work outside its
complete steps is not divided over them (it read as longer steps, a false regression)."""

from __future__ import annotations

from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff

PID = 4242
STEP = [(XMMA_GEMM, 400_000), (FILL, 20_000), (REDUCE_SUM, 15_000), (FLASH_FWD, 120_000)]
STEP += [(XMMA_GEMM, 60_000), (FILL, 20_000)]


def build(tmp_path, stem, first, last, *, gemm=1.0):
    """20 steps of STEP back to back on device 0 (no NVTX: steps by period), keeping the
    launches ``first`` to ``last`` (a capture that starts and ends where they are);
    ``gemm``: the GEMM's per-call factor."""
    launches = [(n, int(d * (gemm if n == XMMA_GEMM else 1))) for _ in range(20) for n, d in STEP]
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for name, dur in launches[first:last]:
        r.kernel(name, t, dur, pid=PID)
        t += dur + 5_000
    return r.write(tmp_path, stem).path


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def test_a_capture_that_starts_mid_step_has_no_per_step_regression(tmp_path):
    d = pair(build(tmp_path, "a", 0, 120), build(tmp_path, "b", 15, 86))
    assert d.sides[1].steps.count == 11 and d.steps_b == 11  # 5 launches outside them
    assert not {"time_accounting", "step_time"} & {c.id for c in d.clues}


def test_a_slower_kernel_in_a_capture_that_starts_mid_step_counts_per_step(tmp_path):
    """The GEMM twice as long: +460 µs per step (400 + 60), whatever the capture holds."""
    d = pair(build(tmp_path, "a", 0, 120), build(tmp_path, "b", 15, 86, gemm=2.0))
    (c,) = [c for c in d.clues if c.id == "time_accounting"]
    assert 450_000 <= c.impact_ns <= 470_000, c
