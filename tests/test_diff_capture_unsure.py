"""A path change in a run's first steps is no capture difference (review of cb8a90e,
weakness (a)): two runs of one repeating step that differ only in their first steps also
read as two windows of one launch stream (one's end is the other's beginning), with what
the earlier capture alone holds taken for start-up. The capture reading is taken only when
the overlap matches more launches in order than the same start and end do; when both
readings hold, the path clue says the diff is unsure, never "capture"."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.compare import diff
from tracelens.compare.align import align_sequences
from tracelens.synth import TraceBuilder

US = 1000
PID = 321
STEP = ["embed", "gemm_qkv", "flash_attn", "gemm_o", "layernorm", "gemm_o_dgrad", "attn_bwd"]
WARM = STEP[:2] + ["gemm_autotune"] + STEP[2:]
PATH_CLUES = {"launch_order_changed", "same_count_different_path", "launch_sequence_diverges"}


def build(path, steps: list[list[str]], *, nvtx: bool = True):
    """One process on device 0 launching each step's kernels, each step in an NVTX
    'train_step' range when ``nvtx``."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    t = 1_000_000
    for names in steps:
        s0 = t
        t += 2 * US
        for name in names:
            call = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 4 * US, pid=PID)
            b.kernel(
                f"void {name}(float*)",
                start=t + 10 * US,
                end=t + 50 * US,
                pid=PID,
                correlation_id=call,
                grid=(64, 1, 1),
            )
            t += 60 * US
        t += 5 * US
        if nvtx:
            b.nvtx_range("train_step", start=s0, end=t, pid=PID)
    b.write(str(path))
    return path


def replaced(step):
    return [("gemm_o_dgrad_v2" if n == "gemm_o_dgrad" else n) for n in step]


def _diff(tmp_path, a, b, nvtx=True):
    with tracelens.open(build(tmp_path / "a.sqlite", a, nvtx=nvtx)) as ta:
        with tracelens.open(build(tmp_path / "b.sqlite", b, nvtx=nvtx)) as tb:
            return diff(ta, tb)


def ids(d):
    return {c.id for c in d.clues}


@pytest.mark.parametrize("nvtx", [True, False])
def test_a_kernel_replaced_in_the_second_step_of_30_is_a_path_change(tmp_path, nvtx):
    """B is A with gemm_o_dgrad replaced in step 2 only: B's last 28 steps are also A's
    first 28, which the old code read as B's capture starting a step earlier ('both
    repeat one step', no path clue)."""
    d = _diff(tmp_path, [STEP] * 30, [STEP, replaced(STEP)] + [STEP] * 28, nvtx)
    (al,) = d.alignment
    assert not al.capture_difference and "capture_difference" not in ids(d)
    assert al.replaced == (("void gemm_o_dgrad(float*)", "void gemm_o_dgrad_v2(float*)", 1),)
    assert al.first_divergence == len(STEP) + 5
    (path,) = [c for c in d.clues if c.id in PATH_CLUES]
    assert path.id == "same_count_different_path"
    # B repeats the step, launches another kernel, then repeats it again: what B alone
    # would hold before A's capture is no start-up, so the diff is sure of the path
    assert al.relation == "aligned" and not path.verdict.startswith("unsure")


def test_a_run_that_skips_the_warm_up_is_unsure_not_a_capture_difference(tmp_path):
    """A has two warm-up steps (an autotune kernel more), B none, 30 steps each: B may
    have skipped the warm-up (a path change) or been captured from step 3 to 32 of one
    run; the launches cannot tell, and the board says so instead of 'capture'."""
    d = _diff(tmp_path, [WARM] * 2 + [STEP] * 28, [STEP] * 30)
    (al,) = d.alignment
    assert al.relation == "shifted" and not al.capture_difference
    assert "capture_difference" not in ids(d)
    assert dict(al.only_in_a) == {"void gemm_autotune(float*)": 2}
    assert al.matched_in_order == 30 * len(STEP)
    (path,) = [c for c in d.clues if c.id in PATH_CLUES]
    assert path.verdict.startswith("unsure: ")
    assert "captures of one run started at other points" in path.evidence


@pytest.mark.parametrize(
    ("step", "change"),
    [
        (["a", "b"], lambda s: ["a", "c"]),  # a 2-launch step
        (["big"] * 5 + ["x"], lambda s: ["big"] * 4 + ["y", "x"]),  # one dominant kernel
        (STEP, lambda s: s[:5] + [s[6], s[5]]),  # two launches swapped
    ],
)
@pytest.mark.parametrize("where", [0, 1, 2])
def test_a_change_in_the_first_steps_is_aligned_in_place(step, change, where):
    """Step ``where`` (of 30) changed, the others alike: the change is matched in place,
    every other launch matches in order, and no capture is claimed."""
    b = [step] * where + [change(step)] + [step] * (29 - where)
    al = align_sequences(0, step * 30, [n for s in b for n in s])
    assert al.relation in ("aligned", "shifted") and not al.capture_difference
    assert al.matched_in_order >= 30 * len(step) - 2
    assert al.first_divergence < (where + 1) * len(step)


def test_windows_of_one_run_cut_mid_step_stay_a_capture_difference(tmp_path):
    """A holds steps 1-20 and 3 launches of step 21, B starts at step 11's 5th launch and
    ends with step 30: only the overlap lines them up (their starts and ends are
    elsewhere in a step), so that is a capture difference. Steady steps all look alike: the
    longest overlap counts (weakness (b)), at least the launches the windows share."""
    run = [n for s in [WARM] * 2 + [STEP] * 28 for n in s]
    start_b = len(WARM) * 2 + 8 * len(STEP) + 4
    a, b = run[: len(WARM) * 2 + 18 * len(STEP) + 3], run[start_b:]
    al = align_sequences(0, a, b)
    assert al.relation == "capture" and al.matched_in_order >= len(a) - start_b
    assert not al.replaced and {n for n, _ in al.only_in_a} == set(WARM)


@pytest.mark.parametrize("cut", ["end", "start", "both"])
def test_a_change_in_the_second_step_with_a_capture_cut_mid_step_is_no_capture(cut):
    """B is A with step 2 changed, and cut 3 launches short at one end or both: the
    overlap (B's last 28 steps are A's first 28) beats the common prefix and suffix, and
    with both ends cut B lined up with A at their starts or ends too, but what B alone
    would hold before it (a step, then the change) is no start-up: a path change."""
    b = [n for s in [STEP, replaced(STEP)] + [STEP] * 28 for n in s]
    b = {"end": b[:-3], "start": b[3:], "both": b[3:-3]}[cut]
    al = align_sequences(0, STEP * 30, b)
    assert al.relation == "aligned" and not al.capture_difference
    assert al.replaced == (("gemm_o_dgrad", "gemm_o_dgrad_v2", 1),)
    assert al.matched_in_order >= len(b) - len(STEP)  # difflib: longest blocks first
