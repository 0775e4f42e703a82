"""tracelens ranks on runs with no straggler, and with one slow only in the second half of
the steps: the stragglers per step named rank 0 the "slowest active rank" of every step in
which all ranks were equally active (the lowest of equals; adversarial review, advranks)."""

from __future__ import annotations

import polars as pl
from fixtures.ranks import _one_step, build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.synth import DEFAULT_SESSION_START_UTC_NS, TraceBuilder

ACTIVE_NS = 52_000_000  # a step's active time on a rank that is not slow (fixtures/ranks.py)


def test_equal_ranks_have_no_slowest_rank(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, steps=3, slow_rank=None)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings[0] == "no straggler: every collective started within 10.00 µs on all ranks"
    s = r.step_stragglers
    assert (
        s.select("straggler_rank", "slowest_active_rank", "slowest_active_ns").rows()
        == [(None, None, ACTIVE_NS)] * 3
    )


def test_a_straggler_in_the_second_half_only(tmp_path):
    slow, slow_ns = 3, 38_000_000
    for rank in range(4):
        b = TraceBuilder("3.25.0", session_start_utc_ns=DEFAULT_SESSION_START_UTC_NS)
        b.process(40_000 + rank, "python train.py")
        b.gpu(rank, "NVIDIA H100 80GB HBM3", bus_location=f"0000:{0x18 + rank:02x}:00.0")
        for step in range(8):
            late = step >= 4
            _one_step(
                b, 40_000 + rank, rank, step, 0, slow if late else None, slow_ns if late else 0,
                None,
            )  # fmt: skip
        b.write(tmp_path / f"rank_{rank}.sqlite")
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.findings[0] == (
        "rank 3 made the others wait 19.00 ms per step in AllReduce (last to arrive in 4 of 8 "
        "calls)"
    )
    s = r.step_stragglers.select("step", "straggler_rank", "caused_ns", "slowest_active_rank")
    assert s.rows() == [(k, None, 0, None) for k in range(1, 5)] + [
        (k, slow, slow_ns, slow) for k in range(5, 9)
    ]
    waited = r.steps.filter(pl.col("rank") == 0).sort("step")["wait_ns"].to_list()
    assert waited == [0] * 4 + [slow_ns] * 4


def test_on_time_collectives_name_no_first_rank(tmp_path):
    # the AllGathers start together on every rank: rank 0 was named first of each
    rs = build_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1)
    r = analyse_ranks([rs.dest], jobs=1)
    c = r.collectives.select("kind", "first_rank", "late_rank", "spread_ns")
    assert c.rows() == [
        ("AllGather", None, None, 0), ("AllReduce", 0, 1, rs.slow_ns),
        ("AllGather", None, None, 0), ("AllReduce", 0, 1, rs.slow_ns),
    ]  # fmt: skip


def test_a_straggler_whose_capture_ended_early_is_late_per_step_it_was_seen(tmp_path):
    # rank 3 (the straggler) holds 2 of the 6 steps: its 76 ms were divided by the run's 6
    # steps ("12.67 ms per step"), as if it had been on time in the 4 steps not captured
    import sqlite3

    from fixtures.ranks import FIRST_STEP_NS, STEP_PERIOD_NS

    rs = build_rank_set(tmp_path, ranks=4, steps=6, slow_rank=3)
    con = sqlite3.connect(rs.paths[3])
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        con.execute(
            f"DELETE FROM {table} WHERE start >= ?", (FIRST_STEP_NS + 2 * STEP_PERIOD_NS - 10**7,)
        )
    con.commit()
    con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings[0] == (
        "rank 3 made the others wait 38.00 ms per step in AllReduce (last to arrive in 2 of 2 "
        "calls)"
    )
    late = r.waits.filter(pl.col("caused_ns") > 0)
    assert late.select("rank", "calls", "caused_ns", "caused_per_step_ns").rows() == [
        (3, 2, 2 * rs.slow_ns, rs.slow_ns)
    ]
