"""NVTX ranges that overlap on one thread, projected as nsys stats 2022.4's
nvtx_gpu_proj_trace does (its script, reports/nvtxgpuproj.py, run on this very trace gave
the rows checked here: a range's parent is the tightest range containing it, and a range
holds every CUDA API call lying inside it, whichever other ranges hold it too). One thread
of process 4242; start/end ranges end on their own thread (endGlobalTid NULL, as nsys
writes them; nsys 2022.4 projects no range whose endGlobalTid is set):

  1 A  start/end [1000, 5000]
  2 B  start/end [3000, 8000]   crosses A
  3 X  push/pop  [3500, 4500]   inside A and B; A is the tighter (3000 ns of slack, B 4000)

Calls (cid: span -> kernel): 1: [3600, 3700] in X, A and B -> [4600, 4700]; 2: [4600,
4700] in A and B -> [5600, 5700]; 3: [6000, 6100] in B only -> [7000, 7100].

nsys: A 2 ops [4600, 5700] (1 child, X), B 3 ops [4600, 7100], X 1 op [4600, 4700], X's
parent A at level 1. Before, X's parent was B (the range one level up that contained it)
and A held nothing (calls 1 and 2 went to X and B, and up X's stack only).
"""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens import nvtx_kernels
from tracelens.nvtx import build_projection, kernels_by_range
from tracelens.synth import TraceBuilder

PID = 4242


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.nvtx_range("A", start=1000, end=5000, tid=PID, event_type=60, endGlobalTid=None)
    b.nvtx_range("B", start=3000, end=8000, tid=PID, event_type=60, endGlobalTid=None)
    b.nvtx_range("X", start=3500, end=4500, tid=PID, event_type=59)
    for cid, (start, end) in enumerate([(3600, 3700), (4600, 4700), (6000, 6100)], start=1):
        b.runtime("cudaLaunchKernel_v7000", start=start, end=end, tid=PID, correlation_id=cid)
        b.kernel(XMMA_GEMM, start=start + 1000, end=start + 1100, correlation_id=cid)
    return b.write(tmp_path_factory.mktemp("nvtx_overlaps") / "nvtx_overlaps.sqlite")


def test_nvtx_overlap_holders(trace_path):
    # Call 1 is held by A, B and X; call 2 by A and B; call 3 by B.
    assert_golden(trace_path, "_nvtx_overlap_holders", "crossing", build_projection)


def test_nvtx_tree_of_crossing_ranges(trace_path):
    # X's parent is A (the tighter), level 1; A and B are roots (B's depth is 1).
    assert_golden(trace_path, "_nvtx_tree", "crossing", build_projection, probe="all")


def test_nvtx_gpu_projection_of_crossing_ranges(trace_path):
    assert_golden(trace_path, "nvtx_gpu_projection", "crossing", build_projection)


def test_nvtx_kernel_summary_of_crossing_ranges(trace_path):
    # nsys's nvtx_kern_sum on this trace: A 2 kernels, B 3, X 1 (before: B 1).
    assert_golden(trace_path, "nvtx_kernel_names", "crossing", _kernel_stats)
    with tracelens.open(trace_path) as t:
        named = kernels_by_range(t, group="name", name="short").write_csv()
    assert named == (GOLDEN / "nvtx_kernels_by_range__crossing.csv").read_text()


def _kernel_stats(trace):
    build_projection(trace)
    nvtx_kernels.register_stats(trace, group="name", name="short")
