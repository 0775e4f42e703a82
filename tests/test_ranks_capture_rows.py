"""tracelens ranks on captures that hold fewer of the run's steps or calls (review): a rank
too short to find steps in keeps its row of the step matrix, and a rank whose collective
calls are the run's calls from a later (or to an earlier) point says so instead of a bare
call count that reads as skipped calls."""

from __future__ import annotations

import sqlite3

import polars as pl
import pytest
from fixtures.ranks import (
    FIRST_STEP_NS,
    STEP_PERIOD_NS,
    build_rank_set,
    drop_second_collectives,
)

from tracelens.ranks import analyse_ranks
from tracelens.ranks.render import render_ranks

TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")


def _drop(path, where: str, at_ns: int) -> None:
    con = sqlite3.connect(path)
    for table in TABLES:
        con.execute(f"DELETE FROM {table} WHERE start {where} ?", (at_ns,))
    con.commit()
    con.close()


def _step_start(step: int) -> int:
    """A time just before step ``step``'s first launch (1-based), in any rank's clock."""
    return FIRST_STEP_NS + (step - 1) * STEP_PERIOD_NS - 10_000_000


@pytest.fixture(scope="module")
def stepless(tmp_path_factory):
    # rank 3 holds steps 5-6 of 6: too few to find steps in
    rs = build_rank_set(tmp_path_factory.mktemp("stepless"), ranks=4, steps=6, slow_rank=2)
    _drop(rs.paths[3], "<", _step_start(5))
    return analyse_ranks([rs.dest], jobs=1)


def test_a_rank_without_steps_keeps_its_row_of_the_step_matrix(stepless):
    r = stepless
    assert r.ranks.filter(pl.col("rank") == 3)["steps"].item() == 0
    m = r.step_matrix()
    assert m["rank"].to_list() == [0, 1, 2, 3]
    assert m.filter(pl.col("rank") == 3).drop("rank").row(0) == (None,) * 6
    assert r.step_matrix("active_ns")["rank"].to_list() == [0, 1, 2, 3]


@pytest.mark.parametrize("unit", ["ns", "ms"])
def test_the_matrix_view_lists_every_rank_in_any_unit(stepless, unit):
    text = render_ranks(stepless, fmt="csv", table="matrix", timeunit=unit)
    lines = text.splitlines()
    assert [line.split(",")[0] for line in lines[1:]] == ["0", "1", "2", "3"]
    assert lines[-1] == "3" + "," * 6


def test_a_stepless_rank_calls_its_calls_the_runs_later_ones(stepless):
    detail = stepless.inconsistencies.filter(pl.col("what") == "collectives")["detail"]
    assert detail.to_list() == [
        "4 collective calls where most ranks make 12: it holds calls #9-12 of communicator 0, "
        "each paired with the others', where most ranks hold #1-12 (a capture that started "
        "later, not skipped calls)"
    ]


def test_a_late_capture_is_not_said_to_skip_calls(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, steps=6, slow_rank=2)
    _drop(rs.paths[3], "<", _step_start(3))
    r = analyse_ranks([rs.dest], jobs=1)
    rows = r.inconsistencies.filter(pl.col("rank") == 3).select("what", "detail").rows()
    assert rows[1] == (
        "collectives",
        "8 collective calls where most ranks make 12: it holds calls #5-12 of communicator 0, "
        "each paired with the others', where most ranks hold #1-12 (a capture that started "
        "later, not skipped calls)",
    )
    assert rows[0][0] == "capture"


def test_a_short_capture_and_a_long_one(tmp_path):
    # rank 2 ended after step 4 of 6; in a second run ranks 1 and 2 hold steps 3-4 only,
    # so rank 0's capture is the one that started earlier and ended later
    rs = build_rank_set(tmp_path / "a", ranks=3, steps=6, slow_rank=1)
    _drop(rs.paths[2], ">=", _step_start(5))
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.inconsistencies.filter(pl.col("what") == "collectives")["detail"].to_list() == [
        "8 collective calls where most ranks make 12: it holds calls #1-8 of communicator 0, "
        "each paired with the others', where most ranks hold #1-12 (a capture that ended "
        "earlier, not skipped calls)"
    ]
    rs = build_rank_set(tmp_path / "b", ranks=3, steps=6, slow_rank=1)
    for path in rs.paths[1:]:
        _drop(path, "<", _step_start(3))
        _drop(path, ">=", _step_start(5))
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.inconsistencies.filter(pl.col("what") == "collectives")["detail"].to_list() == [
        "12 collective calls where most ranks make 4: it holds calls #1-12 of communicator 0, "
        "each paired with the others', where most ranks hold #5-8 (a capture that started "
        "earlier and ended later, not extra calls)"
    ]


