"""Golden tests of queries/steps_by_range.sql and steps_range_list.sql with the step ranges of
two processes (two ranks of one job): steps are numbered per process, so step N is the Nth
`iter` range of each, whichever rank started first (numbered across both by start, rank B's
first range was step 1 and rank A's step 2). Rank B (pid 9090) starts first:

  B  iter 1 [1000, 2000]  iter 2 [3000, 4000]   ranges 1 and 3, steps 1 and 2
  A  iter 1 [1500, 2500]  iter 2 [3500, 4500]   ranges 2 and 4, steps 1 and 2

Each call launches one kernel 100 ns after it, 10 ns long: B at 1100 (device 1), 3100
(device 1) and 3200 (device 0); A at 1600 and 3600 (device 0). Step 2 on device 0 holds
work of both ranges: its CPU span runs from B's start (3000) to A's end (4500), its thread
is B's (the earlier range).
"""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import assert_golden
from tracelens.filters import glob_regex
from tracelens.synth import TraceBuilder

RANK_A, RANK_B = 8080, 9090
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    for pid, offset in ((RANK_A, 500), (RANK_B, 0)):
        b.process(pid, "python train.py")
        for i, start in enumerate((1000, 3000), 1):
            b.nvtx_range(f"iter {i}", start=start + offset, end=start + offset + 1000, pid=pid)
    for pid, at, device in [(RANK_B, 1100, 1), (RANK_B, 3100, 1), (RANK_B, 3200, 0),
                            (RANK_A, 1600, 0), (RANK_A, 3600, 0)]:  # fmt: skip
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, pid=pid)
        b.kernel(XMMA_GEMM, start=at + 100, end=at + 110, device=device, pid=pid,
                 correlation_id=cid)  # fmt: skip
    path = tmp_path_factory.mktemp("steps_processes") / "steps_processes.sqlite"
    b.write(path)
    return path


def _golden(trace_path, query, case, **params):
    assert_golden(trace_path, query, case, prepare=tracelens.Trace.load_nvtx_text, **params)


def test_steps_range_list_numbers_steps_per_process(trace_path):
    params = dict(pattern=glob_regex("iter*"), match="regex", top_level=False)
    _golden(trace_path, "steps_range_list", "two_processes", **params)


def test_steps_by_range_numbers_steps_per_process(trace_path):
    # step 1: device 0 (A's kernel at 1700), device 1 (B's at 1200); step 2: device 0 (B's
    # at 3300 and A's at 3700, CPU span 3000-4500), device 1 (B's at 3200); ranges: 4
    params = dict(pattern="iter #", match="family", top_level=True, **NO_FILTER)
    _golden(trace_path, "steps_by_range", "two_processes", **params)
