"""The analysis window of an --nvtx selection: the selected work's GPU span, as for --step.

NVTX ranges are CPU time and the GPU runs behind the host, so the work a range launched
runs later, after work launched before it (a prefill that keeps the GPU busy). util's span
is the window: over the whole capture the prefill counted as idle time "before the first"
selected operation, and a utilization gate tripped on a busy GPU. Expected values come from
what the fixture holds, not from tracelens."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.demo import demo_path
from tracelens.filters import EventFilter, select_nvtx
from tracelens.synth import TraceBuilder

PID, TID = 100, 100
LAUNCH = "cudaLaunchKernel_v7000"
# the decode work's GPU span: k_dec 60 us - 61 us and 62 us - 63 us, the copy 63 - 63.5 us
DECODE_START, DECODE_END = 60_000, 63_500
DECODE_BUSY = 1_000 + 1_000 + 500


def _launch(b, at, api=LAUNCH):
    return b.runtime(api, start=at, end=at + 50, pid=PID, tid=TID)


def build_prefill_decode(path):
    """prefill (0-1 us) launches a 48 us kernel; decode_1 and decode_2 launch a kernel each
    and decode_2 a copy, which run after it; a last kernel launched outside every range
    runs at 80 us, so the capture ends well after the decode work."""
    b = TraceBuilder("3.25.0")
    b.process(PID, "python serve.py")
    b.gpu(0)
    b.nvtx_range("prefill", start=0, end=1_000, pid=PID, tid=TID)
    b.kernel("k_pre", start=2_000, end=50_000, pid=PID, correlation_id=_launch(b, 100))
    b.nvtx_range("decode_1", start=1_000, end=2_000, pid=PID, tid=TID)
    b.kernel("k_dec", start=60_000, end=61_000, pid=PID, correlation_id=_launch(b, 1_100))
    b.nvtx_range("decode_2", start=2_000, end=3_000, pid=PID, tid=TID)
    b.kernel("k_dec", start=62_000, end=63_000, pid=PID, correlation_id=_launch(b, 2_100))
    cid = _launch(b, 2_200, "cudaMemcpyAsync_v3020")
    b.memcpy("DtoH", 4096, start=63_000, end=63_500, pid=PID, correlation_id=cid)
    b.kernel("k_late", start=80_000, end=81_000, pid=PID, correlation_id=_launch(b, 5_000))
    return b.write(path)


@pytest.fixture(scope="module")
def prefill_decode(tmp_path_factory):
    return build_prefill_decode(tmp_path_factory.mktemp("window") / "pd.sqlite")


def test_nvtx_window_is_the_selected_work_gpu_span(prefill_decode):
    with tracelens.open(prefill_decode) as trace:
        where, ranges = select_nvtx(trace, "decode_*")
        assert ranges == 2
        assert (where.start_ns, where.end_ns) == (DECODE_START, DECODE_END)
        # inside the window the filter had: cut to it, never widened
        inside, _ = select_nvtx(trace, "decode_*", EventFilter(start_ns=61_500))
        assert (inside.start_ns, inside.end_ns) == (61_500, DECODE_END)
        wider, _ = select_nvtx(trace, "decode_*", EventFilter(start_ns=0, end_ns=90_000))
        assert (wider.start_ns, wider.end_ns) == (DECODE_START, DECODE_END)


def test_util_nvtx_spans_the_selected_work(prefill_decode):
    with tracelens.open(prefill_decode) as trace:
        row = trace.util(nvtx="decode_*").frame.row(0, named=True)
    assert row["span_ns"] == DECODE_END - DECODE_START
    assert row["busy_ns"] == DECODE_BUSY
    assert row["utilization"] == pytest.approx(DECODE_BUSY / (DECODE_END - DECODE_START))


def test_util_nvtx_matches_steps_on_the_demo(capsys):
    """The reviewer's case: the bundled demo's 4 decode steps selected by their ranges and
    as steps 1 to 4 are the same work, so util says the same busy time and gaps inside the
    steps; the gate does not trip. --nvtx counts idle time inside the ranges' GPU
    projection only (utilthread): the 3 gaps between one step's last kernel and the next
    step's first (the host in a sync at each step's end) are the steps' idle, not the
    ranges'."""
    import polars as pl

    demo = str(demo_path("bs16"))
    with tracelens.open(demo) as trace:
        by_nvtx = trace.util(nvtx="decode_step_*")
        by_steps = trace.util(steps="1:4")
    same = pl.exclude("span_ns", "idle_ns", "utilization")
    assert by_nvtx.frame.select(same).equals(by_steps.frame.select(same))
    between = by_steps.idle_causes.filter(cause="sync")
    assert between["count"].to_list() == [3]
    assert by_nvtx.idle_causes.equals(by_steps.idle_causes.filter(pl.col("cause") != "sync"))
    assert by_steps.frame["span_ns"][0] - by_nvtx.frame["span_ns"][0] == between["time_ns"][0]
    assert by_nvtx.covered_ns == by_nvtx.frame["span_ns"][0]
    util = ["util", demo, "--nvtx", "decode_step_*", "--fail-if", "util<0.5", "-f", "csv"]
    rc, out, err = run_cli(util, capsys)
    assert rc == 0, err
    assert "gate tripped" not in err
