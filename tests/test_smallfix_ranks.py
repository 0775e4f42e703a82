"""tracelens ranks on exports named by process id whose numbers are near (nsys -o
trace.%p of processes started together: trace.40000, trace.40001, trace.40003): by their
numbers alone they look like ranks (unsure_numbers), so 40002 was called a missing rank.
Each number is the id of a process in its own export: they are process ids, and no number
between them is called missing."""

from __future__ import annotations

import sqlite3

import pytest
from fixtures.ranks import build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.inputs import unsure_numbers

SAID = (
    "rank numbers taken from the last integers of the file names (40000 to 40003) are the "
    "ids of processes in their own exports, as nsys -o report_%p names them, not ranks: no "
    "number between them is called a missing rank; pass --rank-regex to take them as ranks"
)


def _pid_named(dest, *, drop: int = 2, names=None):
    """Ranks 0-3 (processes 40000 + rank) but rank ``drop``, each file named by its
    process id (or by ``names[rank]``)."""
    rs = build_rank_set(dest, ranks=4, steps=2, slow_rank=None)
    for rank, path in enumerate(rs.paths):
        if rank == drop:
            path.unlink()
        else:
            path.rename(rs.dest / f"trace.{(names or {}).get(rank, 40_000 + rank)}.sqlite")
    return rs.dest


@pytest.fixture(scope="module")
def pid_named(tmp_path_factory):
    return _pid_named(tmp_path_factory.mktemp("pids"))


def test_near_process_ids_leave_no_missing_rank_and_say_so(pid_named):
    assert unsure_numbers([40_000, 40_001, 40_003]) is None  # by the numbers: ranks
    r = analyse_ranks([pid_named], jobs=1)
    assert r.ranks["rank"].to_list() == [40_000, 40_001, 40_003]
    assert r.missing_ranks == ()
    assert not any(f.startswith("missing ranks") for f in r.findings)
    assert r.findings[-1] == SAID


def test_rank_regex_still_takes_them_as_ranks(pid_named):
    r = analyse_ranks([pid_named], jobs=1, rank_regex=r"trace\.(\d+)")
    assert r.missing_ranks == (40_002,)
    assert SAID not in r.findings


def test_rank_numbers_that_are_no_process_ids_keep_their_missing_rank(tmp_path):
    # ranks 0, 1, 3 named by rank: rank 2 is missing, as before
    dest = _pid_named(tmp_path / "ranks", names={0: 0, 1: 1, 3: 3})
    r = analyse_ranks([dest], jobs=1)
    assert r.missing_ranks == (2,)
    assert not any("ids of processes" in f for f in r.findings)


def test_one_name_that_is_no_process_id_keeps_the_numbers_as_ranks(tmp_path):
    # 40000 and 40001 are their exports' processes, 40004 is not rank 3's (40003)
    dest = _pid_named(tmp_path / "mixed", names={3: 40_004})
    r = analyse_ranks([dest], jobs=1)
    assert r.missing_ranks == (40_002, 40_003)
    assert not any("ids of processes" in f for f in r.findings)


def test_the_context_table_gives_the_processes(tmp_path):
    # real exports list their processes with a CUDA context (TARGET_INFO_CUDA_CONTEXT_INFO),
    # which is read instead of the kernels: here a process 50000 + rank with a context of
    # its own (one that named the file: a launcher that touched CUDA) beside the rank's
    names = {rank: 50_000 + rank for rank in range(4)}
    dest = _pid_named(tmp_path / "ctx", names=names)
    for path in sorted(dest.glob("*.sqlite")):
        named = int(path.stem.split(".")[1])
        con = sqlite3.connect(path)
        con.execute(
            "CREATE TABLE IF NOT EXISTS TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId INTEGER, "
            "hwId INTEGER, vmId INTEGER, processId INTEGER, deviceId INTEGER, contextId INTEGER)"
        )
        rows = [(7, 0, 0, named - 10_000, 0, 1), (7, 0, 0, named, 0, 2)]
        con.executemany("INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (?, ?, ?, ?, ?, ?)", rows)
        con.commit()
        con.close()
    r = analyse_ranks([dest], jobs=1)
    assert r.missing_ranks == ()
    assert r.findings[-1] == SAID.replace("40000 to 40003", "50000 to 50003")


def test_pid_numbers():
    from tracelens.ranks.inputs import pid_numbers

    assert pid_numbers([(5, (5,)), (9, (9, 11))]) is not None
    assert pid_numbers([(5, (5,)), (9, ())]) is None  # the second's processes unknown
    assert pid_numbers([(5, (5,))]) is None  # one number: no gap to speak of
    assert pid_numbers([]) is None


def test_the_context_tables_list_the_processes(tmp_path):
    from fixtures.ranks import build_one_export
    from queries.golden import assert_golden

    from tracelens.synth import TraceBuilder

    # two processes with contexts (40000 on GPU 0, 40001 on GPU 1)
    two = build_one_export(tmp_path / "two.sqlite", steps=1, contexts=True, schema="3.24.18")
    assert_golden(two, "ranks_context_pids", "two_processes", export_tables=True)
    # before TARGET_INFO_CUDA_CONTEXT_INFO: one row per context's default stream; process
    # 77 has two contexts, 78 one
    b = TraceBuilder("3.0.0")
    for pid, device, context in ((78, 1, 3), (77, 0, 1), (77, 1, 2)):
        b.add_row("TARGET_INFO_CUDA_NULL_STREAM", streamId=7, hwId=0, vmId=0,
                  processId=pid, deviceId=device, contextId=context)  # fmt: skip
    old = b.write(tmp_path / "old.sqlite")
    assert_golden(old, "ranks_null_stream_pids", "two_processes", export_tables=True)
