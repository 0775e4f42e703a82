"""tracelens diff on a re-phased pair (test_compare2_shift's: the diff re-phases B's steps
and B's level shift moves from its own step 20 to step 21) under a selection: --nvtx and
--step/--steps. The shift's step is the re-phased steps' number; the kernels named as
carrying it are the selection's; a kernel launched outside the matched NVTX ranges, or
slowed in steps not selected, is never named; a selection that leaves the shift out says
none."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import REDUCE_SUM
from fixtures.builder import _Recorder as Recorder
from test_compare2_shift import PID, STEP
from test_diff_unseen_pairs import clue

import tracelens
from tracelens.compare import diff
from tracelens.filters import select_nvtx
from tracelens.stepwork import select_steps

# launched after the second fill, outside both NVTX ranges
OPTIMIZER = "void optimizer_update_kernel<float>(float *, const float *, int)"
LOOP = [*STEP, (OPTIMIZER, 50_000)]
GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stag…"  # as the board cuts it


def looped(tmp_path, stem, waits, *, reduce_ns=15_000, shift_at=None):
    """40 iterations of LOOP on device 0 (steps by period), the host waiting ``waits[i]``
    before launch i (5 µs otherwise); from iteration ``shift_at`` on, the second GEMM call
    takes 300 µs instead of 60 µs and the optimizer 500 µs instead of 50 µs. NVTX ranges on
    the launching thread: 'prep' around launches 0-2 (GEMM, fill, reduction), 'fwd_attn'
    around 3-5 (attention, GEMM, fill), all inside one 'train' range (top-level ranges
    that repeat would be the steps: the period's steps are the ones re-phased)."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = first = 1_000_000
    for s in range(40):
        opened = {}
        for i, (name, dur) in enumerate(LOOP):
            t += waits.get(i, 5_000)
            dur = reduce_ns if name == REDUCE_SUM else dur
            if shift_at is not None and s >= shift_at:
                dur = {4: 300_000, 6: 500_000}.get(i, dur)
            if i in (0, 3):
                opened[i] = t - 8_000  # before the launch call (7 µs before the kernel)
            r.kernel(name, t, dur, pid=PID)
            t += dur
            if i in (2, 5):
                r.nvtx("prep" if i == 2 else "fwd_attn", opened[i - 2], t, pid=PID)
    r.nvtx("train", first - 100_000, t + 10_000, pid=PID)
    return r.write(tmp_path, stem).path


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A's steps start at the attention kernel; B's slower reduction eats that wait, so
    alone B's steps start at the second fill (its shift at its step 20), re-phased at the
    attention kernel as A's (the shift at step 21)."""
    tmp = tmp_path_factory.mktemp("selected_shift")
    a = looped(tmp, "a", {3: 200_000, 5: 150_000})
    b = looped(tmp, "b", {3: 5_000, 5: 150_000}, reduce_ns=210_000, shift_at=20)
    return a, b


PHASED = "B's steps start at their flash::flash_fwd_kernel launch, as A's"


def nvtx_diff(a, b, pattern):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        (wa, _), (wb, _) = select_nvtx(ta, pattern), select_nvtx(tb, pattern)
        return diff(ta, tb, where_a=wa, where_b=wb)


def steps_diff(a, b, spec):
    """The diff of steps ``spec`` of each trace, selected as the CLI selects them."""
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        wa, wb = select_steps(ta, spec).where, select_steps(tb, spec).where
        return diff(ta, tb, where_a=wa, where_b=wb)


def board_text(d) -> str:
    return " ".join(f"{c.clue} {c.evidence} {c.verdict}" for c in d.clues)


def test_without_a_selection_both_slowed_kernels_carry_the_shift(pair):
    """The whole pair: the optimizer (outside the NVTX ranges) and the GEMM both carry
    B's shift, at the re-phased step 21; what the selections below leave out."""
    with tracelens.open(pair[1]) as tb:
        assert tb.steps().level_shift.step == 20  # alone
    d = diff(*pair)
    assert PHASED in d.notes[-1]
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21: 1.05 ms -> 1.75 ms median" in (
        step.evidence
    )
    assert (
        "from step 21 on, per call: optimizer_update_kernel 50.00 µs → 500.0 µs (10.00×, "
        f"+450.0 µs/step); {GEMM} 230.0 µs → 350.0 µs (1.52×, +240.0 µs/step); the other "
        "kernels kept their cost"
    ) in step.evidence


def test_nvtx_names_only_the_kernels_launched_in_the_matched_ranges(pair):
    """--nvtx 'fwd*': the attention kernel, the second GEMM call and the fill of each
    step. B's shift is at the re-phased step 21, carried by the GEMM alone (60 → 300 µs
    a call); the optimizer, slowed too but launched outside the ranges, is named nowhere."""
    d = nvtx_diff(*pair, "fwd*")
    assert PHASED in d.notes[-1]
    step = clue(d, "step_time")
    assert (
        "B: not steady: step time changed at step 21: 355.0 µs -> 595.0 µs median (20 steps "
        "before, 19 from it)"
    ) in step.evidence
    assert (
        f"from step 21 on, per call: {GEMM} 60.00 µs → 300.0 µs (5.00×, +240.0 µs/step); "
        "the other kernels kept their cost"
    ) in step.evidence
    assert "the step time of B changed part-way, at step 21" in step.verdict
    (gemm,) = [c for c in d.clues if c.id == "per_call_outlier" and "xmma" in c.clue]
    assert "B: 60.00 µs per call before step 21, 300.0 µs from it (5.00×)" in gemm.evidence
    assert "optimizer" not in board_text(d)
    assert d.figures["level_shift"] == 21.0