def test_without_session_starts_the_capture_is_not_placed(tmp_path):
    # no recorded session start: the calls are numbered from each capture's start, so a
    # late capture cannot be told from a short one; the words claim neither end
    rs = build_rank_set(tmp_path, ranks=3, steps=6, slow_rank=1, session_step_ns=0)
    _drop(rs.paths[2], ">=", _step_start(5))
    for path in rs.paths:
        con = sqlite3.connect(path)
        con.execute("DELETE FROM TARGET_INFO_SESSION_START_TIME")
        con.commit()
        con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks["session_start_utc_ns"].null_count() == 3
    assert r.inconsistencies.filter(pl.col("what") == "collectives")["detail"].to_list() == [
        "8 collective calls where most ranks make 12: it holds calls #1-8 of communicator 0, "
        "each paired with the others', where most ranks hold #1-12 (a shorter capture, not "
        "skipped calls)"
    ]


def test_ranks_without_collectives_say_waits_are_not_measured(tmp_path):
    # two ranks that ran no collective: no waits to measure, not "waited 0"
    from tracelens.synth import TraceBuilder

    for rank in range(2):
        b = TraceBuilder("3.25.0")
        b.process(100 + rank, "python train.py")
        for i in range(3):
            cid = b.runtime("cudaLaunchKernel_v7000", start=i * 1000, end=i * 1000 + 10)
            b.kernel("void gemm_kernel<float>(float*)", start=i * 1000 + 20, end=i * 1000 + 500,
                     correlation_id=cid)  # fmt: skip
        b.write(tmp_path / f"rank_{rank}.sqlite")
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.reference_rank is None
    assert r.ranks["waited_ns"].to_list() == [None, None]
    assert r.ranks["caused_ns"].to_list() == [None, None]
    assert r.findings == (
        "no rank ran a collective (no NCCL kernels in the exports): who waited for whom "
        "cannot be measured, and the clocks are not aligned",
    )


def test_a_rank_whose_calls_are_left_out_has_no_wait(tmp_path):
    # rank 3 skipped a whole step of calls: its calls are left out of the waits, so its
    # waited and caused are unknown (null), while the others' are measured
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1)
    drop_second_collectives(rs.paths[3])
    r = analyse_ranks([rs.dest], jobs=1)
    waited = dict(r.ranks.select("rank", "waited_ns").iter_rows())
    assert waited[3] is None and waited[1] == 0 and waited[0] == 4 * rs.slow_ns
    # the 6 calls do not pair: the count alone is said, not a capture
    assert (3, "collectives", "6 collective calls where most ranks make 8") in (
        r.inconsistencies.rows()
    )


def test_one_export_without_a_rank_anywhere_is_rank_0(tmp_path):
    # `tracelens ranks run.sqlite`: no integer in the name, no rank recorded; there is
    # nothing to number it against, and --rank-regex (which the error advised) cannot help
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(100, "python train.py")
    cid = b.runtime("cudaLaunchKernel_v7000", start=0, end=10)
    b.kernel("void gemm_kernel<float>(float*)", start=20, end=500, correlation_id=cid)
    b.write(tmp_path / "run.sqlite")
    r = analyse_ranks([tmp_path / "run.sqlite"], jobs=1)
    assert r.ranks.select("rank", "rank_source").rows() == [(0, "the only export")]
    assert r.findings[0].startswith("one rank cannot have a straggler")
    # two such files are still an error: their ranks are unknown
    b.write(tmp_path / "other.sqlite")
    with pytest.raises(Exception, match="has no rank"):
        analyse_ranks([tmp_path / "run.sqlite", tmp_path / "other.sqlite"], jobs=1)
