"""The diff's totals of a selection (--nvtx, --step; the report's pair page too) count the
CUDA API calls that launched the selected work: the calls were counted only inside the
selected work's GPU span, which each launch call precedes, so 4 launches read as 2 calls,
and a step's as 0 (found by advfilters)."""

from __future__ import annotations

from test_report_filters import four_steps, two_phases

import tracelens
from tracelens.compare.headline import trace_totals


def test_the_calls_that_launched_the_selected_work(tmp_path):
    with tracelens.open(two_phases(tmp_path / "t.sqlite"), cache=False) as t:
        decode = trace_totals(t, t.filter(nvtx="decode"))
        whole = trace_totals(t)
    # two 'decode' ranges, each launching DECODE twice: 4 launch calls
    assert (decode["kernel_launches"], decode["runtime_calls"]) == (4, 4)
    assert whole["runtime_calls"] == 9


def test_the_calls_of_a_step(tmp_path):
    with tracelens.open(four_steps(tmp_path / "s.sqlite"), cache=False) as t:
        step = trace_totals(t, t.filter(step=3))
        asked = trace_totals(t, t.filter(step=3, start=305_000))
    assert (step["kernel_launches"], step["runtime_calls"]) == (2, 2)
    # a window asked with the step still cuts: its calls (301 µs, 302 µs) end before it,
    # its kernels (from 310 µs) are in it
    assert (asked["kernel_launches"], asked["runtime_calls"]) == (2, 0)
