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
    assert_golden(pair.paths[rank], "ranks_collectives", f"rank{rank}", load_comm_kernels, pid=None)


@pytest.mark.parametrize("rank", [0, 1])
def test_ranks_gpu_time(pair, rank):
    # per step 2 ms AllGather + 45 ms compute (+3 ms on rank 1) + AllReduce to the common end
    assert_golden(pair.paths[rank], "ranks_gpu_time", f"rank{rank}", load_comm_kernels, pid=None)


def test_ranks_gpu_time_overlap(tmp_path):
    # Communication overlapping compute on another stream is not exposed; a memcpy is busy
    # time but neither compute nor communication; two devices are summed.
    from fixtures.ranks import ALLREDUCE, XMMA_GEMM

    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(7, "python train.py")
    b.kernel(XMMA_GEMM, start=1_000, end=11_000, stream=7)  # compute 10 us
    b.kernel(ALLREDUCE, start=6_000, end=16_000, stream=13)  # comm 10 us, 5 us exposed
    b.kernel(XMMA_GEMM, start=8_000, end=9_000, stream=21)  # inside the first: adds nothing
    b.memcpy("DtoH", 64, start=20_000, end=22_000)  # busy 2 us
    b.kernel(ALLREDUCE, start=1_000, end=4_000, stream=13, device=1)  # device 1: all exposed
    path = b.write(tmp_path / "overlap.sqlite")
    # busy 15+2+3 = 20 us, compute 10, comm 10+3, not-comm 10+2 -> exposed 20-12 = 8 us
    assert_golden(path, "ranks_gpu_time", "overlap", load_comm_kernels, pid=None)


def test_ranks_comm_kernels(pair):
    # the two NCCL kernels of the run, each with its collective; the compute kernels (gemm,
    # split-K gemm, layer norm) are not communication
    assert_golden(pair.paths[0], "_ranks_comm_kernels", "rank0", load_comm_kernels)


@pytest.fixture(scope="module")
def one_export(tmp_path_factory):
    from fixtures.ranks import build_one_export

    # a 2-rank job as one export: rank 1 (pid 40001, GPU 1) the straggler, 2 steps
    return build_one_export(tmp_path_factory.mktemp("ranks_one") / "job.sqlite", steps=2)


def test_ranks_processes(one_export):
    # each process that ran kernels, by its lowest GPU: 10 kernels each (5 per step), 4 of
    # them collectives (an AllGather and an AllReduce per step); kernel time 2 x 90 ms each
    # (rank 0 waits its 38 ms inside the AllReduce, rank 1 spends them in its layer norm)
    assert_golden(one_export, "ranks_processes", "one_export", load_comm_kernels)


def test_ranks_processes_with_a_helper(tmp_path):
    from fixtures.ranks import build_one_export

    # a helper process (pid 40100) on GPU 0: 5 kernels of 10 us, no collective
    job = build_one_export(tmp_path / "job.sqlite", steps=2, helper_kernels=5)
    assert_golden(job, "ranks_processes", "one_export_helper", load_comm_kernels)


def test_ranks_collectives_of_one_process(one_export):
    # pid 40001's collectives only (GPU 1: its NCCL stream is the only communicator)
    assert_golden(
        one_export, "ranks_collectives", "one_export_pid40001", load_comm_kernels, pid=40_001
    )


def test_ranks_gpu_time_of_one_process(one_export):
    # pid 40001 alone: 2 x (2 ms AllGather + 83 ms compute + 5 ms AllReduce) on one device
    assert_golden(
        one_export, "ranks_gpu_time", "one_export_pid40001", load_comm_kernels, pid=40_001
    )
