"""tracelens diff on pairs a user brings that the level-shift tests do not build: B with a
second process launching on the same GPU (its launches are other work beside the same
sequence, not a longer capture of it)."""

from __future__ import annotations

import pytest
from fixtures.builder import FLASH_FWD
from test_diff_unseen_pairs import PID, TRAIN, clue, ids, pair, recorder

OTHER = "void other_proc_kernel(float*)"


def run(tmp_path, stem, *, neighbour=False):
    """40 training steps; ``neighbour``: a second process launches a 20 µs kernel on the
    same GPU (another stream) beside every attention call."""
    r, t = recorder(), 1_000_000
    if neighbour:
        r.process(PID + 1, "python other.py")
    for _ in range(40):
        for name, dur in TRAIN:
            r.kernel(name, t, dur, pid=PID)
            if neighbour and name == FLASH_FWD:
                r.kernel(OTHER, t + 100, 20_000, pid=PID + 1, stream=9)
            t += dur + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


@pytest.fixture(scope="module")
def neighbour_pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("neighbour")
    return pair(run(tmp, "alone"), run(tmp, "shared", neighbour=True))


def test_a_second_process_on_the_gpu_is_other_work_not_a_longer_capture(neighbour_pair):
    d = neighbour_pair
    assert "capture_difference" not in ids(d)
    c = clue(d, "other_work")
    assert c.clue == "B holds 40 more launches, all of kernels A never launches"
    assert c.evidence == (
        "device 0: 320 → 360 launches; 320 in common, in order; 40 → 40 steps; "
        "only in B: other_proc_kernel (40)"
    )
    assert "cut short" not in c.verdict
    assert "another process on the same GPU" in c.verdict


def test_steps_that_overlap_in_time_name_no_kernel_for_their_shift(neighbour_pair):
    """B's step search counts the other process's launches as 5 more steps after the
    run's own (a 'shift' at step 41): their windows overlap the run's steps in time, so
    no kernel is named as carrying it (the old parts by time named the run's own GEMM
    '+631 us/step, other calls per step')."""
    step = clue(neighbour_pair, "step_time")
    assert "per call:" not in step.evidence
    assert "which kernels carry it" not in step.verdict
