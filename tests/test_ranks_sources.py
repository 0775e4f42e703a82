"""Where `tracelens ranks` gets each rank's number (the export's MPI_RANKS, NCCL's
ncclCommInitRank payloads, the recorded launch environment, else the file name) and the
DuckDB limits each worker runs with, on rank sets built by code (tests/fixtures/ranks.py)."""

from __future__ import annotations

import os

import pytest
from conftest import run_cli
from fixtures.ranks import build_rank_set

import tracelens
from tracelens._resources import query
from tracelens.errors import UsageError
from tracelens.ranks import analyse_ranks
from tracelens.ranks.engine import map_traces, parse_size, worker_limits
from tracelens.ranks.recorded import nccl_world_ranks, recorded_rank

# File names whose last integer is 3 for every rank: only the export can tell them apart.
STEM = "w{rank}-of-3"


@pytest.fixture(scope="module")
def nccl_set(tmp_path_factory):
    return build_rank_set(
        tmp_path_factory.mktemp("nccl"), ranks=3, steps=2, slow_rank=2, nccl_ranks=True,
        stem=STEM,
    )  # fmt: skip


def test_the_queries_read_the_payload_schema_and_the_ranges(nccl_set):
    with tracelens.open(nccl_set.paths[1]) as trace:
        fields = trace._sqlite_rows(query("ranks_nccl_rank_fields"))
        blobs = trace._sqlite_rows(query("ranks_nccl_comm_inits"))
    # (text comes back as bytes: Trace._sqlite_rows reads StringIds-like text undecoded)
    assert fields == [(1, 0x100, b"No. of ranks", 5, 8), (1, 0x100, b"Rank", 5, 12)]
    # the pair communicator first, then the world: 32-byte header + 24-byte struct each
    assert [len(b) for (b,) in blobs] == [56, 56]


def test_rank_from_the_nccl_world_communicator(nccl_set):
    # rank 1 is rank 1 of the pair {0, 1} and rank 1 of the world; rank 2 is rank 0 of its
    # pair {2, 3}: the largest communicator decides
    with tracelens.open(nccl_set.paths[2]) as trace:
        assert nccl_world_ranks(trace) == {2}
        assert recorded_rank(trace) == (2, "NCCL ncclCommInitRank")
    r = analyse_ranks([nccl_set.dest], jobs=1)
    assert r.ranks.select("rank", "rank_source").rows() == [
        (0, "NCCL ncclCommInitRank"), (1, "NCCL ncclCommInitRank"), (2, "NCCL ncclCommInitRank")
    ]  # fmt: skip
    assert r.findings[0].startswith("rank 2 made the others wait")


def test_cli_says_where_the_rank_numbers_came_from(nccl_set, capsys):
    code, out, err = run_cli(["ranks", str(nccl_set.dest), "-j", "1"], capsys)
    assert code == 0, err
    assert out.startswith("ranks: 3 ranks analysed (rank numbers from: NCCL ncclCommInitRank)\n")
    code, out, _ = run_cli(["ranks", str(nccl_set.dest), "-j", "1", "-f", "csv"], capsys)
    header = out.splitlines()[0].split(",")
    assert header[:3] == ["rank", "path", "rank_source"]


def test_rank_from_the_recorded_environment(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, steps=2, slow_rank=1, env_ranks=True, stem=STEM)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks.select("rank", "rank_source").rows() == [
        (0, "environment RANK"), (1, "environment RANK")
    ]  # fmt: skip


def test_mpi_wins_over_nccl_and_a_file_with_two_ranks_names_none(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, steps=2, nccl_ranks=True, mpi_ranks=True, stem=STEM)
    r = analyse_ranks([rs.dest], jobs=1)
    assert set(r.ranks["rank_source"]) == {"MPI_RANKS"}
    # a file holding two processes' MPI ranks is not one rank's: NCCL decides
    import sqlite3

    con = sqlite3.connect(rs.paths[0])
    con.execute("INSERT INTO MPI_RANKS VALUES (7, 1)")
    con.commit()
    con.close()
    with tracelens.open(rs.paths[0]) as trace:
        assert recorded_rank(trace) == (0, "NCCL ncclCommInitRank")


def test_mixed_sources_are_counted(tmp_path):
    build_rank_set(tmp_path / "a", ranks=2, steps=2, nccl_ranks=True)
    plain = build_rank_set(tmp_path / "b", ranks=3, steps=2)
    r = analyse_ranks([tmp_path / "a", plain.paths[2]], jobs=1)
    assert r.rank_sources() == [("NCCL ncclCommInitRank", 2), ("file name", 1)]
    from tracelens.ranks.render import render_ranks

    assert "(rank numbers from: NCCL ncclCommInitRank (2), file name (1))" in render_ranks(
        r, fmt="table"
    )


