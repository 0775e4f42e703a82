"""The GPU wall time per step of the launch sequence's repetitions (compare/repetitions.py:
the wait after the last step added) is the same by short names as by demangled names when
the short names merge no two kernels: the kernel that starts the steps is found among the
sequence's tokens, whichever names they are."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM, _Recorder

import tracelens
from tracelens.compare import diff

US = 1_000
PID = 9
# Real templated names (short names flash_fwd_kernel, reduce_kernel, the cuBLAS name itself,
# vectorized_elementwise_kernel: four different ones) at (start in the step, duration), us
STEP = [(FLASH_FWD, 100, 40), (REDUCE_SUM, 155, 30), (XMMA_GEMM, 200, 20), (FILL, 235, 10)]


def build(dest, stem: str, steps: int, period_us: int = 1_000):
    """``steps`` steps, one every ``period_us``: a 20 us input copy, then STEP's kernels; an
    NVTX range around the first kernel's launch only (a third of the GPU time: the steps
    `tracelens steps` finds are not the per-step unit, the repetitions are)."""
    r = _Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    for k in range(steps):
        t = 1_000 * US + k * period_us * US
        r.memcpy("HtoD", 1 << 20, t, 20 * US, pid=PID)
        for i, (name, at, dur) in enumerate(STEP):
            r.kernel(name, t + at * US, dur * US, pid=PID)
            if i == 0:  # the launch call is 7 us before the kernel (fixtures.builder)
                r.nvtx("train_step", t + (at - 8) * US, t + (at - 2) * US, pid=PID)
    return r.write(dest, stem).path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("repetitions_short")
    return build(root, "a", 20), build(root, "b", 4), build(root, "slow", 4, period_us=1_500)


def _time_clues(a, b, name: str) -> list[str]:
    with tracelens.open(a, cache=False) as ta, tracelens.open(b, cache=False) as tb:
        d = diff(ta, tb, name=name)
    assert (d.steps_a, d.steps_b) == (20, 4)
    assert "launched 33% of the GPU time" in d.notes[0]  # the repetitions are the unit
    return [c.clue for c in d.clues if c.id == "time_accounting"]


@pytest.mark.parametrize("name", ["demangled", "short"])
def test_fewer_repetitions_of_one_program_cost_the_same_per_step(runs, name):
    a, b, _slow = runs
    # without the wait after the last step: 962.2 us -> 811.2 us per step, a clue
    assert _time_clues(a, b, name) == []


@pytest.mark.parametrize("name", ["demangled", "short"])
def test_a_slower_program_with_fewer_repetitions_reads_its_own_period(runs, name):
    a, _b, slow = runs
    assert _time_clues(a, slow, name) == ["GPU wall time per step: 1.00 ms → 1.50 ms (+500.0 µs)"]
