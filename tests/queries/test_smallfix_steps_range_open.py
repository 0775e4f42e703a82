"""Golden tests of queries/steps_range_open.sql: the step ranges left open at the capture's
end, with the step number each would have. Process 100 (one thread): decode_step_1 and
decode_step_2, then decode_step_3 left open with a closed 'layer' inside it; process 200:
ProfilerStep#1 (closed), then 'generate' left open around decode_step_9, left open too."""

from __future__ import annotations

import pytest

import tracelens
from queries.golden import assert_golden
from tracelens.filters import glob_regex
from tracelens.synth import TraceBuilder


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python a.py")
    b.process(200, "python b.py")
    b.nvtx_range("decode_step_1", start=1_000, end=1_900, pid=100, tid=100)
    b.nvtx_range("decode_step_2", start=2_000, end=2_900, pid=100, tid=100)
    b.nvtx_range("decode_step_3", start=3_000, end=None, pid=100, tid=100)
    b.nvtx_range("layer", start=3_100, end=3_500, pid=100, tid=100)
    b.nvtx_range("ProfilerStep#1", start=1_100, end=1_800, pid=200, tid=200)
    b.nvtx_range("generate", start=2_100, end=None, pid=200, tid=200)
    b.nvtx_range("decode_step_9", start=2_200, end=None, pid=200, tid=200)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_200, end=1_250, pid=200, tid=200)
    b.kernel("void k(float*)", start=1_300, end=1_400, pid=200, correlation_id=cid)
    path = tmp_path_factory.mktemp("open") / "steps_open.sqlite"
    b.write(path)
    return path


def _golden(trace_path, case, **params):
    prepare = tracelens.Trace.load_nvtx_text
    assert_golden(trace_path, "steps_range_open", case, prepare=prepare, **params)


def test_an_open_top_level_range_of_the_family(trace_path):
    # decode_step_3 (the 3rd of process 100); decode_step_9 is inside 'generate': not top-level
    _golden(trace_path, "family", pattern="decode_step_#", match="family", top_level=True)


def test_open_ranges_matching_a_glob(trace_path):
    # both open decode steps: step 3 of process 100, step 1 of process 200
    params = dict(pattern=glob_regex("decode_step_*"), match="regex", top_level=False)
    _golden(trace_path, "glob", **params)


def test_no_open_range_matches(trace_path):
    params = dict(pattern=glob_regex("ProfilerStep#*"), match="regex", top_level=False)
    _golden(trace_path, "none", **params)
