"""Period steps of a device another program also launched on: the steps are the loop's
processes' (those whose own steps repeat the kernels of the process whose steps hold the
most launches), the other program's launches in no step. Taken as one
launch sequence (each process's launches come one after another), the other program's 40
launches were cut into 5 more 'steps' of the motif's length: 'step time changed at step 41:
133.5 µs -> 1.10 ms median'; launched first, they came first."""

from __future__ import annotations

import pytest
from test_diff_unseen_pairs import PID, TRAIN, recorder

import tracelens

OTHER = "void other_proc_kernel(float*)"


def run(tmp_path, stem, *, other_first=False):
    """40 training steps of 8 kernels by PID; a second process launches a 20 µs kernel
    beside every attention call (before the loop's first launch when ``other_first``)."""
    r, t = recorder(), 1_000_000
    r.process(PID + 1, "python other.py")
    first = True
    for _ in range(40):
        for name, dur in TRAIN:
            if other_first and first:
                r.kernel(OTHER, t - 500, 200, pid=PID + 1, stream=9)
                first = False
            r.kernel(name, t, dur, pid=PID)
            if name == TRAIN[2][0]:
                r.kernel(OTHER, t + 100, 20_000, pid=PID + 1, stream=9)
            t += dur + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


@pytest.mark.parametrize("other_first", [False, True], ids=["after", "first"])
def test_the_other_process_launches_are_in_no_step(tmp_path, other_first):
    with tracelens.open(run(tmp_path, "shared", other_first=other_first), cache=False) as t:
        s = t.steps()
    assert s.method == "period" and s.count == 40, s.detail
    assert s.frame["kernels"].unique().to_list() == [8]
    others = 41 if other_first else 40
    assert (
        f"device 0: a motif of 8 kernels (the {others} launches of 1 other process on it, "
        "which run no such loop, in no step)"
    ) in s.detail
    assert "changed at step" not in s.detail
