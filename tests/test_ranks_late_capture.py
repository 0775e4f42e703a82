"""tracelens ranks when one rank's capture started later (nsys started on its node after
the others, --capture-range): its calls are paired with the others' by time, not from each
capture's start, so its clock correction is its clock error, its steps are the run's steps
it holds, and the launches it lacks are its first ones (review6 B2)."""

from __future__ import annotations

import sqlite3

import polars as pl
import pytest
from fixtures.ranks import FIRST_STEP_NS, STEP_PERIOD_NS, build_rank_set

from tracelens.ranks import analyse_ranks

TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")
# before step 3's first launch (minus the largest skew and the launch lead)
CUT_NS = FIRST_STEP_NS + 2 * STEP_PERIOD_NS - 10_000_000


def _cut(path, keep_from: bool) -> None:
    """Drop what a capture that started at step 3 (``keep_from``) or ended after step 4
    would not hold."""
    cut = CUT_NS if keep_from else FIRST_STEP_NS + 4 * STEP_PERIOD_NS - 10_000_000
    con = sqlite3.connect(path)
    for table in TABLES:
        con.execute(f"DELETE FROM {table} WHERE start {'<' if keep_from else '>='} ?", (cut,))
    con.commit()
    con.close()


@pytest.fixture(scope="module")
def late(tmp_path_factory):
    rs = build_rank_set(tmp_path_factory.mktemp("late"), ranks=4, steps=6, slow_rank=2)
    _cut(rs.paths[3], keep_from=True)
    return rs, analyse_ranks([rs.dest], jobs=1)


def test_late_capture_gets_its_clock_error_not_two_steps(late):
    rs, r = late
    # as with the full capture: the skew (-296 us), not -200.3 ms
    assert r.clock["correction_ns"].to_list() == [rs.correction_ns(k) for k in range(4)]
    assert r.clock["residual_ns"].to_list() == [0, 0, 0, 0]
    assert r.clock["matched"].to_list() == [12, 12, 12, 8]
    assert r.findings[1].endswith("the most rank 1 by -370.0 µs; ends then agree within 0 ns")


def test_late_capture_holds_the_runs_later_steps(late):
    rs, r = late
    m = r.step_matrix()
    row = m.filter(pl.col("rank") == 3).row(0, named=True)
    assert [row[f"step_{k}_ns"] for k in range(1, 7)] == [None, None] + [90_000_000] * 4
    s = r.step_stragglers
    assert s["ranks"].to_list() == [3, 3, 4, 4, 4, 4]
    assert s["straggler_rank"].to_list() == [2] * 6
    assert r.findings[0] == (
        "rank 2 made the others wait 38.00 ms per step in AllReduce (last to arrive in 6 of "
        "6 calls)"
    )
    # its calls are the run's calls #5-12
    mine = r.collectives.filter(pl.col("ranks") == 4)["seq"].to_list()
    assert mine == list(range(5, 13))
    assert (
        "rank 3's capture started later than rank 0's: its first collective is rank 0's call "
        "#5 (communicator 0), paired from there; its 4 steps are the run's steps 3-6"
    ) in r.findings


def test_late_capture_lacks_its_first_launches(late):
    _, r = late
    capture = r.inconsistencies.filter(pl.col("what") == "capture")["detail"].to_list()
    assert capture == [
        "rank 0's path; rank 3 holds 2 fewer steps (4 vs 6: a capture that started later): "
        "the first 10 launches of rank 0 are in rank 0 only"
    ]


def test_early_end_keeps_its_words_and_numbers(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, steps=6, slow_rank=2)
    _cut(rs.paths[3], keep_from=False)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock["correction_ns"].to_list() == [rs.correction_ns(k) for k in range(4)]
    assert not any("capture started" in f for f in r.findings)
    row = r.step_matrix().filter(pl.col("rank") == 3).row(0, named=True)
    assert [row[f"step_{k}_ns"] for k in range(1, 7)] == [90_000_000] * 4 + [None, None]
    capture = r.inconsistencies.filter(pl.col("what") == "capture")["detail"].to_list()
    assert capture == [
        "rank 0's path; rank 3 holds 2 fewer steps (4 vs 6: a shorter capture): the last 10 "
        "launches of rank 0 are in rank 0 only"
    ]


def test_late_reference_is_said_once(tmp_path):
    # rank 0 (the reference) started late: every other rank holds 4 calls before its first
    rs = build_rank_set(tmp_path, ranks=3, steps=6, slow_rank=2)
    _cut(rs.paths[0], keep_from=True)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock["correction_ns"].to_list() == [rs.correction_ns(k) for k in range(3)]
    said = [f for f in r.findings if "capture started" in f]
    assert said == [
        "rank 0's capture started later than the other ranks': its first collective is "
        "their call #5 (communicator 0), paired from there; its 4 steps are the run's steps 3-6"
    ]
    assert r.step_stragglers["ranks"].to_list() == [2, 2, 3, 3, 3, 3]


def _keep_steps_3_to_6(path) -> None:
    """Drop what a capture that started at step 3 and ended after step 6 would not hold."""
    keep = (CUT_NS, FIRST_STEP_NS + 6 * STEP_PERIOD_NS - 10_000_000)
    con = sqlite3.connect(path)
    for table in TABLES:
        con.execute(f"DELETE FROM {table} WHERE start < ? OR start >= ?", keep)
    con.commit()
    con.close()


