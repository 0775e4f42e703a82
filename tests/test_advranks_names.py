"""tracelens ranks on file names numbered otherwise than by rank (nsys -o report_%p: the
process ids): the ranks between two numbers are hundreds of thousands, which the headline
and the finding listed one by one (a 70 MB headline for pids 12345 and 4012345), and on
inputs that name one file twice (adversarial review, advranks)."""

from __future__ import annotations

import pytest
from fixtures.ranks import build_rank_set

from tracelens.errors import UsageError
from tracelens.ranks import analyse_ranks
from tracelens.ranks.findings import rank_list
from tracelens.ranks.render import render_ranks


def test_many_missing_ranks_are_said_as_ranges(tmp_path):
    rs = build_rank_set(tmp_path, ranks=3, steps=2, slow_rank=None, stem="r{rank}")
    for path, pid in zip(rs.paths, (12345, 12377, 212345), strict=True):
        path.rename(tmp_path / f"report_{pid}.sqlite")
    # taken as ranks by --rank-regex (the last integers alone look like pids: ranksfix)
    r = analyse_ranks([tmp_path], jobs=1, rank_regex=r"report_(\d+)")
    assert len(r.missing_ranks) == 199_998
    assert r.findings[-1] == (
        "missing ranks: 12346-12376, 12378-212344: 199,998 ranks (not analysed)"
    )
    text = render_ranks(r, fmt="table")
    assert text.startswith(
        "ranks: 3 ranks analysed (rank numbers from: --rank-regex); missing: 12346-12376, "
        "12378-212344: 199,998 ranks\n"
    )
    assert len(text) < 10_000


def test_numbers_further_apart_than_any_runs_ranks_leave_none_missing(tmp_path):
    # millisecond stamps a day apart: 86.4M numbers between them, which were listed (a
    # tuple of ints, then a headline) for minutes; process ids up to 4,194,304 likewise
    rs = build_rank_set(tmp_path, ranks=2, steps=2, slow_rank=None, stem="r{rank}")
    for path, stamp in zip(rs.paths, (1733500000000, 1733586400000), strict=True):
        path.rename(tmp_path / f"prof_{stamp}.sqlite")
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.ranks["rank"].to_list() == [1733500000000, 1733586400000]
    assert r.missing_ranks == ()
    assert not any(f.startswith("missing ranks") for f in r.findings)
    assert render_ranks(r, fmt="table").startswith(
        "ranks: 2 ranks analysed (rank numbers from: file name)\n"
    )


def test_the_widest_span_of_rank_numbers_leaves_none_missing():
    import polars as pl

    from tracelens.ranks.reduce import _missing_ranks

    assert _missing_ranks(pl.DataFrame({"rank": [0, 2**63 - 1]}), []) == ()
    assert _missing_ranks(pl.DataFrame({"rank": [0, 2**20]}), []) == ()
    assert len(_missing_ranks(pl.DataFrame({"rank": [0, 2**20 - 1]}), [])) == 2**20 - 2


def test_a_number_too_large_for_a_rank_is_a_usage_error_not_a_traceback(tmp_path):
    # 20 digits overflowed the rank column: polars' InvalidOperationError (i128 to i64)
    rs = build_rank_set(tmp_path, ranks=2, steps=2, slow_rank=None, stem="r{rank}")
    rs.paths[0].rename(tmp_path / "run_99999999999999999999.sqlite")
    with pytest.raises(UsageError) as err:
        analyse_ranks([tmp_path], jobs=1)
    assert err.value.naming("--rank-regex") == (
        f"{tmp_path / 'run_99999999999999999999.sqlite'}: the number 99999999999999999999 "
        "its name gives is too large for a rank; pass --rank-regex to say where the rank is "
        "in the file names"
    )


def test_a_few_missing_ranks_are_listed_one_by_one():
    assert rank_list((4, 5, 6)) == "4, 5, 6"
    assert rank_list(tuple(range(1, 21))) == ", ".join(map(str, range(1, 21)))
    assert rank_list((*range(1, 21), 40)) == "1-20, 40: 21 ranks"


def test_one_file_named_twice_is_one_rank(tmp_path, monkeypatch):
    rs = build_rank_set(tmp_path / "runs", ranks=2, steps=2, slow_rank=None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "rank_3.sqlite").symlink_to(rs.paths[0])
    # the directory, its file by an absolute name, and a link to that file
    r = analyse_ranks(["runs", rs.paths[0].resolve()], jobs=1)
    assert r.ranks.select("rank", "path").rows() == [
        (0, "runs/rank_0.sqlite"), (1, "runs/rank_1.sqlite")
    ]  # fmt: skip


