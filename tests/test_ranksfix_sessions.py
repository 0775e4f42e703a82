"""tracelens ranks on exports whose sessions started hours apart (captures of different
runs): they were clock-corrected as one run ('the most rank 3 by -10,800.0 s; ends then
agree within 0 ns') and their calls counted in the waits. A session further than
``[clocks] session_gap_max_ns`` (1 h) from the run's is said to be a separate session, its
clock is not aligned and its calls are not paired (ranksfix 4)."""

from __future__ import annotations

import sqlite3

import polars as pl
from fixtures.ranks import build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.rules import ranks_rules

HOURS_3 = 3 * 3_600_000_000_000


def _later(path, ns: int) -> None:
    """The export's session started ``ns`` later (its events keep their times from it)."""
    con = sqlite3.connect(path)
    con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + ?", (ns,))
    con.commit()
    con.close()


def test_a_session_hours_later_is_said_and_not_aligned(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, steps=4, slow_rank=2)
    _later(rs.paths[3], HOURS_3)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock.filter(pl.col("rank") == 3).row(0) == (3, HOURS_3 + 3_000_000, None, 0, None)
    assert r.clock["correction_ns"].to_list()[:3] == [rs.correction_ns(k) for k in range(3)]
    assert r.findings[:3] == (
        "rank 2 made the others wait 38.00 ms per step in AllReduce (last to arrive in 4 of 4 "
        "calls)",
        "rank 3 is a separate session: started 3.0 h after the sessions of the other 3 ranks "
        "(the ranks of one run start within 1 h of each other), as another run's capture or "
        "a host clock off by as much would, so its clock is not aligned and its collectives "
        "are not paired with the run's",
        "clocks aligned on collective ends (reference rank 0): 2 rank(s) corrected, the most "
        "rank 1 by -370.0 µs; ends then agree within 0 ns",
    )
    assert not any("clock is not aligned: none of its" in f for f in r.findings)
    assert r.ranks.filter(pl.col("rank") == 3)["waited_ns"].to_list() == [None]
    assert r.collectives["ranks"].unique().to_list() == [3]


def test_the_session_of_most_ranks_is_the_run(tmp_path):
    # ranks 0 and 1 started 3 h after ranks 2 and 3: of equal sessions, the one holding the
    # lowest rank is the run, and the other is said as before it
    rs = build_rank_set(tmp_path, ranks=4, steps=4, slow_rank=None)
    for k in (0, 1):
        _later(rs.paths[k], HOURS_3)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock["matched"].to_list() == [8, 8, 0, 0]
    assert r.reference_rank == 0
    assert (
        "ranks 2 and 3 are separate sessions: started 3.0 h before the sessions of the other 2 "
        "ranks (the ranks of one run start within 1 h of each other), as another run's "
        "capture or a host clock off by as much would, so their clocks are not aligned and "
        "their collectives are not paired with the run's"
    ) in r.findings


def test_sessions_within_the_gap_are_one_run(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, steps=4, slow_rank=1)
    _later(rs.paths[1], ranks_rules().session_gap_max_ns - 1_000_000)
    r = analyse_ranks([rs.dest], jobs=1)
    assert not any("separate session" in f for f in r.findings)
    assert r.clock["matched"].to_list() == [8, 8]


def test_two_ranks_hours_apart(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, steps=4, slow_rank=1)
    _later(rs.paths[1], HOURS_3)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings[:2] == (
        "only rank 0's collective calls pair (the others ran none, or theirs do not pair): "
        "who waited for whom cannot be measured",
        "rank 1 is a separate session: started 3.0 h after the other rank's session (the "
        "ranks of one run start within 1 h of each other), as another run's capture or a host "
        "clock off by as much would, so its clock is not aligned and its collectives are not "
        "paired with the run's",
    )
