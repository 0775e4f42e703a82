"""Golden tests of the NVTX sweep's queries on ranges with identical start and end (review8
B2): of two identical ranges the first (smaller RangeId) is the parent, so the last is the
innermost. Process 7000, range ids in the order written:

thread 7000 (push/pop, nested)            thread 7001 (overlapping: the refit path)
  1 r0     [500, 600]                        6 x     start/end [100, 520] (crosses s0, s1)
  2 r1     [500, 600]                        7 s0    [500, 600]
  3 r2     [500, 600]                        8 s1    [500, 600]
  4 e0     [700, 700] (empty)                9 short start/end [540, 560]
  5 e1     [700, 700] (empty)

Calls: 1 on 7000 [550, 552] -> kernel; 2 on 7001 [550, 570] (outlasts short: a misfit of
the marks) -> kernel.
"""

from __future__ import annotations

import polars as pl
import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import assert_golden
from tracelens import nvtx_tree
from tracelens.nvtx import build_projection
from tracelens.synth import TraceBuilder, global_tid

PID = 7000
SIDE = PID + 1


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for name in ("r0", "r1", "r2"):
        b.nvtx_range(name, start=500, end=600, tid=PID)
    for name in ("e0", "e1"):
        b.nvtx_range(name, start=700, end=700, tid=PID)
    b.nvtx_range("x", start=100, end=520, tid=SIDE, event_type=60)
    for name in ("s0", "s1"):
        b.nvtx_range(name, start=500, end=600, tid=SIDE)
    b.nvtx_range("short", start=540, end=560, tid=SIDE, event_type=60)
    for cid, (tid, start, end) in enumerate([(PID, 550, 552), (SIDE, 550, 570)], start=1):
        b.runtime("cudaLaunchKernel_v7000", start=start, end=end, tid=tid, correlation_id=cid)
        b.kernel(XMMA_GEMM, start=end + 10, end=end + 20, correlation_id=cid)
    return b.write(tmp_path_factory.mktemp("nvtx_identical") / "nvtx_identical.sqlite")


def _tree_only(trace: tracelens.Trace) -> None:
    trace.load_nvtx_spans()
    nvtx_tree.build(trace, nvtx_tree.thread_chunks(trace))


def test_nvtx_tree_of_identical_ranges(trace_path):
    # 7000: r0 > r1 > r2 (levels 0-2), e0 > e1. 7001: x crosses s0, so the thread is refit:
    # s1's tightest containers are s0 and nothing else; short's are s0 and s1 (equal
    # slack), of which the last, s1, is its parent (before: s0, the smaller RangeId).
    assert_golden(trace_path, "_nvtx_tree", "identical", build_projection, probe="all")


def test_nvtx_marks_of_identical_ranges(trace_path):
    # At 500 (key 2001) the last of r0..r2 opens innermost, r2; their ends at 600 (key 2400)
    # leave r0's parent (none). The empty e0, e1 at 700: e1 at key 2801, none at 2802.
    # On 7001: x at 401, s1 at 2001, short at 2161; at 2080 x's end leaves no parent, at
    # 2240 short's end leaves s1, at 2400 none.
    every = {"from_tid": None, "to_tid": None, "null_tid": True}
    assert_golden(trace_path, "_nvtx_marks", "identical", _tree_only, **every)


def test_nvtx_call_ranges_of_identical_ranges(trace_path):
    # Call 1: r2 (3); call 2: short ends before it does, refit to s1 (8), not s0.
    assert_golden(trace_path, "_nvtx_marks", "call_ranges_identical", build_projection,
                  probe="call_ranges")  # fmt: skip


def _misfits(trace: tracelens.Trace) -> None:
    _tree_only(trace)
    misfits = pl.DataFrame(
        {"call": [1, 2], "global_tid": [global_tid(PID, PID), global_tid(PID, SIDE)],
         "start": [550, 550], "end": [552, 570]}
    )  # fmt: skip
    trace.db.register("nvtx_misfit_calls", misfits.to_arrow())


def test_nvtx_call_refit_of_identical_ranges(trace_path):
    # Call 1: r0, r1, r2 hold it with equal slack: r2, the last. Call 2: s0 and s1: s1.
    assert_golden(trace_path, "_nvtx_call_refit", "identical", _misfits)


def _register_probes(trace: tracelens.Trace) -> None:
    trace.load_nvtx_text()
    probes = pl.DataFrame(
        {"probe": [1, 2, 3], "global_tid": [global_tid(PID, t) for t in (PID, SIDE, PID)],
         "start": [550, 550, 700], "end": [552, 570, 700]}
    )  # fmt: skip
    trace.db.register("nvtx_probes", probes.to_arrow())


def test_nvtx_innermost_of_identical_ranges(trace_path):
    # 1: r2 (before: r0, the smallest name); 2: s1; 3: e1.
    assert_golden(trace_path, "_nvtx_innermost", "identical", _register_probes)