def test_a_name_the_rank_regex_does_not_match_keeps_what_the_export_records(tmp_path):
    # the failure said the export records no rank (MPI_RANKS, ...) while it recorded one,
    # and advised --rank-regex, which was given
    rs = build_rank_set(tmp_path, ranks=3, steps=2, mpi_ranks=True, stem="node{rank}")
    rs.paths[2].rename(tmp_path / "other_2.sqlite")
    (tmp_path / "stray.sqlite").write_bytes(rs.paths[0].read_bytes())
    plain = build_rank_set(tmp_path / "plain", ranks=1, steps=2, slow_rank=None)
    plain.paths[0].rename(tmp_path / "plain.sqlite")
    r = analyse_ranks([tmp_path], jobs=1, rank_regex=r"node(\d+)")
    assert r.ranks["rank"].to_list() == [0, 1]
    assert r.failures.select("path", "reason").rows() == [
        (
            str(tmp_path / "other_2.sqlite"),
            "has no rank: its file name does not match --rank-regex 'node(\\d+)' (the export "
            "records rank 2, from MPI_RANKS, which --rank-regex overrides: without it the "
            "exports' records give the ranks)",
        ),
        (
            str(tmp_path / "plain.sqlite"),
            "has no rank: its file name does not match --rank-regex 'node(\\d+)'",
        ),
        (
            str(tmp_path / "stray.sqlite"),
            "has no rank: its file name does not match --rank-regex 'node(\\d+)' (the export "
            "records rank 0, from MPI_RANKS, which --rank-regex overrides: without it the "
            "exports' records give the ranks)",
        ),
    ]


def test_a_file_name_that_is_not_utf8_is_shown_as_its_bytes(tmp_path):
    # polars cannot hold the surrogate escapes Python keeps such bytes as: the whole run
    # was an internal error (UnicodeEncodeError) in the ranks frame
    import json
    import os

    rs = build_rank_set(tmp_path, ranks=2, steps=2, slow_rank=None)
    odd = tmp_path / os.fsdecode(b"rank_\xff_1.sqlite")
    rs.paths[1].rename(odd)
    (tmp_path / os.fsdecode(b"rank_\xfe_2.sqlite")).write_bytes(b"junk" * 100)
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.ranks.select("rank", "path").rows() == [
        (0, str(rs.paths[0])), (1, f"{tmp_path}/rank_\\xff_1.sqlite")
    ]  # fmt: skip
    assert r.failures["path"].to_list() == [f"{tmp_path}/rank_\\xfe_2.sqlite"]
    doc = json.loads(render_ranks(r, fmt="json"))
    assert [row["path"] for row in doc["ranks"]] == r.ranks["path"].to_list()


def test_a_failed_whole_node_export_before_another_is_said(tmp_path):
    # node0's export (ranks 0-1) failed: node1's processes were numbered 0 and 1 as if they
    # were the job's first ranks, and nothing said so
    from fixtures.ranks import build_one_export

    build_one_export(tmp_path / "node0.sqlite", ranks=2, steps=3, slow_rank=None)
    build_one_export(tmp_path / "node1.sqlite", ranks=2, steps=3, pids={0: 50000, 1: 50001})
    (tmp_path / "node0.sqlite").write_bytes(b"junk" * 100)
    r = analyse_ranks([tmp_path], jobs=1)
    assert r.ranks.select("rank", "pid").rows() == [(0, 50000), (1, 50001)]
    assert r.findings[-1] == (
        "rank numbers count the processes of the exports analysed only: node0.sqlite failed "
        "and comes before node1.sqlite in file order, so the ranks numbered from there on are "
        "lower than the job's"
    )
    # a failed export after the analysed ones moves no number: nothing said
    (tmp_path / "node0.sqlite").rename(tmp_path / "node2.sqlite")
    r = analyse_ranks([tmp_path], jobs=1)
    assert not any(f.startswith("rank numbers count") for f in r.findings)


def test_the_report_page_says_many_missing_ranks_as_ranges(tmp_path):
    """The HTML page's 'missing ranks' line listed every number (199,998 of them here,
    1.4 MB of the page) where the command says ranges and a count."""
    from tracelens.report import build_ranks_report

    rs = build_rank_set(tmp_path, ranks=3, steps=2, slow_rank=None, stem="r{rank}")
    for path, pid in zip(rs.paths, (12345, 12377, 212345), strict=True):
        path.rename(tmp_path / f"report_{pid}.sqlite")
    page = build_ranks_report(analyse_ranks([tmp_path], jobs=1, rank_regex=r"report_(\d+)"))
    assert "12346-12376, 12378-212344: 199,998 ranks" in page
    assert "12346, 12347" not in page
    assert len(page) < 1_000_000