def test_nvtx_that_leaves_the_shift_out_says_no_shift(pair):
    """--nvtx prep: the first GEMM call, the fill and the reduction, none slowed: no shift
    (the GEMM and the optimizer slowed in B's steps, outside the ranges)."""
    d = nvtx_diff(*pair, "prep")
    assert PHASED in d.notes[-1]
    step = clue(d, "step_time")
    assert "B: 39 steps, median 640.0 µs, p90 640.0 µs, std 0 ns" in step.evidence
    assert "not steady" not in step.evidence
    assert "from step" not in board_text(d)
    assert "optimizer" not in board_text(d)
    assert d.figures["level_shift"] == 0.0


def test_cli_nvtx_names_the_selected_carrier(pair, capsys):
    rc, out, _ = run_cli(["diff", *pair, "--nvtx", "fwd*", "-f", "json"], capsys)
    assert rc == 0
    data = json.loads(out)
    (step,) = [c for c in data["clues"] if c["id"] == "step_time"]
    assert (
        "B: not steady: step time changed at step 21: 355.0 µs -> 595.0 µs median"
        in (step["evidence"])
    )
    assert f"from step 21 on, per call: {GEMM} 60.00 µs → 300.0 µs (5.00×" in step["evidence"]
    assert "optimizer" not in out
    assert data["figures"]["level_shift"] == 21.0


def test_steps_name_the_carriers_of_the_selected_steps(pair):
    """--steps 11:30: each trace's own steps 11 to 30. Re-phased at the attention kernel,
    B's selected work starts inside its step 11 and ends inside its step 31: those two
    parts are no steps (left out, said), so the shift's parts hold whole steps and each
    kernel's calls per step are the same in both (5 of a step's 7 kernels in step 11 and
    2 in step 31 made the GEMM 238.9 → 347.6 µs a call, the optimizer +404.5 µs/step, and
    'other calls per step')."""
    d = steps_diff(*pair, "11:30")
    assert PHASED in d.notes[-1]
    assert d.notes[-1].endswith(
        "; B's steps 11 and 31 left out of its steps: once re-phased, the selected work "
        "holds only part of them"
    )
    step = clue(d, "step_time")
    assert step.evidence.startswith("A: 20 steps, median 860.0 µs")
    assert (
        "B: not steady: step time changed at step 21: 1.05 ms -> 1.75 ms median (9 steps "
        "before, 10 from it), 19 steps"
    ) in step.evidence
    assert (
        "from step 21 on, per call: optimizer_update_kernel 50.00 µs → 500.0 µs (10.00×, "
        f"+450.0 µs/step); {GEMM} 230.0 µs → 350.0 µs (1.52×, +240.0 µs/step); the other "
        "kernels kept their cost"
    ) in step.evidence
    assert "other calls per step" not in step.evidence
    assert d.figures["level_shift"] == 21.0


def test_steps_before_the_shift_say_no_shift(pair):
    """--steps 1:15: the GEMM and the optimizer slowed in B's steps 20 on, not selected:
    no shift, and neither is named."""
    d = steps_diff(*pair, "1:15")
    step = clue(d, "step_time")
    assert "not steady" not in step.evidence
    assert "from step" not in board_text(d)
    assert "optimizer" not in board_text(d)
    assert not [c for c in d.clues if c.id == "per_call_outlier" and "xmma" in c.clue]
    assert d.figures["level_shift"] == 0.0


def test_cli_steps_name_the_carriers_of_the_selected_steps(pair, capsys):
    rc, out, _ = run_cli(["diff", *pair, "--steps", "11:30", "-f", "json"], capsys)
    assert rc == 0
    data = json.loads(out)
    (step,) = [c["evidence"] for c in data["clues"] if c["id"] == "step_time"]
    assert "B: not steady: step time changed at step 21: 1.05 ms -> 1.75 ms median (9 " in step
    assert "from step 21 on, per call: optimizer_update_kernel 50.00 µs → 500.0 µs" in step
    assert "left out of its steps" in data["notes"][-1]
    assert data["figures"]["level_shift"] == 21.0


def test_a_step_selected_alone_is_not_cut_in_two(pair):
    """--step 20: re-phased, B's step 20 would be two parts of steps (the end of one, the
    start of the next), counted as two steps of half the time (B/A 0.67×, B's step slower
    as it is): no whole step is left, so B's steps stay as found, phased unlike A's."""
    d = steps_diff(*pair, "20")
    assert not [n for n in d.notes if "phased alike" in n]
    step = clue(d, "step_time")
    assert step.clue == "steady-state step: median 860.0 µs → 1.15 ms (+290.0 µs, 1.34×)"
    assert "B: 1 step, median 1.15 ms" in step.evidence
