"""Golden test of queries/steps_by_range.sql when matching NVTX ranges nest: a call made
after a nested matching range has ended, still inside the outer one, counts in the outer
range's step (it used to count in none: the call went to the latest-starting range, which
had ended). One thread, a glob `iter*` that matches all three ranges:

  iter 1        [1000, 2000]  step 1
    iter 1.a    [1100, 1600]  step 2
      iter 1.b  [1200, 1300]  step 3
  iter 2        [3000, 3100]  step 4 (no work)
and in a second process two start/end ranges that cross (B starts inside A, ends after it),
numbered on their own thread (steps are numbered per thread: per rank):
  iter A        [5000, 5100]  step 1 (no work: B starts later and is open)
  iter B        [5050, 5200]  step 2

Calls (each launches one kernel on device 0, 10 ns long, 100 ns after the call):
  1050 -> step 1 (before the nested ranges), 1250 -> step 3, 1400 -> step 2 (after 1.b
  ended, inside 1.a), 1700 -> step 1 (after both ended), 2500 -> none (between ranges);
  in the second process 5075 -> its step 2 (both open, B the latest), 5150 -> step 2.
"""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import assert_golden
from tracelens.filters import glob_regex
from tracelens.synth import TraceBuilder

PID = 7070
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for text, start, end in [
        ("iter 1", 1000, 2000),
        ("iter 1.a", 1100, 1600),
        ("iter 1.b", 1200, 1300),
        ("iter 2", 3000, 3100),
    ]:
        b.nvtx_range(text, start=start, end=end, pid=PID)
    side = PID + 1
    b.process(side, "python side.py")
    b.nvtx_range("iter A", start=5000, end=5100, pid=side, tid=side, event_type=60)
    b.nvtx_range("iter B", start=5050, end=5200, pid=side, tid=side, event_type=60)
    for pid, at in [(PID, 1050), (PID, 1250), (PID, 1400), (PID, 1700), (PID, 2500),
                    (side, 5075), (side, 5150)]:  # fmt: skip
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, pid=pid, tid=pid)
        b.kernel(XMMA_GEMM, start=at + 100, end=at + 110, correlation_id=cid, pid=pid)
    path = tmp_path_factory.mktemp("steps_nesting") / "steps_nesting.sqlite"
    b.write(path)
    return path


def test_steps_by_range_nested_ranges(trace_path):
    # step 1 holds the kernels of the calls at 1050 and 1700 ([1150, 1810], 2 kernels),
    # step 2 the one at 1400 and the second process's at 5075 and 5150 ([1500, 5260], 3
    # kernels), step 3 the one at 1250; the call at 2500 is in no step.
    params = dict(pattern=glob_regex("iter*"), match="regex", top_level=False, **NO_FILTER)
    assert_golden(
        trace_path, "steps_by_range", "nested_ranges", tracelens.Trace.load_nvtx_text, **params
    )
