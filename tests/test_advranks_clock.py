"""tracelens ranks with a rank that ran no collective (its NCCL kernels not captured): its
clock cannot be aligned on collective ends, so its correction is unknown, not 0, and
"clocks agree" is not said of it without a word (adversarial review, advranks)."""

from __future__ import annotations

import sqlite3

import polars as pl
from fixtures.ranks import build_rank_set

from tracelens.ranks import analyse_ranks
from tracelens.ranks.render import render_ranks


def _drop_collectives(path) -> None:
    con = sqlite3.connect(path)
    con.execute(
        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName IN "
        "(SELECT id FROM StringIds WHERE value LIKE 'ncclDevKernel%')"
    )
    con.commit()
    con.close()


def test_a_rank_without_collectives_has_no_clock_correction(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=None, skew_ns={r: 0 for r in range(4)})
    _drop_collectives(rs.paths[2])
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock.select("rank", "correction_ns", "matched").rows() == [
        (0, 0, 8), (1, 0, 8), (2, None, 0), (3, 0, 8)
    ]  # fmt: skip
    assert r.ranks["clock_correction_ns"].to_list() == [0, 0, None, 0]
    assert r.findings[1:3] == (
        "clocks agree: collective ends match rank 0's as recorded",
        "rank 2's clock is not aligned: none of its collective calls pairs with rank 0's (it "
        "ran none, or only other ones), so its correction is unknown",
    )
    # its steps stay on the session base: they are still in the matrix
    assert r.steps.filter(pl.col("rank") == 2).height == rs.steps
    assert "\n| 2 | 2,000,000 | — | 0 | — |\n" in render_ranks(r, fmt="markdown")


def test_ranks_without_collectives_are_named_once(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1)
    for k in (2, 3):
        _drop_collectives(rs.paths[k])
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock["correction_ns"].to_list() == [0, rs.correction_ns(1), None, None]
    assert (
        "ranks 2 and 3's clocks are not aligned: none of their collective calls pairs with "
        "rank 0's (they ran none, or only other ones), so their corrections are unknown"
    ) in r.findings


def test_without_any_collective_no_rank_has_a_correction(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, slow_rank=None)
    for path in rs.paths:
        _drop_collectives(path)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.clock["correction_ns"].to_list() == [None, None]
    assert r.ranks["clock_correction_ns"].to_list() == [None, None]


def test_clocks_do_not_agree_with_the_reference_alone(tmp_path):
    # only rank 0 ran collectives: no other rank's ends were compared with its own ("clocks
    # agree" was said), and its calls alone have no straggler ("no straggler: every
    # collective started within 10.00 µs on all ranks" was said)
    rs = build_rank_set(tmp_path, ranks=3, slow_rank=None)
    for k in (1, 2):
        _drop_collectives(rs.paths[k])
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings[:2] == (
        "only rank 0's collective calls pair (the others ran none, or theirs do not pair): "
        "who waited for whom cannot be measured",
        "ranks 1 and 2's clocks are not aligned: none of their collective calls pairs with "
        "rank 0's (they ran none, or only other ones), so their corrections are unknown",
    )
    assert r.findings[2].startswith("rank 0 differs (kernel set): ")


def test_an_unpaired_ranks_correction_is_not_the_headline(tmp_path):
    # rank 3 skipped a step's calls: its -100.3 ms "correction" pairs other calls, and the
    # headline named it the largest ('the most rank 3 by -100.3 ms; ends then agree within
    # 100.0 ms') before the next finding called it unreliable
    from fixtures.ranks import drop_second_collectives

    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1)
    drop_second_collectives(rs.paths[3])
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.findings[1] == (
        "clocks aligned on collective ends (reference rank 0): 2 rank(s) corrected, the most "
        "rank 1 by -370.0 µs; ends then agree within 0 ns"
    )
    assert r.findings[2].startswith(
        "rank 3's collective ends still differ from rank 0's by up to 100.0 ms after aligning"
    )
