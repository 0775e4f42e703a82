"""tracelens ranks when a rank's clock is off by about whole steps (200 ms, beyond the 20 ms
a synchronised clock errs by): its calls pair with the reference's two steps away, as a
capture that started later would, and the finding stated one cause ('rank 1's capture
started later than rank 0's ...; its 6 steps are the run's steps 3-8') where its capture
is as long as the others' and starts and ends on the same side of theirs, which a clock
off by those steps explains as well. Then both are said, as unsure; a capture that only
started later (it holds fewer calls, ending with the others') keeps its one cause
(tests/test_ranks_late_capture.py) (ranksfix 5)."""

from __future__ import annotations

from fixtures.ranks import build_rank_set, default_skews

from tracelens.ranks import analyse_ranks


def _off(tmp_path, rank: int, ns: int, ranks: int):
    skews = default_skews(ranks)
    skews[rank] += ns
    rs = build_rank_set(tmp_path, ranks=ranks, steps=6, slow_rank=2, skew_ns=skews)
    return analyse_ranks([rs.dest], jobs=1)


def test_a_clock_off_by_two_steps_is_not_said_to_be_a_late_capture(tmp_path):
    r = _off(tmp_path, 1, 200_000_000, ranks=4)
    assert not any("capture started later than" in f for f in r.findings)
    assert (
        "rank 1's collectives pair with rank 0's by their times, where its first collective "
        "is rank 0's call #5 (communicator 0): its capture started and ended later than rank "
        "0's, or its clock runs 200.4 ms ahead of rank 0's (about a whole number of steps: "
        "each call then ends with another of the same collective); the exports cannot tell "
        "which, and its calls are paired as a capture that started later; its 6 steps are the "
        "run's steps 3-8"
    ) in r.findings
    # the pairing itself is unchanged: rank 2 is the straggler of the 6 steps it holds
    assert r.step_stragglers["straggler_rank"].to_list() == [2] * 6 + [None] * 2


def test_a_clock_behind_by_a_step_is_unsure_too(tmp_path):
    r = _off(tmp_path, 1, -100_000_000, ranks=4)
    said = [f for f in r.findings if f.startswith("rank 1's collectives pair")]
    assert said == [
        "rank 1's collectives pair with rank 0's by their times, where its call #3 is rank "
        "0's first collective (communicator 0): its capture started and ended earlier than "
        "rank 0's, or its clock runs 99.63 ms behind rank 0's (about a whole number of steps: "
        "each call then ends with another of the same collective); the exports cannot tell "
        "which, and its calls are paired as a capture that started earlier"
    ]


def test_the_references_clock_off_is_said_once_as_unsure(tmp_path):
    r = _off(tmp_path, 0, 200_000_000, ranks=3)
    said = [f for f in r.findings if "pair with" in f or "capture started" in f]
    assert said == [
        "rank 0's collectives pair with the other ranks' by their times, where its first "
        "collective is their call #5 (communicator 0): its capture started and ended later "
        "than theirs, or its clock runs 199.6 ms ahead of theirs (about a whole number of "
        "steps: each call then ends with another of the same collective); the exports cannot "
        "tell which, and its calls are paired as a capture that started later; its 6 steps "
        "are the run's steps 3-8"
    ]
