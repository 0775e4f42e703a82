"""Cut captures end to end: a capture that stopped in the middle of a step holds the first
part of the full capture's work. Checked against the full capture's fingerprint it follows
the same path (a shorter capture, not a path change); the diff of the two claims no other
kernels and no slowdown; and a cut capture whose kernel variant really changed is caught.
With and without NVTX step ranges (ProfilerStep#N), and with the step range and an
enclosing range left open at the capture end."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import FILL, FLASH_FWD, NCCL_SENDRECV, REDUCE_SUM, XMMA_GEMM

from tracelens.synth import TraceBuilder

PID = 4242
STEPS = 30
GEMM_B = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
# One step: 12 launches (a forward, a backward and the gradients' all-reduce), each
# (kernel, duration ns, grid).
STEP = (
    (XMMA_GEMM, 40_000, (64, 8, 1)),
    (FILL, 2_000, (128, 1, 1)),
    (FLASH_FWD, 30_000, (32, 16, 1)),
    (XMMA_GEMM, 40_000, (64, 8, 1)),
    (REDUCE_SUM, 5_000, (256, 1, 1)),
    (XMMA_GEMM, 60_000, (128, 8, 1)),
    (FILL, 2_000, (128, 1, 1)),
    (XMMA_GEMM, 60_000, (128, 8, 1)),
    (REDUCE_SUM, 5_000, (256, 1, 1)),
    (FLASH_FWD, 30_000, (32, 16, 1)),
    (XMMA_GEMM, 40_000, (64, 8, 1)),
    (NCCL_SENDRECV, 50_000, (8, 1, 1)),
)
STEP_NS = 600_000  # a step's host time: launches 20 us apart, then the host's gap
CUT_STEP, CUT_LAUNCH = 20, 7  # the cut capture stops after step 21's 7th launch


def build(
    path,
    ranges: str,
    cut: bool = False,
    switched_from: int | None = None,
    warmup: bool = False,
    cut_launch: int = CUT_LAUNCH,
    switched_at: int = 10,
):
    """``STEPS`` steps of ``STEP`` (one thread, one stream; the kernels one after another).
    ``ranges``: 'none', 'markers' (each step in a ProfilerStep#N range, all inside a
    'train' range; a capture cut mid-step lacks the ranges that had not ended, as a
    capture that never saw them end), 'open' (the same, the ranges that had not ended at
    the cut kept open: no end). ``cut``: the capture stops at ``CUT_STEP``'s
    ``cut_launch``th launch. ``switched_from``: from that step (from 0) on, the GEMM at
    ``switched_at`` (the last one) of each step is another kernel (a variant change). ``warmup``: three set-up kernels
    before the first step (launches outside the steps at the start, as the cut ones are
    at the end)."""
    b = TraceBuilder("3.25.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    stop = CUT_STEP * STEP_NS + cut_launch * 20_000 + 1_000_000 if cut else None
    gpu = 0
    for k in range(3 if warmup else 0):
        t = 600_000 + 20_000 * k
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5_000)
        start = t + 10_000
        gpu = start + 10_000
        b.kernel(f"void setup_kernel_{k}<float>(float *, int)", start=start, end=gpu,
                 correlation_id=cid)  # fmt: skip
    for i in range(STEPS):
        host = 1_000_000 + i * STEP_NS
        for k, (name, duration, grid) in enumerate(STEP):
            t = host + 20_000 * k
            if stop is not None and t >= stop:
                break
            if switched_from is not None and i >= switched_from and k == switched_at:
                name = GEMM_B
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5_000)
            start = max(t + 8_000, gpu)
            gpu = start + duration
            b.kernel(name, start=start, end=gpu, correlation_id=cid, grid=grid)
        if ranges != "none":
            end = host + STEP_NS - 50_000
            if stop is None or end <= stop:
                b.nvtx_range(f"ProfilerStep#{i}", start=host - 1_000, end=end)
            elif ranges == "open" and host - 1_000 < stop:
                b.nvtx_range(f"ProfilerStep#{i}", start=host - 1_000, end=None)
    if ranges != "none":
        last = 1_000_000 + STEPS * STEP_NS
        if stop is None or ranges == "open":
            b.nvtx_range("train", start=500_000, end=None if stop is not None else last)
    return b.write(path)


def _fingerprint(path, out, capsys):
    rc, _, err = run_cli(["fingerprint", path, "-o", out], capsys)
    assert rc == 0, err
    return json.loads(out.read_text())


def _steps(path, capsys) -> dict:
    rc, out, err = run_cli(["steps", path, "-f", "json"], capsys)
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    "ranges, warmup", [("none", False), ("markers", False), ("open", False), ("none", True)]
)
def test_a_capture_cut_mid_step_follows_the_full_captures_path(tmp_path, capsys, ranges, warmup):
    full = build(tmp_path / "full.sqlite", ranges, warmup=warmup)
    cut = build(tmp_path / "cut.sqlite", ranges, cut=True, warmup=warmup)
    base = tmp_path / "full.json"
    doc = _fingerprint(full, base, capsys)
    assert doc["steps"]["count"] == STEPS
    cut_doc = _fingerprint(cut, tmp_path / "cut.json", capsys)
    assert cut_doc["steps"]["method"] == doc["steps"]["method"]
    assert cut_doc["steps"]["count"] == CUT_STEP  # the complete steps only
    # the step search finds the full capture's steps in the part the cut one holds
    full_steps, cut_steps = _steps(full, capsys)["steps"], _steps(cut, capsys)["steps"]
    assert cut_steps == full_steps[:CUT_STEP]
    rc, out, err = run_cli(["fingerprint", cut, "--check", base], capsys)
    assert rc == 0 and "follows" in out, out + err
    for pair in ((full, cut), (base, cut), (full, tmp_path / "cut.json")):
        rc, out, err = run_cli(["diff", *pair, "--fail-if", "path_changed"], capsys)
        assert rc == 0 and "follows" in out, out + err
    # the plain diff, either way: no kernel ran in one capture only, none runs slower, no
    # step is slower or faster
    for pair in ((full, cut), (cut, full)):
        rc, out, err = run_cli(["diff", *pair, "-f", "json"], capsys)
        assert rc == 0, err
        _assert_no_other_kernels_or_slowdown(json.loads(out))


def _assert_no_other_kernels_or_slowdown(diff: dict) -> None:
    """No kernel only one side ran, no per-call or per-step time change, no danger clue (a
    danger-zone kernel's total time follows the capture's length: no growth)."""
    figures = diff["figures"]
    assert figures["new_kernels"] == figures["vanished_kernels"] == 0
    assert all(k["status"] == "both" for k in diff["kernels"])
    clues = [c["id"] for c in diff["clues"]]
    assert clues == ["capture_difference"]
    assert figures["max_per_call_ratio"] <= 1.01
    assert figures["step_median_ms"] == figures["step_median_ms_a"]
    (device,) = diff["alignment"]
    assert device["only_in_a"] == [] or device["only_in_b"] == []
    assert device["replaced"] == []
    shorter = min(device["launches_a"], device["launches_b"])
    assert device["matched_in_order"] == shorter  # the cut one is the other's first launches


@pytest.mark.parametrize("ranges", ["none", "markers", "open"])
def test_a_cut_capture_with_a_changed_kernel_is_caught(tmp_path, capsys, ranges):
    full = build(tmp_path / "full.sqlite", ranges)
    cut = build(tmp_path / "cut.sqlite", ranges, cut=True, switched_from=12)
    base = tmp_path / "full.json"
    _fingerprint(full, base, capsys)
    rc, out, err = run_cli(["fingerprint", cut, "--check", base], capsys)
    assert rc == 1 and "segment_k_off" in out + err, out + err
    rc, out, err = run_cli(["diff", full, cut, "--fail-if", "path_changed"], capsys)
    assert rc == 1, out + err


@pytest.mark.parametrize("ranges", ["none", "markers"])
def test_captures_cut_at_two_points_of_one_step(tmp_path, capsys, ranges):
    """Both captures hold the same complete steps and end inside the next one, at two
    points of it: the same path (the launches one holds beyond the other are a capture
    difference); the old comparison read the step's first launches outside the steps as
    kernels removed. A kernel switched in that step is still caught."""
    seven = build(tmp_path / "seven.sqlite", ranges, cut=True, warmup=True)
    three = build(tmp_path / "three.sqlite", ranges, cut=True, warmup=True, cut_launch=3)
    base = tmp_path / "seven.json"
    _fingerprint(seven, base, capsys)
    rc, out, err = run_cli(["fingerprint", three, "--check", base], capsys)
    assert rc == 0 and "the last 4 launches of A are in A only" in out, out + err
    other = tmp_path / "three.json"
    _fingerprint(three, other, capsys)
    rc, out, err = run_cli(["diff", other, base, "--fail-if", "path_changed"], capsys)
    assert rc == 0 and "the last 4 launches of B are in B only" in out, out + err
    switched = build(
        tmp_path / "switched.sqlite", ranges, cut=True, warmup=True, switched_from=20,
        switched_at=2,
    )  # fmt: skip
    rc, out, err = run_cli(["fingerprint", switched, "--check", base], capsys)
    assert rc == 1, out + err
