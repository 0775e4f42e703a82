"""Golden tests of queries/_step_ranges.sql (step_ranges: the rule steps_range_list,
steps_by_range and steps_range_open share). Process 100: thread 100 runs 'step 1' [1000,
1500], 'step 2' [2000, 2500] holding 'step 2.5' [2100, 2200], 'step 3' from 2600 left open;
thread 101 (a loader) 'step 1' [1200, 1400] holding another 'step 1' [1250, 1300] and
'step 2' [2200, 2400]; process 200: 'step 7' [1100, 1600] and 'other' [1700, 1800]. The
latest NVTX timestamp is 2600 (the open range's start)."""

from __future__ import annotations

import pytest

import tracelens
from queries.golden import assert_golden
from tracelens.synth import TraceBuilder


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python train.py")
    b.process(200, "python other.py")
    for label, start, end, pid, tid in [
        ("step 1", 1_000, 1_500, 100, 100),
        ("step 2", 2_000, 2_500, 100, 100),
        ("step 2.5", 2_100, 2_200, 100, 100),
        ("step 3", 2_600, None, 100, 100),
        ("step 1", 1_200, 1_400, 100, 101),
        ("step 1", 1_250, 1_300, 100, 101),
        ("step 2", 2_200, 2_400, 100, 101),
        ("step 7", 1_100, 1_600, 200, 200),
        ("other", 1_700, 1_800, 200, 200),
    ]:
        b.nvtx_range(label, start=start, end=end, pid=pid, tid=tid)
    path = tmp_path_factory.mktemp("step_ranges") / "step_ranges.sqlite"
    b.write(path)
    return path


def test_step_ranges_are_numbered_per_thread(trace_path):
    assert_golden(trace_path, "_step_ranges", "threads", tracelens.Trace.load_nvtx_text)


def test_step_ranges_with_the_open_ones(trace_path):
    assert_golden(trace_path, "_step_ranges", "open", tracelens.Trace.load_nvtx_text)
