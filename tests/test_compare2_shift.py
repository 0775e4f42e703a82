"""tracelens diff on a run whose step time shifts level part-way, where the board's steps
are not the steps the side was read with: the diff re-phased them (compare/phase.py) and
the shift's step number moved by one; with short names; with steps that overlap in time.
The step the shift is at, and the kernels that carry it, come from the board's steps."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder
from test_diff_unseen_pairs import PID as TRAIN_PID
from test_diff_unseen_pairs import TRAIN, clue, recorder

import tracelens
from tracelens.compare import diff

PID = 4242
# test_diff_step_phase's step: the host waits before the attention kernel (index 3) and
# the second fill (index 5); the second GEMM call (index 4) lies between them
STEP = [(XMMA_GEMM, 400_000), (FILL, 20_000), (REDUCE_SUM, 15_000), (FLASH_FWD, 120_000)]
STEP += [(XMMA_GEMM, 60_000), (FILL, 20_000)]


def phased(tmp_path, stem, waits, *, reduce_ns=15_000, shift_at=None):
    """40 steps of STEP on device 0 (steps by period), the host waiting ``waits[i]``
    before launch i of each step (5 µs otherwise); from step index ``shift_at`` on the
    second GEMM call takes 300 µs instead of 60 µs."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for s in range(40):
        for i, (name, dur) in enumerate(STEP):
            t += waits.get(i, 5_000)
            dur = reduce_ns if name == REDUCE_SUM else dur
            dur = 300_000 if shift_at is not None and s >= shift_at and i == 4 else dur
            r.kernel(name, t, dur, pid=PID)
            t += dur
    return r.write(tmp_path, stem).path


@pytest.fixture(scope="module")
def rephased(tmp_path_factory):
    """A's steps start at the attention kernel (its longest wait); B's slower reduction
    eats that wait, so alone B's steps start at the second fill, and its second GEMM call
    (between the two) slows from step index 20 on: alone, at B's step 20 (it starts at
    the fill before that call); phased at the attention kernel as A's, at step 21."""
    tmp = tmp_path_factory.mktemp("rephased")
    a = phased(tmp, "a", {3: 200_000, 5: 150_000})
    b = phased(tmp, "b", {3: 5_000, 5: 150_000}, reduce_ns=210_000, shift_at=20)
    return a, b


def test_the_shift_is_numbered_by_the_re_phased_steps(rephased):
    a, b = rephased
    with tracelens.open(b) as tb:
        assert tb.steps().level_shift.step == 20  # alone
    d = diff(a, b)
    assert "B's steps start at their flash::flash_fwd_kernel launch, as A's" in d.notes[-1]
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21" in step.evidence
    assert "(20 steps before, 19 from it)" in step.evidence
    assert "from step 21 on, per call: sm80_xmma_gemm" in step.evidence
    assert "from step 20 on" not in step.evidence
    assert "B/A is 1.24× with B's steps before step 21" in step.verdict
    gemm = [c for c in d.clues if c.id == "per_call_outlier" and "xmma" in c.clue]
    assert "B: 230.0 µs per call before step 21, 350.0 µs from it (1.52×)" in gemm[0].evidence


def test_short_names_name_the_kernels_of_a_re_phased_shift(rephased):
    d = diff(*rephased, name="short")
    step = clue(d, "step_time")
    assert "from step 21 on, per call: sm80_xmma_gemm" in step.evidence


def train(tmp_path, stem, factor, *, tail_ns=0):
    """40 steps of TRAIN on one stream, each call of step ``i`` scaled by ``factor(i,
    name)``; ``tail_ns``: each step ends with a kernel that long on another stream, which
    runs on into the next step."""
    r, t = recorder(), 1_000_000
    for i in range(40):
        for name, dur in TRAIN:
            d = int(dur * factor(i, name))
            r.kernel(name, t, d, pid=TRAIN_PID)
            t += d + 1_000
        if tail_ns:
            r.kernel("void overlap_tail_kernel(float*)", t, tail_ns, pid=TRAIN_PID, stream=8)
        t += 20_000
    return r.write(tmp_path, stem).path


def test_short_names_name_the_kernels_in_their_short_form(tmp_path):
    """The attention kernel 3x slower from step 21 on: by short name the step line
    names it as the diff's tables do (flash_fwd_kernel), not by its demangled name."""
    a = train(tmp_path, "a", lambda i, name: 1.0)
    b = train(tmp_path, "b", lambda i, name: 3.0 if i >= 20 and name == FLASH_FWD else 1.0)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        d = diff(ta, tb, name="short")
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21" in step.evidence
    assert "from step 21 on, per call: flash_fwd_kernel 30.00 µs → 90.00 µs (3.00×" in (
        step.evidence
    )
    (flash,) = [c for c in d.clues if c.id == "per_call_outlier" and "flash" in c.clue]
    assert "B: 30.00 µs per call before step 21, 90.00 µs from it (3.00×)" in flash.evidence


def test_steps_that_overlap_in_time_say_why_no_kernel_is_named(tmp_path):
    """Each step ends with a 400 µs kernel on another stream that runs on into the next
    step: the steps overlap in time, so the parts by time cannot tell which kernels carry
    B's shift (the GEMM 4x slower from step 21 on); the step line says so instead of
    staying silent."""
    a = train(tmp_path, "a", lambda i, name: 1.0, tail_ns=400_000)
    b = train(
        tmp_path,
        "b",
        lambda i, name: 4.0 if i >= 20 and name == XMMA_GEMM else 1.0,
        tail_ns=400_000,
    )
    d = diff(a, b)
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21" in step.evidence
    assert "per call:" not in step.evidence
    assert (
        "which kernels carry the shift cannot be told: the steps overlap in time (a step's "
        "GPU work runs on past the next one's start)"
    ) in step.evidence
    assert "A: 39 steps" in step.evidence  # A has no shift: nothing said of it
    assert "cannot be told" not in step.evidence.split("; B:")[0]