# -- each worker's DuckDB limits -----------------------------------------------------------
def test_worker_limits_defaults_and_errors():
    cores = os.cpu_count() or 1
    assert worker_limits("local", 1) == worker_limits("local", 1, None, None)
    assert worker_limits("local", 1).threads is None  # one job: DuckDB's own
    pooled = worker_limits("local", 2)
    assert pooled.threads == max(cores // 2, 1) and pooled.memory_limit > 0
    assert worker_limits("ray", 1).threads == 1 and worker_limits("ray", 1).memory_limit is None
    assert worker_limits("local", 2, 3, "1GB").threads == 3
    assert parse_size("512MiB") == 512 * 2**20 and parse_size("2e9") == 2_000_000_000
    assert parse_size("4 GB") == 4 * 10**9 and parse_size(1 << 30) == 1 << 30
    for bad in ("lots", "4XB", "1KB"):
        with pytest.raises(UsageError, match="^worker_memory "):
            parse_size(bad)
    with pytest.raises(UsageError, match="^worker_threads must be at least 1"):
        worker_limits("local", 2, 0)


def test_the_limits_reach_each_workers_connection(nccl_set):
    # two pool workers: each summary says what its DuckDB connection ran with
    pooled = map_traces(nccl_set.paths[:2], jobs=2, threads=1, memory="256MiB")
    assert [s.duckdb_settings for s in pooled] == [{"threads": 1, "memory_limit": "256.0 MiB"}] * 2
    # the defaults of a pool of two on this machine
    default = map_traces(nccl_set.paths[:2], jobs=2)
    assert {s.duckdb_settings["threads"] for s in default} == {max((os.cpu_count() or 1) // 2, 1)}
    # in this process: DuckDB's own unless given
    (serial,) = map_traces(nccl_set.paths[:1], jobs=1, threads=1)
    assert serial.duckdb_settings["threads"] == 1


def test_the_limits_reach_the_connection_that_builds_the_cache(nccl_set, monkeypatch):
    """A rank opened for the first time builds its columnar cache (TRACELENS_CACHE_MIN_MB=0
    caches even these small traces) on a connection of its own making: the worker's caps
    must hold there too, not only on the connection handed back afterwards."""
    from tracelens import cache

    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    seen = []
    real_copy = cache._copy

    def copy_and_record(con, table, dest):
        seen.append(
            con.execute(
                "SELECT current_setting('threads'), current_setting('memory_limit')"
            ).fetchone()
        )
        return real_copy(con, table, dest)

    monkeypatch.setattr(cache, "_copy", copy_and_record)
    (summary,) = map_traces(nccl_set.paths[:1], jobs=1, threads=1, memory="200MiB")
    assert summary.duckdb_settings == {"threads": 1, "memory_limit": "200.0 MiB"}
    assert seen and set(seen) == {(1, "200.0 MiB")}  # every table of the build
    assert cache.lookup(cache.default_root(), cache.identity(nccl_set.paths[0])) is not None


def test_limits_hold_inside_the_block_only():
    from tracelens import _engine

    def caps(con):
        return con.execute(
            "SELECT current_setting('threads'), current_setting('memory_limit')"
        ).fetchone()

    outside = _engine.connect()
    with _engine.limits(threads=1, memory_limit=300 * 2**20):
        inside = _engine.connect()
        with _engine.limits(memory_limit=100 * 2**20):
            nested = _engine.connect()
    after = _engine.connect()
    assert caps(inside) == (1, "300.0 MiB")
    assert caps(nested)[1] == "100.0 MiB"  # an inner block replaces the outer caps
    assert caps(outside) == caps(after) != caps(inside)
    for con in (outside, inside, nested, after):
        con.close()


def test_cli_takes_the_worker_limits(nccl_set, capsys):
    args = ["ranks", str(nccl_set.dest), "-j", "1", "--worker-threads", "1"]
    code, out, err = run_cli([*args, "--worker-memory", "300MB", "-f", "csv"], capsys)
    assert code == 0, err
    code, _, err = run_cli([*args, "--worker-memory", "plenty"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--worker-memory 'plenty' is not a size" in err


def test_a_killed_pool_worker_fails_only_its_trace(tmp_path):
    """A worker process killed mid-run (the kernel's OOM killer, a signal) breaks the pool
    but not the run: the traces in flight run again, one worker at a time, and a death
    there fails exactly the trace that worker held, with the reason; the others are kept."""
    import multiprocessing
    import signal

    from tracelens.ranks.summary import RankFailure, RankSummary

    rs = build_rank_set(tmp_path, ranks=8, steps=1)
    seen = []

    def kill_the_workers(done, total, path):
        seen.append(done)
        if done in (1, 4):  # 1: in the pool of two; 4: in the pool of one
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)

    results = map_traces([str(p) for p in rs.paths], jobs=2, progress=kill_the_workers)
    assert seen == list(range(1, 9))
    died = [r for r in results if isinstance(r, RankFailure)]
    assert len(died) == 1
    assert died[0].reason.startswith("not analysed: its worker process died (BrokenProcessPool")
    assert sum(isinstance(r, RankSummary) for r in results) == 7
