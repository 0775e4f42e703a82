"""The GPU wall time per step of the steps ``tracelens steps`` places in time
(compare/clues/accounting.py: timed start to start) is the same for two captures of one
program that hold different numbers of steps, and reads a slower program's own period.
Each step's window runs from its first kernel to the next step's input copy, so the last
step's window is cut short: timed from the first GPU operation to the last (plus the mean
gap between windows) 20 steps read 958.2 us and 4 steps 796.6 us per step."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM, _Recorder

import tracelens
from tracelens.compare import diff

US = 1_000
PID = 9
# (name, start in the step, duration), us: 100 us of kernels after a 20 us input copy
STEP = [(FILL, 100, 40), (REDUCE_SUM, 155, 30), (XMMA_GEMM, 200, 20), (FLASH_FWD, 235, 10)]


def build(dest, stem: str, steps: int, period_us: int = 1_000, devices: int = 1):
    """``steps`` steps, one every ``period_us`` on each of ``devices`` GPUs: a 20 us input
    copy, then STEP's kernels. No NVTX: the steps are the period of the launch sequence,
    which hold all the kernels (the per-step unit is theirs)."""
    r = _Recorder("3.25.0")
    r.process(PID, "python train.py")
    for device in range(devices):
        r.gpu(device, "NVIDIA H100 80GB HBM3")
    for k in range(steps):
        for device in range(devices):
            t = 1_000 * US + k * period_us * US + device * 3 * US
            r.memcpy("HtoD", 1 << 20, t, 20 * US, pid=PID, device=device)
            for name, at, dur in STEP:
                r.kernel(name, t + at * US, dur * US, pid=PID, device=device)
    return r.write(dest, stem).path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("step_wall")
    return {
        "a": build(root, "a", 20),
        "b": build(root, "b", 4),
        "slow": build(root, "slow", 4, period_us=1_500),
        "a2": build(root, "a2", 20, devices=2),
        "b2": build(root, "b2", 4, devices=2),
        "slow2": build(root, "slow2", 4, period_us=1_500, devices=2),
    }


def _time_clues(a, b, name: str = "demangled", steps=(20, 4)) -> list[tuple[str, str]]:
    with tracelens.open(a, cache=False) as ta, tracelens.open(b, cache=False) as tb:
        d = diff(ta, tb, name=name)
    assert (d.steps_a, d.steps_b) == steps
    assert "from the period of the kernel launch sequence" in d.notes[0]
    assert not any("launched" in note for note in d.notes)  # not the repetitions' unit
    return [(c.clue, c.evidence) for c in d.clues if c.id == "time_accounting"]


@pytest.mark.parametrize("name", ["demangled", "short"])
def test_fewer_steps_of_one_program_cost_the_same_per_step(runs, name):
    # before: 958.2 us -> 796.6 us per step, a clue
    assert _time_clues(runs["a"], runs["b"], name) == []
    assert _time_clues(runs["b"], runs["a"], name, steps=(4, 20)) == []


@pytest.mark.parametrize("name", ["demangled", "short"])
def test_a_slower_program_with_fewer_steps_reads_its_own_period(runs, name):
    assert _time_clues(runs["a"], runs["slow"], name) == [
        (
            "GPU wall time per step: 1.00 ms → 1.50 ms (+500.0 µs)",
            "compute 100.0 µs → 100.0 µs; exposed communication 0 ns → 0 ns; exposed memory "
            "20.00 µs → 20.00 µs; idle 880.0 µs → 1.38 ms (per step, start to start; from the "
            "steps and util)",
        )
    ]


def test_two_devices_read_the_mean_step_of_a_device(runs):
    assert _time_clues(runs["a2"], runs["b2"]) == []
    clues = _time_clues(runs["a2"], runs["slow2"])
    assert [clue for clue, _ in clues] == ["GPU wall time per step: 1.00 ms → 1.50 ms (+500.0 µs)"]