def test_capture_started_later_and_ended_earlier_says_both(tmp_path):
    # rank 2 holds steps 3-6 of 8: 2 steps (10 launches) missing at each end, not "the
    # last 20 launches of rank 0"
    rs = build_rank_set(tmp_path, ranks=3, steps=8, slow_rank=1)
    _keep_steps_3_to_6(rs.paths[2])
    r = analyse_ranks([rs.dest], jobs=1)
    capture = r.inconsistencies.filter(pl.col("what") == "capture")["detail"].to_list()
    assert capture == [
        "rank 0's path; rank 2 holds 4 fewer steps (4 vs 8: a capture that started later and "
        "ended earlier): the first 10 and the last 10 launches of rank 0 are in rank 0 only"
    ]
    assert r.clock["correction_ns"].to_list() == [rs.correction_ns(k) for k in range(3)]


def test_the_one_capture_that_started_earlier_and_ended_later_says_both(tmp_path):
    # ranks 1 and 2 hold steps 3-6 of 8 (their path is the common one): rank 0 holds more
    # at both ends
    rs = build_rank_set(tmp_path, ranks=3, steps=8, slow_rank=1)
    for path in rs.paths[1:]:
        _keep_steps_3_to_6(path)
    r = analyse_ranks([rs.dest], jobs=1)
    capture = r.inconsistencies.filter(pl.col("what") == "capture")["detail"].to_list()
    assert capture == [
        "rank 1's path; rank 0 holds 4 more steps (8 vs 4: a capture that started earlier and "
        "ended later): the first 10 and the last 10 launches of rank 0 are in rank 0 only"
    ]


def test_launches_at_both_ends_that_the_steps_do_not_count_keep_their_total():
    # 20 launches missing, the wider capture's steps outside the other's hold 4 + 4 (the
    # rest ran outside its steps): the total is said at both ends, not a wrong split
    from types import SimpleNamespace

    import pyarrow as pa

    from tracelens.fingerprint.ends import CaptureEnds
    from tracelens.ranks.consistency import _capture_row

    steps = pa.table({"step": [1, 2, 3, 4], "kernels": [4, 5, 5, 4]})
    ends = CaptureEnds(4, 2, "marker", "marker", past_end_a=20, ambiguous=True)
    summaries = {0: SimpleNamespace(steps=steps)}
    row = _capture_row(2, 0, ends, {0: (1, 4), 2: (2, 3)}, summaries)
    assert row["detail"] == (
        "rank 0's path; rank 2 holds 2 fewer steps (2 vs 4: a capture that started later and "
        "ended earlier): 20 launches of rank 0, at its start and end, are in rank 0 only"
    )


def test_a_capture_too_short_to_find_steps_in_is_a_capture_difference(tmp_path):
    # rank 3 holds steps 5-6 of 6: too few to find steps in, so its regions are its NVTX
    # ranges where the others' are their steps; not "differs (path): (outside NVTX
    # ranges), device 0, launch #1: removed ncclDevKernel_AllGather..."
    rs = build_rank_set(tmp_path, ranks=4, steps=6, slow_rank=2)
    con = sqlite3.connect(rs.paths[3])
    for table in TABLES:
        con.execute(f"DELETE FROM {table} WHERE start < ?", (CUT_NS + 2 * STEP_PERIOD_NS,))
    con.commit()
    con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    mine = r.inconsistencies.filter(pl.col("rank") == 3)
    assert mine["what"].to_list() == ["capture", "collectives"]
    assert mine["detail"][0] == (
        "rank 0's path over a shorter capture: rank 3's is too short to find steps in (10 "
        "launches; rank 0's: 30 launches, 6 steps by marker), and each of its kernels runs no "
        "more often than in rank 0's; not compared region by region"
    )
    assert not any("differs (path)" in f for f in r.findings)


def _doc(steps: int, paths: list[dict], names: list[str]) -> dict:
    launches = sum(len(p["sequence"]) * max(len(p["steps"]), 1) for p in paths)
    return {
        "steps": {"method": "marker" if steps else "none", "count": steps},
        "launches": launches,
        "variants": [{"id": i, "name": n} for i, n in enumerate(names)],
        "paths": paths,
    }


def test_a_short_capture_running_other_kernels_is_no_capture_difference():
    from tracelens.ranks.consistency import _too_short_for_steps

    base = _doc(3, [{"device": 0, "region": [], "steps": [1, 2, 3], "sequence": [0, 1]}], "ab")
    short = _doc(0, [{"device": 0, "region": ["s 3"], "steps": [], "sequence": [1, 0]}], "ab")
    assert _too_short_for_steps(base, short) is not None
    # a kernel the common path does not run, or runs less often, is a path difference
    other = _doc(0, [{"device": 0, "region": ["s 3"], "steps": [], "sequence": [2, 0]}], "abc")
    assert _too_short_for_steps(base, other) is None
    more = _doc(0, [{"device": 0, "region": [], "steps": [], "sequence": [0] * 4}], "ab")
    assert _too_short_for_steps(base, more) is None
    # another device's launches are not this device's
    moved = _doc(0, [{"device": 1, "region": [], "steps": [], "sequence": [0]}], "ab")
    assert _too_short_for_steps(base, moved) is None
