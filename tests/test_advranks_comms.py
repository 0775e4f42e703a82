"""tracelens ranks when the ranks' communicators are numbered in another order: the
AllGathers on one NCCL stream, the AllReduces on another, and one rank's capture started
after step 1's AllGather, so its first collective is on the AllReduce stream. Numbered by
first use, its communicator 0 was the others' 1: every call of it was named "another
collective than the others'", its clock was left uncorrected (0, nothing matched) and its
waits unmeasured (adversarial review, advranks)."""

from __future__ import annotations

import sqlite3

import polars as pl
import pytest
from fixtures.ranks import FIRST_STEP_NS, build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.comms import match_communicators

GATHER_STREAM = 14


@pytest.fixture(scope="module")
def late_mid_step(tmp_path_factory):
    rs = build_rank_set(tmp_path_factory.mktemp("comms"), ranks=4, steps=6, slow_rank=1)
    for path in rs.paths:
        con = sqlite3.connect(path)
        con.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = ? WHERE demangledName IN "
            "(SELECT id FROM StringIds WHERE value LIKE 'ncclDevKernel_AllGather%')",
            (GATHER_STREAM,),
        )
        con.commit()
        con.close()
    # rank 3's capture starts 10 ms into step 1: after its AllGather, before its GEMMs
    con = sqlite3.connect(rs.paths[3])
    cut = FIRST_STEP_NS + 10_000_000
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        con.execute(f"DELETE FROM {table} WHERE start < ?", (cut - 1_000_000,))
    con.commit()
    con.close()
    return rs, analyse_ranks([rs.dest], jobs=1)


def test_a_capture_started_mid_step_pairs_each_communicator_with_its_own(late_mid_step):
    rs, r = late_mid_step
    assert r.inconsistencies.filter(pl.col("what") == "collectives").rows() == [
        (
            3,
            "collectives",
            "11 collective calls where most ranks make 12: it holds calls #2-6 of "
            "communicator 0, each paired with the others', where most ranks hold #1-6 (a "
            "capture that started later, not skipped calls)",
        )
    ]
    assert r.clock.filter(pl.col("rank") == 3).row(0) == (3, 3_000_000, rs.correction_ns(3), 11, 0)


def test_a_capture_started_mid_step_has_its_waits(late_mid_step):
    rs, r = late_mid_step
    assert r.findings[0] == (
        "rank 1 made the others wait 38.00 ms per step in AllReduce (last to arrive in 6 of "
        "6 calls)"
    )
    waits = dict(r.ranks.select("rank", "waited_ns").iter_rows())
    assert waits == {0: 6 * rs.slow_ns, 1: 0, 2: 6 * rs.slow_ns, 3: 6 * rs.slow_ns}
    assert r.findings[2] == (
        "rank 3's capture started later than rank 0's: its first collective is rank 0's "
        "call #2 (communicator 0), paired from there; its 5 steps are the run's steps 2-6"
    )


def _calls(rank: int, comms: list[tuple[int, str]]) -> list[tuple]:
    return [(rank, comm, 1, kind, 0, 1) for comm, kind in comms]


def test_communicators_take_the_numbers_of_the_ones_running_their_collectives():
    schema = {
        "rank": pl.Int64, "comm": pl.Int16, "seq": pl.Int32, "kind": pl.Categorical,
        "start_ns": pl.Int64, "end_ns": pl.Int64,
    }  # fmt: skip
    rows = (
        _calls(0, [(0, "AllGather"), (1, "AllReduce"), (2, "AllReduce")])
        # the two AllReduce communicators keep their order among themselves
        + _calls(1, [(0, "AllReduce"), (1, "AllGather"), (2, "AllReduce")])
        # a communicator that runs what none of the reference's does: numbers kept
        + _calls(2, [(0, "Broadcast"), (1, "AllGather")])
    )
    colls = pl.DataFrame(rows, schema=schema, orient="row")
    out = match_communicators(colls, 0)
    assert out.schema == colls.schema
    assert out.select("rank", "comm", pl.col("kind").cast(pl.String)).rows() == [
        (0, 0, "AllGather"), (0, 1, "AllReduce"), (0, 2, "AllReduce"),
        (1, 1, "AllReduce"), (1, 0, "AllGather"), (1, 2, "AllReduce"),
        (2, 0, "Broadcast"), (2, 1, "AllGather"),
    ]  # fmt: skip
