"""Two captures of one program, both cut mid-step at both ends: 233 and 232 launches of the
same sequence. The capture line said "B holds 0% fewer launches of the same sequence", and
"capture the same number of steps" of captures that hold as many."""

from __future__ import annotations

from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, pair, recorder


def test_a_capture_one_launch_shorter_says_the_count_not_0_percent(tmp_path):
    def cut(stem, first, last):
        r, t = recorder(), 1_000_000
        launches = [s for _ in range(30) for s in STEP][first : 240 - last]
        for name, dur in launches:
            r.kernel(name, t, dur, pid=PID)
            t += dur + 1_000
        return r.write(tmp_path, stem).path

    d = pair(cut("a", 5, 2), cut("b", 3, 5))
    (c,) = [c for c in d.clues if c.id == "capture_difference"]
    assert c.clue == "B holds 1 fewer launches of the same sequence"
    # as many steps in both: windows from other points, not "capture the same number of
    # steps" (it said so, beside "29 steps in A, 29 in B")
    assert c.verdict == (
        "the captures are windows of the same work from other points of the run (both "
        "repeat one step: 29 steps in A, 29 in B), cut at other launches, not different "
        "paths: compare per call or per step"
    )
