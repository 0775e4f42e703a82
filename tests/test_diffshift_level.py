"""tracelens diff on runs whose step time shifts level part-way (half the steps at one
level, then a jump: a kernel 1.5x slower from step 21 on, or every kernel): the board says
which side shifted, at which step, which kernels carry it, and that the steady-state
comparison depends on the level taken; it does not read the shift as a host stall or as
the whole GPU side slower from A to B."""

from __future__ import annotations

import pytest
from fixtures.builder import FLASH_FWD, XMMA_GEMM
from test_diff_unseen_pairs import PID, TRAIN, clue, ids, pair, recorder

import tracelens
from tracelens.compare import diff

STEPS, AT = 40, 20  # 40 steps, the shift before the 21st (index 20)


#: A second process's kernel (run's ``neighbour``)
OTHER = "void other_proc_kernel(float*)"


def run(tmp_path, stem, factor=lambda i, name: 1.0, gap=lambda i: 20_000, *, neighbour=False):
    """``STEPS`` training steps on one stream; ``factor(i, name)`` scales each call of
    step ``i``; ``gap(i)`` is the host's idle time after it; ``neighbour``: a second
    process launches a 20 µs kernel on the same GPU (another stream) beside every
    attention call."""
    r, t = recorder(), 1_000_000
    if neighbour:
        r.process(PID + 1, "python other.py")
    for i in range(STEPS):
        for name, dur in TRAIN:
            d = int(dur * factor(i, name))
            r.kernel(name, t, d, pid=PID)
            if neighbour and name == FLASH_FWD:
                r.kernel(OTHER, t + 100, 20_000, pid=PID + 1, stream=9)
            t += d + 1_000
        t += gap(i)
    return r.write(tmp_path, stem).path


def gemm_shift(i, name):
    return 1.5 if i >= AT and name == XMMA_GEMM else 1.0


def all_shift(i, name):
    return 1.5 if i >= AT else 1.0


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shift")
    return {
        "steady": run(tmp, "steady"),
        "gemm": run(tmp, "gemm", gemm_shift),
        "all": run(tmp, "all", all_shift),
        "stall": run(tmp, "stall", gap=lambda i: 5_000_000 if i == AT else 20_000),
    }


def test_a_kernel_slower_from_step_21_is_named_with_the_shift(traces):
    d = pair(traces["steady"], traces["gemm"])
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21" in step.evidence
    assert "from step 21 on, per call: sm80_xmma_gemm" in step.evidence
    assert "40.00 µs → 60.00 µs (1.50×, +40.00 µs/step); the other kernels kept their cost" in (
        step.evidence
    )
    # the steady-state comparison depends on the level taken
    assert "B/A is 1.00× with B's steps before step 21, 1.30× with those from it" in step.verdict
    # the GEMM's 1.25x per call is a mean of two levels, and said so
    gemm = clue(d, "per_call_outlier")
    assert "B: 40.00 µs per call before step 21, 60.00 µs from it (1.50×)" in gemm.evidence
    assert "part-way through B's run" in gemm.verdict
    assert "inputs' contents" not in gemm.verdict


def test_the_lead_line_does_not_call_a_level_shift_a_host_stall(traces):
    d = pair(traces["steady"], traces["gemm"])
    lead = clue(d, "time_accounting")
    assert "host stall" not in lead.verdict
    assert "the step time of B changed part-way" in lead.verdict


def test_the_shifted_side_is_a_when_a_shifted(traces):
    d = pair(traces["gemm"], traces["steady"])
    step = clue(d, "step_time")
    assert "A: not steady: step time changed at step 21" in step.evidence
    assert "B/A is 1.00× with A's steps before step 21, 0.77× with those from it" in step.verdict
    assert "A: 60.00 µs per call" not in clue(d, "per_call_outlier").evidence
    assert "A: 40.00 µs per call before step 21, 60.00 µs from it" in (
        clue(d, "per_call_outlier").evidence
    )


def test_every_kernel_slower_from_step_21_is_b_part_way_not_the_whole_gpu_from_a_to_b(traces):
    d = pair(traces["steady"], traces["all"])
    step = clue(d, "step_time")
    assert "from step 21 on, every kernel alike: 1.50× per call" in step.evidence
    assert "the other kernels kept their cost" not in step.evidence
    uniform = clue(d, "uniform_change")
    assert "B: from step 21 on, every kernel alike: 1.50× per call" in uniform.evidence
    assert "the GPU side of B got slower part-way through its run" in uniform.verdict
    assert "whole GPU side" not in uniform.verdict


def test_a_host_stall_mid_capture_is_still_a_few_long_waits(traces):
    """No level shift: one 5 ms stall between steps 21 and 22 is a host stall."""
    d = pair(traces["steady"], traces["stall"])
    assert ids(d) == ["time_accounting"]
    assert "a host stall" in d.clues[0].verdict
    assert "part-way" not in d.clues[0].verdict


def test_short_names_name_the_kernels_that_carry_the_shift(traces):
    """By short name the step search's launches carry demangled ids: each is named by its
    short name (compare2; the GEMM's short name is its name), as with demangled names."""
    with tracelens.open(traces["steady"]) as ta, tracelens.open(traces["gemm"]) as tb:
        d = diff(ta, tb, name="short")
    step = clue(d, "step_time")
    assert "B: not steady: step time changed at step 21" in step.evidence
    assert "from step 21 on, per call: sm80_xmma_gemm" in step.evidence
    assert "B/A is 1.00× with B's steps before step 21" in step.verdict


def test_the_json_board_carries_the_shift(traces, capsys):
    import json

    from conftest import run_cli

    args = ["diff", traces["steady"], traces["gemm"], "-f", "json"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    (step,) = [c for c in json.loads(out)["clues"] if c["id"] == "step_time"]
    assert "from step 21 on, per call: sm80_xmma_gemm" in step["evidence"]
    assert "flash" not in step["evidence"]  # it kept its cost: not named
