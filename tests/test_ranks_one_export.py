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


HELPER_ASIDE = (
    "set aside 1 process that ran kernels but is not a rank: pid 40100 in {name} (5 kernels "
    "on GPU 0: no collective, while 2 other processes ran collectives)"
)


def test_a_helper_process_is_set_aside(tmp_path):
    # 2 training ranks with NCCL kernels and a data-loader worker that ran 5 small kernels
    # on GPU 0: 2 ranks (not 3, the worker rank 1 and the GPU 1 rank renumbered rank 2),
    # the worker named with why
    job = build_one_export(tmp_path / "report1.sqlite", helper_kernels=5)
    r = analyse_ranks([job], jobs=1)
    assert r.ranks.select("rank", "pid", "rank_source").rows() == [
        (0, 40_000, "GPU order"), (1, 40_001, "GPU order"),
    ]  # fmt: skip
    assert r.findings[0] == STRAGGLER
    assert r.findings[-1] == HELPER_ASIDE.format(name="report1.sqlite")
    assert [(a.pid, a.kernels, a.device) for a in r.set_aside] == [(40_100, 5, 0)]
    assert r.inconsistencies.is_empty()
    assert r.ranks["compute_ns"].to_list() == [270_000_000, 498_000_000]
    assert render_ranks(r, fmt="table").startswith(
        "ranks: 2 ranks analysed (rank numbers from: GPU order)\n"
    )


def test_a_helper_listed_in_the_context_table_is_set_aside(tmp_path):
    job = build_one_export(
        tmp_path / "job.sqlite", helper_kernels=5, contexts=True, schema="3.24.18"
    )
    r = analyse_ranks([job], jobs=1)
    assert r.ranks["pid"].to_list() == [40_000, 40_001]
    assert r.findings[-1] == HELPER_ASIDE.format(name="job.sqlite")


def test_one_ranks_exports_with_a_helper_keep_their_ranks(tmp_path):
    # one export per rank, each with its worker: each is one rank, numbered by its file
    # name as an export of one rank (not 'file, then GPU order'), each worker set aside
    for rank in range(2):
        build_one_export(
            tmp_path / f"rank_{rank}.sqlite", ranks=1, slow_rank=None, helper_kernels=5
        )
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.ranks.select("rank", "pid", "rank_source").rows() == [
        (0, 40_000, "file name"), (1, 40_000, "file name"),
    ]  # fmt: skip
    assert r.findings[-1] == (
        "set aside 2 processes that ran kernels but are not ranks: pid 40100 in "
        "rank_0.sqlite (5 kernels on GPU 0: no collective, while 1 other process ran "
        "collectives); pid 40100 in rank_1.sqlite (5 kernels on GPU 0: no collective, while "
        "1 other process ran collectives)"
    )
    # each rank's own work: the worker's 5 kernels are not in it
    assert r.ranks["kernels"].to_list() == [30, 30]


def test_without_collectives_a_process_with_a_sliver_of_the_work_is_set_aside():
    # no process ran collectives: the ranks are the processes with at least 1% of the
    # busiest one's kernel time (data/ranks.toml)
    from tracelens.ranks.processes import split_ranks

    processes = pl.DataFrame(
        {
            "pid": [10, 11, 12, 13],
            "first_device": [0, 0, 1, 2],
            "kernels": [900, 4, 850, 40],
            "kernel_ns": [2_000_000_000, 150_000, 1_800_000_000, 30_000_000],
            "collectives": [0, 0, 0, 0],
        }
    )
    ranks, aside = split_ranks("job.sqlite", processes)
    assert ranks["pid"].to_list() == [10, 12, 13]
    assert [(a.pid, a.kernels, a.device, a.reason) for a in aside] == [
        (11, 4, 0, "<0.01% of the busiest process's kernel time, under 1%, and no process "
         "ran collectives"),
    ]  # fmt: skip
    # with collectives, they decide, whatever the share
    talk = processes.with_columns(collectives=pl.Series([5, 0, 5, 0]))
    ranks, aside = split_ranks("job.sqlite", talk)
    assert ranks["pid"].to_list() == [10, 12]
    assert [a.pid for a in aside] == [11, 13]


def test_the_json_lists_the_processes_set_aside(tmp_path):
    # the machine-readable output names the helper (not only the finding's line): its
    # export, pid, kernels, GPU and why; a plain 2-rank job sets nothing aside
    import json

    job = build_one_export(tmp_path / "report1.sqlite", helper_kernels=5)
    doc = json.loads(render_ranks(analyse_ranks([job], jobs=1), fmt="json"))
    assert doc["set_aside"] == [
        {
            "path": str(job),
            "pid": 40_100,
            "kernels": 5,
            "device": 0,
            "reason": "no collective, while 2 other processes ran collectives",
        }
    ]
    plain = build_one_export(tmp_path / "plain.sqlite")
    r = analyse_ranks([plain], jobs=1)
    assert json.loads(render_ranks(r, fmt="json"))["set_aside"] == []
    shown = render_ranks(r, fmt="csv", table="set_aside")
    assert shown == "path,pid,kernels,device,reason\n"


def test_the_set_aside_view_lists_each_export_s_helpers(tmp_path):
    # one export per rank with a worker each: one row per export, by path
    for rank in (1, 0):
        build_one_export(
            tmp_path / f"rank_{rank}.sqlite", ranks=1, slow_rank=None, helper_kernels=5
        )
    r = analyse_ranks([tmp_path], jobs=1)
    shown = render_ranks(r, fmt="csv", table="set_aside")
    why = "no collective, while 1 other process ran collectives"
    assert shown.splitlines() == [
        "path,pid,kernels,device,reason",
        *(f'{tmp_path / f"rank_{n}.sqlite"},40100,5,0,"{why}"' for n in (0, 1)),
    ]


def test_the_set_aside_view_is_a_command_line_view(tmp_path, capsys):
    # `--view set_aside` is one of the command's views (it exited 2, "unknown --view")
    from conftest import run_cli

    job = build_one_export(tmp_path / "report1.sqlite", helper_kernels=5)
    rc, out, _ = run_cli(["ranks", str(job), "--view", "set_aside", "-f", "csv"], capsys)
    assert rc == 0
    assert out.splitlines()[0] == "path,pid,kernels,device,reason"
    assert out.splitlines()[1].startswith(f"{job},40100,5,0,")
