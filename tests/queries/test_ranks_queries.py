"""Golden tests of the ranks queries on a two-rank set built by code (tests/fixtures/ranks.py):
rank 1 is the straggler (its last compute kernel 3 ms longer), clocks skewed."""

from __future__ import annotations

import pytest
from fixtures.ranks import build_rank_set

from queries.golden import assert_golden
from tracelens.ranks.summary import load_comm_kernels


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return build_rank_set(
        tmp_path_factory.mktemp("ranks_golden"), ranks=2, steps=2, slow_rank=1,
        slow_ns=3_000_000, skew_ns={0: 0, 1: 40_000},
    )  # fmt: skip


@pytest.mark.parametrize("rank", [0, 1])
def test_ranks_collectives(pair, rank):
    # comm 0 = the NCCL stream; AllGather then AllReduce per step; on the slow rank the
    # AllReduce starts 3 ms later and is 3 ms shorter (it ends with the others').
    assert_golden(pair.paths[rank], "ranks_collectives", f"rank{rank}", load_comm_kernels)
