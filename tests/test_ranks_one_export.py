"""tracelens ranks on one export of a whole single-node job (`nsys profile torchrun
--nproc-per-node N` writes one report holding every rank's process): each process that ran
kernels is a rank, numbered by its GPU, and the straggler is found as with one export per
rank; one rank alone gets no straggler verdict (review6 B3)."""

from __future__ import annotations

import polars as pl
from fixtures.ranks import build_one_export, build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.render import render_ranks

STRAGGLER = "rank 1 made the others wait 38.00 ms per step in AllReduce (last to arrive in 6 of 6 calls)"  # fmt: skip


def test_each_process_of_one_export_is_a_rank(tmp_path):
    # report1.sqlite: nsys's default name, whose integer is not a rank
    job = build_one_export(tmp_path / "report1.sqlite")
    r = analyse_ranks([job], jobs=1)
    assert r.findings[0] == STRAGGLER
    assert r.ranks.select("rank", "pid", "rank_source").rows() == [
        (0, 40_000, "GPU order"), (1, 40_001, "GPU order"),
    ]  # fmt: skip
    # each rank's own work, not both processes' summed
    assert r.ranks["compute_ns"].to_list() == [270_000_000, 498_000_000]
    assert r.ranks["waited_ns"].to_list() == [6 * 38_000_000, 0]
    assert r.step_stragglers["straggler_rank"].to_list() == [1] * 6
    assert r.step_stragglers["ranks"].to_list() == [2] * 6
    assert r.inconsistencies.is_empty()
    assert render_ranks(r, fmt="table").startswith(
        "ranks: 2 ranks analysed (rank numbers from: GPU order)\n"
    )


def test_one_export_gives_the_verdict_of_one_export_per_rank(tmp_path):
    job = build_one_export(tmp_path / "job_0.sqlite")
    apart = build_rank_set(
        tmp_path / "apart", ranks=2, steps=6, slow_rank=1, skew_ns={0: 0, 1: 0},
        session_step_ns=0,
    )  # fmt: skip
    together, split = analyse_ranks([job], jobs=1), analyse_ranks([apart.dest], jobs=1)
    assert together.findings == split.findings
    same = ["rank", "steps", "compute_ns", "waited_ns", "caused_ns", "clock_correction_ns"]
    assert together.ranks.select(same).equals(split.ranks.select(same))
    assert together.step_stragglers.equals(split.step_stragglers)
    assert together.collectives.equals(split.collectives)


def test_ranks_follow_the_gpus_not_the_pids(tmp_path):
    # the process on GPU 0 has the higher pid: it is still rank 0, and the slow one (on
    # GPU 1) rank 1
    job = build_one_export(tmp_path / "job.sqlite", pids={0: 52_000, 1: 51_000})
    r = analyse_ranks([job], jobs=2)
    assert r.ranks.select("rank", "pid").rows() == [(0, 52_000), (1, 51_000)]
    assert r.findings[0] == STRAGGLER


def test_one_rank_has_no_straggler_verdict(tmp_path):
    rs = build_rank_set(tmp_path, ranks=1, slow_rank=None)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings == (
        "one rank cannot have a straggler: waits in collectives are between ranks (pass "
        "every rank's export, or one export holding every rank's process)",
    )
    assert not any("straggler:" in f or "made the others wait" in f for f in r.findings[1:])
    assert "pid" not in r.ranks.columns  # one rank per export: the path names it
    assert r.ranks.filter(pl.col("rank") == 0).height == 1


def _processes_read(path, monkeypatch) -> tuple[int, list[bool]]:
    """(the ranks analysed, whether each summary read its kernels' processes)."""
    from tracelens.trace import Trace

    asked: list[bool] = []
    query = Trace.query

    def recorded(self, name, **params):
        asked.append(name == "ranks_processes")
        return query(self, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    r = analyse_ranks([path], jobs=1)
    monkeypatch.setattr(Trace, "query", query)
    return r.ranks.height, [a for a in asked if a]


def test_a_context_table_of_one_process_skips_the_processes_read(tmp_path, monkeypatch):
    # the usual one-rank export lists one process's contexts: its kernels' processes are
    # not read (a scan of every kernel); two processes listed, or no table: they are
    one = build_one_export(
        tmp_path / "one_0.sqlite", ranks=1, slow_rank=None, contexts=True, schema="3.24.18"
    )
    assert _processes_read(one, monkeypatch) == (1, [])
    two = build_one_export(tmp_path / "two_0.sqlite", contexts=True, schema="3.24.18")
    assert _processes_read(two, monkeypatch) == (2, [True])
    bare = build_one_export(tmp_path / "bare_0.sqlite", ranks=1, slow_rank=None)
    assert _processes_read(bare, monkeypatch) == (1, [True])


def test_the_context_tables_count_processes(tmp_path):
    from queries.golden import assert_golden

    from tracelens.synth import TraceBuilder

    # two processes with contexts (40000 on GPU 0, 40001 on GPU 1)
    two = build_one_export(tmp_path / "two.sqlite", steps=1, contexts=True, schema="3.24.18")
    assert_golden(two, "ranks_context_processes", "two_processes", export_tables=True)
    # before TARGET_INFO_CUDA_CONTEXT_INFO: one row per context's default stream; process
    # 77 has two contexts, 78 one
    b = TraceBuilder("3.0.0")
    for pid, device, context in ((77, 0, 1), (77, 1, 2), (78, 1, 3)):
        b.add_row("TARGET_INFO_CUDA_NULL_STREAM", streamId=7, hwId=0, vmId=0,
                  processId=pid, deviceId=device, contextId=context)  # fmt: skip
    old = b.write(tmp_path / "old.sqlite")
    assert_golden(old, "ranks_null_stream_processes", "two_processes", export_tables=True)


def test_several_whole_node_exports_are_numbered_node_by_node(tmp_path):
    # node_1's two processes are ranks 2 and 3, after node_0's (by the names' integers,
    # whatever order the files are written or listed in), each node's by GPU
    for node in (1, 0):
        pids = {r: 40_000 + 10 * node + r for r in range(2)}
        build_one_export(tmp_path / f"node_{node}.sqlite", pids=pids, steps=2)
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.ranks.select("rank", "pid", "rank_source").rows() == [
        (0, 40_000, "file, then GPU order"), (1, 40_001, "file, then GPU order"),
        (2, 40_010, "file, then GPU order"), (3, 40_011, "file, then GPU order"),
    ]  # fmt: skip
    assert r.ranks["path"].to_list() == [str(tmp_path / f"node_{n}.sqlite") for n in (0, 0, 1, 1)]
