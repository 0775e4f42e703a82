"""A step range the capture stopped inside (nsys writes end NULL for a range still open at
the capture's end) is no complete step: it was dropped without a word; the steps' detail
now names it as left out, with the step number it would have had, for every NVTX step
source (ProfilerStep markers, a family of top-level ranges, --range GLOB), and the steps
themselves (count, rows, steady-state figures) stay those of the complete ranges."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_cut_capture import CUT_STEP
from test_cut_capture import build as build_cut

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
CUT = "; the range 'ProfilerStep#20' (step 21) never ended: the capture stopped inside it; left out"


@pytest.mark.parametrize("args", [[], ["--range", "ProfilerStep*"]], ids=["markers", "range"])
def test_a_profiler_step_left_open_is_named_as_left_out(tmp_path, capsys, args):
    path = build_cut(tmp_path / "cut.sqlite", "open", cut=True)
    rc, out, err = run_cli(["steps", path, *args, "-f", "json", "--no-cache"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["detail"].endswith(CUT), doc["detail"]
    assert doc["summary"]["count"] == CUT_STEP
    assert [s["step"] for s in doc["steps"]] == list(range(1, CUT_STEP + 1))
    # the same capture without the open range (a capture that never saw it): same steps,
    # nothing said
    closed = build_cut(tmp_path / "closed.sqlite", "markers", cut=True)
    rc, out, err = run_cli(["steps", closed, *args, "-f", "json", "--no-cache"], capsys)
    other = json.loads(out)
    assert "never ended" not in other["detail"]
    assert other["steps"] == doc["steps"]
    assert other["detail"] + CUT == doc["detail"]


def _decode_loop(path, open_last: bool, pids=(100, 200)):
    """Each process of ``pids`` runs 6 top-level decode_step_N ranges (N from 1), 1 ms
    apart, each launching 3 kernels on device 0; the last range left open when
    ``open_last`` (its launches still traced)."""
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    for p, pid in enumerate(pids):
        b.process(pid, "python serve.py")
        for s in range(6):
            t = 1_000 * US + s * 1_000 * US + p * 300 * US
            end = None if open_last and s == 5 else t + 250 * US
            b.nvtx_range(f"decode_step_{s + 1}", start=t, end=end, pid=pid, tid=pid)
            for k in range(3):
                at = t + 10 * US + k * 60 * US
                cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5 * US, pid=pid,
                                tid=pid)  # fmt: skip
                b.kernel(f"void k{k}(float*)", start=at + 20 * US, end=at + 50 * US, pid=pid,
                         correlation_id=cid, stream=7 + p)  # fmt: skip
    b.nvtx_range("log", start=9_000 * US, end=9_001 * US, pid=pids[0], tid=pids[0])
    return b.write(path)


def test_a_family_range_left_open_in_two_processes_is_named_once(tmp_path):
    cut = _decode_loop(tmp_path / "cut.sqlite", open_last=True)
    with tracelens.open(cut, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "marker" and steps.count == 5
    assert steps.detail.endswith(
        "; 2 ranges 'decode_step_6' (step 6, in 2 processes) never ended: the capture "
        "stopped inside them; left out"
    ), steps.detail
    with tracelens.open(_decode_loop(tmp_path / "one.sqlite", True, pids=(100,))) as trace:
        assert trace.steps().detail.endswith(
            "; the range 'decode_step_6' (step 6) never ended: the capture stopped inside it; "
            "left out"
        )
    with tracelens.open(_decode_loop(tmp_path / "full.sqlite", open_last=False)) as trace:
        full = trace.steps()
    assert full.count == 6 and "never ended" not in full.detail


def test_a_range_left_open_that_is_no_step_is_not_named(tmp_path):
    """An open range of another label, or one nested in a step (not top-level for the
    family), is not a step left out."""
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python serve.py")
    for s in range(4):
        t = 1_000 * US + s * 1_000 * US
        b.nvtx_range(f"decode_step_{s + 1}", start=t, end=t + 500 * US, pid=100, tid=100)
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 10 * US, end=t + 15 * US, pid=100,
                        tid=100)  # fmt: skip
        b.kernel("void k(float*)", start=t + 30 * US, end=t + 90 * US, pid=100,
                 correlation_id=cid)  # fmt: skip
    b.nvtx_range("checkpoint", start=5_000 * US, end=None, pid=100, tid=100)
    path = b.write(tmp_path / "t.sqlite")
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
        assert steps.count == 4 and "never ended" not in steps.detail, steps.detail
        ranged = trace.steps(range="decode_step_*")
        assert ranged.count == 4 and "never ended" not in ranged.detail
