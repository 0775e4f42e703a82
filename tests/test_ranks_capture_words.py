"""The capture row of `tracelens ranks` (ranks.consistency) is said from the fingerprint
comparison's ends (fingerprint.ends.CaptureEnds), not by rewriting the comparison's
sentence: the ranks' paired calls place the launches only where the comparison cannot
(every step the same program), and never garble a sentence that holds launches of both
ranks."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa
from fixtures.fingerprint_runs import Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.fingerprint.ends import CaptureEnds
from tracelens.ranks.consistency import _capture_row, _path_differences

STEP = 7  # launches in a step of the fixture's program


def _summary(path, steps: int) -> SimpleNamespace:
    with tracelens.open(path, cache=False) as trace:
        doc = fp.dumps(tracelens.fingerprint(trace))
    kernels = pa.table({"step": list(range(1, steps + 1)), "kernels": [STEP] * steps})
    return SimpleNamespace(fingerprint=doc, steps=kernels)


def test_launches_of_both_ranks_are_said_as_the_comparison_places_them(tmp_path):
    """Rank 2 started 3 launches into step 1 and ended 3 launches into step 8: the
    comparison holds launches of each rank the other lacks. Its paired calls inside rank
    0's did not garble that (the old regex rewrite said "8 launches of rank 0, at its start
    and end, and the first 1 launches of rank 2"), nor does a start they place later."""
    full = _summary(build_run(tmp_path / "full.sqlite", Run(steps=8)), 8)
    cut = _summary(build_run(tmp_path / "cut.sqlite", Run(steps=8, skip=3, launches=49)), 6)
    said = (
        "rank 0's path; rank 2 holds 2 fewer steps (6 vs 8: a shorter capture): the last 8 "
        "launches of rank 0 and the first launch of rank 2 are in one capture only"
    )
    for spans in ({0: (1, 8), 2: (2, 7)}, {0: (1, 8), 2: (3, 8)}, {}):
        rows = _path_differences([(0, full), (1, full), (2, cut)], spans)
        assert rows == [{"rank": 2, "what": "capture", "detail": said}], spans


def test_paired_calls_do_not_move_launches_the_comparison_placed():
    """Not every step is the same program: the comparison knows where the launches are,
    and the ranks' spans leave them there (and its words)."""
    ends = CaptureEnds(4, 2, "marker", "marker", past_end_a=20)
    row = _capture_row(2, 0, ends, {0: (1, 4), 2: (3, 4)}, {})
    assert row["detail"] == (
        "rank 0's path; rank 2 holds 2 fewer steps (2 vs 4: a shorter capture): the last 20 "
        "launches of rank 0 are in rank 0 only"
    )


def test_paired_calls_place_launches_of_one_program_at_its_start():
    """Every step the same program: the comparison's "last 10" could as well be the first
    10; the paired calls say rank 3 started later and both ended together."""
    ends = CaptureEnds(6, 4, "marker", "marker", past_end_a=10, ambiguous=True)
    row = _capture_row(3, 0, ends, {0: (1, 6), 3: (3, 6)}, {})
    assert row["detail"] == (
        "rank 0's path; rank 3 holds 2 fewer steps (4 vs 6: a capture that started later): "
        "the first 10 launches of rank 0 are in rank 0 only"
    )
    longer = CaptureEnds(4, 6, "marker", "marker", past_end_b=10, ambiguous=True)
    row = _capture_row(3, 0, longer, {0: (3, 6), 3: (1, 6)}, {})
    assert row["detail"] == (
        "rank 0's path; rank 3 holds 2 more steps (6 vs 4: a capture that started earlier): "
        "the first 10 launches of rank 3 are in rank 3 only"
    )


def test_steps_found_otherwise_and_the_same_count_keep_their_words():
    other = CaptureEnds(8, 4, "marker", "period", past_end_a=3)
    assert _capture_row(1, 0, other, {}, {})["detail"] == (
        "rank 0's path; rank 1 holds 4 steps by period, rank 0 8 by marker (another "
        "capture): the last 3 launches of rank 0 are in rank 0 only"
    )
    same = CaptureEnds(8, 8, "marker", "marker", past_end_a=1)
    assert _capture_row(1, 0, same, {}, {})["detail"] == (
        "rank 0's path; rank 1 holds the same 8 steps (a capture that starts or ends inside "
        "one): the last launch of rank 0 is in rank 0 only"
    )
