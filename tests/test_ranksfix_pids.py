"""tracelens ranks on exports named by process id (nsys -o trace.%p: trace.12345.sqlite,
trace.12391.sqlite): the 45 numbers between them were called missing ranks. A rank number
is a recorded rank or a file name's number among ranks' (counted from 0, or a set of them
that leaves few numbers unused); other numbers are not called missing ranks, and the
output says what was taken as the rank (ranksfix 3)."""

from __future__ import annotations

import pytest
from fixtures.ranks import build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.render import render_ranks

SAID = (
    "rank numbers taken from the last integers of the file names (12345 to 12391): they do "
    "not count from 0 and leave 45 of the 47 numbers from the lowest to the highest unused, "
    "as process ids or time stamps would (nsys -o report_%p), so those 45 are not called "
    "missing ranks; pass --rank-regex to take them as ranks"
)


@pytest.fixture(scope="module")
def pid_named(tmp_path_factory):
    rs = build_rank_set(tmp_path_factory.mktemp("pids"), ranks=2, steps=2, slow_rank=None)
    for path, pid in zip(rs.paths, (12345, 12391), strict=True):
        path.rename(rs.dest / f"trace.{pid}.sqlite")
    return rs.dest


def test_process_ids_leave_no_missing_ranks_and_say_so(pid_named):
    r = analyse_ranks([pid_named], jobs=1)
    assert r.ranks["rank"].to_list() == [12345, 12391]
    assert r.missing_ranks == ()
    assert not any(f.startswith("missing ranks") for f in r.findings)
    assert r.findings[-1] == SAID
    assert render_ranks(r, fmt="table").startswith(
        "ranks: 2 ranks analysed (rank numbers from: file name)\n"
    )


def test_a_failed_pid_named_file_is_no_missing_rank_either(pid_named):
    bad = pid_named / "trace.12360.sqlite"
    bad.write_bytes(b"")
    try:
        r = analyse_ranks([pid_named], jobs=1)
    finally:
        bad.unlink()
    assert r.failures["rank"].to_list() == [12360]
    assert r.missing_ranks == ()
    assert r.findings[-1] == SAID.replace("45 of the 47", "44 of the 47").replace(
        "those 45", "those 44"
    )


def test_rank_regex_takes_them_as_ranks(pid_named):
    r = analyse_ranks([pid_named], jobs=1, rank_regex=r"trace\.(\d+)")
    assert r.missing_ranks == tuple(range(12346, 12391))
    assert SAID not in r.findings


def test_numbers_like_ranks_keep_their_missing_ranks():
    from tracelens.ranks.inputs import unsure_numbers

    assert unsure_numbers([0, 7]) is None  # counted from 0: ranks 1-6 are missing
    assert unsure_numbers([8, 9, 11, 12]) is None  # a node's ranks 8-15, one missing
    assert unsure_numbers([8, 15]) is not None
    assert unsure_numbers([]) is None
