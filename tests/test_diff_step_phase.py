"""The diff's step clues compare steps of A and B started at the same kernel
(compare/phase.py): ``tracelens steps`` phases each run's period steps after its longest
idle time, and a slower kernel in B can move that to another kernel of the same motif."""

from __future__ import annotations

import polars as pl
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff
from tracelens.compare.phase import _common_phase, phased_alike
from tracelens.steps import Steps

PID = 4242
STEP = [(XMMA_GEMM, 400_000), (FILL, 20_000), (REDUCE_SUM, 15_000), (FLASH_FWD, 120_000)]
STEP += [(XMMA_GEMM, 60_000), (FILL, 20_000)]


def build(tmp_path, stem, waits, *, reduce_ns=15_000, steps=20):
    """``steps`` steps of STEP on device 0 (no NVTX: steps by period), the host waiting
    ``waits[i]`` before launch i of each step (5 µs otherwise); ``reduce_ns``: the
    reduction's duration."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(steps):
        for i, (name, dur) in enumerate(STEP):
            t += waits.get(i, 5_000)
            dur = reduce_ns if name == REDUCE_SUM else dur
            r.kernel(name, t, dur, pid=PID)
            t += dur
    return r.write(tmp_path, stem).path


def slower_reduction(tmp_path):
    """A waits 200 µs before the attention kernel and 150 µs before the second fill: its
    steps start at the attention kernel. B's reduction (just before the attention kernel)
    takes 210 µs instead of 15 µs and uses up the wait before it: alone, B's steps start
    at the second fill. The period (start to start) is 1.00 ms in both."""
    a = build(tmp_path, "a", {3: 200_000, 5: 150_000})
    b = build(tmp_path, "b", {3: 5_000, 5: 150_000}, reduce_ns=210_000)
    return a, b


def first_kernels(steps):
    return {m[0] for m in steps.motif.values()}


def test_a_slower_kernel_before_the_boundary_does_not_move_the_phase(tmp_path):
    """Alone, A's steps last 805 µs and B's 855 µs (other launches start them: +50 µs,
    of which 195 µs are the slower reduction and -145 µs the waits each holds). Phased
    alike, B's step lasts 1.00 ms: +195 µs, the slower reduction's time, and the verdict
    says the step's work grew into idle time, not that it is unsure which."""
    a, b = slower_reduction(tmp_path)
    with tracelens.open(b) as tb:
        assert first_kernels(tb.steps()) == {FILL}
    d = diff(a, b)
    sa, sb = d.sides
    assert first_kernels(sa.steps) == first_kernels(sb.steps) == {FLASH_FWD}
    (step,) = [c for c in d.clues if c.id == "step_time"]
    assert step.impact_ns == 195_000
    assert step.verdict.startswith(
        "the steps' period (start to start, median) did not move (1.00 ms → 1.00 ms) though "
        "both runs' steps start at their flash::flash_fwd_kernel launch: a step's GPU work "
        "grew into, or gave back, idle time the host left"
    )
    assert (
        "steps phased alike: B's steps start at their flash::flash_fwd_kernel launch, as A's, "
        "so both runs' step durations hold the same part of the wait between steps "
        "(`tracelens steps` phases them after the longest idle time: B alone at its "
        "at::native::vectorized_elementwise_kernel launch)"
    ) in d.notes


def test_tracelens_steps_of_one_trace_keeps_its_own_phase(tmp_path, cache_dir):
    """The diff's phase is the diff's: B's steps as ``tracelens steps`` finds them (and
    keeps in its cache entry) still start after its longest wait."""
    a, b = slower_reduction(tmp_path)
    diff(a, b)
    with tracelens.open(b) as tb:
        steps = tb.steps()
        assert first_kernels(steps) == {FILL} and steps.median_ns == 855_000


def test_runs_phased_alike_already_are_left_as_found(tmp_path):
    """B's waits as A's, only its reduction slower by 20 µs: both phase on the attention
    kernel; no note, and the steps are those ``tracelens steps`` finds."""
    a = build(tmp_path, "a", {3: 200_000, 5: 150_000})
    b = build(tmp_path, "b", {3: 200_000, 5: 150_000}, reduce_ns=35_000)
    d = diff(a, b)
    assert not any(n.startswith("steps phased alike") for n in d.notes)
    assert first_kernels(d.sides[1].steps) == {FLASH_FWD}


def _steps(method, *motifs):
    frame = pl.DataFrame({"step": [1, 2, 3]})
    return Steps(method, "", frame, dict(enumerate(motifs)))


def test_the_common_phase_is_a_kernel_every_motif_launches_once():
    """A's phase kernel first, then B's, then A's motif in order; a kernel a motif
    launches twice cannot phase it; NVTX steps are not re-phased."""
    x, y, z, w = "x", "y", "z", "w"
    assert _common_phase(_steps("period", (x, y, z)), _steps("period", (y, z, x))) == x
    assert _common_phase(_steps("period", (x, y, x, z)), _steps("period", (y, z, x))) == y
    # no kernel once in both: unsure, as before
    a, b = _steps("period", (x, y, x, y, z)), _steps("period", (x, y, z, z))
    assert _common_phase(a, b) is None
    assert phased_alike(_steps("period", (w, x)), _steps("period", (w, y))) == w
    assert phased_alike(_steps("range", (w, x)), _steps("period", (w, x))) is None
