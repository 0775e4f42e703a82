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
    # both hold the warm-up: it fixes where their steps begin, so no "not known"
    said = "B's capture ends earlier (it holds 20 steps, A 20): A's last 4 launches are past"
    assert rc == 0 and f"note: {said} its end, not compared\n" in out, out + err
    other = tmp_path / "three.json"
    _fingerprint(three, other, capsys)
    rc, out, err = run_cli(["diff", other, base, "--fail-if", "path_changed"], capsys)
    said = "A's capture ends earlier (it holds 20 steps, B 20): B's last 4 launches are past"
    assert rc == 0 and f"note: {said} its end, not compared\n" in out, out + err
    switched = build(
        tmp_path / "switched.sqlite", ranges, cut=True, warmup=True, switched_from=20,
        switched_at=2,
    )  # fmt: skip
    rc, out, err = run_cli(["fingerprint", switched, "--check", base], capsys)
    assert rc == 1, out + err


# A step in nested ranges: 'train_step' holding 'forward', 'backward' and 'optimizer' (the
# review's gen_cut.py), each launch 60 us after the last, one range after another.
PHASES = (
    ("forward", ("embed", "gemm_qkv", "flash_attn", "gemm_o", "layernorm", "gemm_mlp")),
    ("backward", ("gemm_mlp_dgrad", "gemm_mlp_wgrad", "layernorm_bwd", "gemm_o_dgrad",
                  "flash_attn_bwd", "gemm_qkv_dgrad", "gemm_qkv_wgrad", "embed_bwd")),
    ("optimizer", ("adam", "zero_grad")),
)  # fmt: skip
NESTED_STEPS = 24


def build_nested(path, nvtx=True, start_cut=None, end_cut=None, swap_from=None, extra=None):
    """``NESTED_STEPS`` steps of ``PHASES``; steps 1-2 also run an autotune kernel in
    forward (warm-up). ``start_cut``/``end_cut``: (step, range, k), the capture starts
    (stops) just before that range's k-th launch (from 0): the ranges pushed before it
    started have no row, those open when it stopped have no end. ``swap_from``: from that
    step on, backward's 4th kernel is a split-K GEMM. ``extra``: a kernel launched first
    in the capture, in no range. ``nvtx``: False, no range at all (period steps)."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    t, launches, ranges = 1_000_000, [], []
    for step in range(1, NESTED_STEPS + 1):
        step_start, t = t, t + 2_000
        for label, names in PHASES:
            names = list(names)
            if label == "forward" and step <= 2:
                names.insert(2, "gemm_autotune")
            if label == "backward" and swap_from and step >= swap_from:
                names[3] = "gemm_o_dgrad_splitK"
            range_start = t
            for k, name in enumerate(names):
                launches.append((t, name, (64 + k, 1, 1), (step, label, k)))
                t += 60_000
            t += 2_000
            ranges.append((label, range_start, t))
        t += 5_000
        ranges.append(("train_step", step_start, t))
    at = {where: t for t, _n, _g, where in launches}
    lo = at[start_cut] - 1 if start_cut else 0
    hi = at[end_cut] - 1 if end_cut else t + 1
    if extra:
        launches.insert(0, (lo, extra, (1, 1, 1), None))
    for t, name, grid, _where in launches:
        if lo <= t < hi:
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 4_000, pid=PID)
            b.kernel(f"void {name}(float*)", start=t + 10_000, end=t + 50_000, pid=PID,
                     correlation_id=cid, grid=grid)  # fmt: skip
    for label, start, end in ranges if nvtx else ():
        if lo <= start < hi:
            b.nvtx_range(label, start=start, end=end if end < hi else None, pid=PID)
    return b.write(path)


END_CUT, START_CUT = (18, "backward", 3), (2, "forward", 3)


@pytest.mark.parametrize(
    "cut", [{"end_cut": END_CUT}, {"start_cut": START_CUT}, {"end_cut": END_CUT, "start_cut": START_CUT}],
    ids=["end", "start", "both"],
)  # fmt: skip
def test_a_capture_cut_inside_nested_step_ranges_follows_the_full_captures_path(
    tmp_path, capsys, cut
):
    """The launches of a step the capture ended inside had the open step range in their
    region ('train_step > forward', only in the cut capture), and those after the last NVTX
    event or before the first range of a capture started mid-step were in no range (a
    region only the cut capture holds): --check failed with kernels added. Those after the
    last NVTX event are in the ranges left open (format 7), as in the full capture, so they
    are compared with A's: only A's launches past them are in one capture (version 6 said
    'the last 106 launches of A and the last 3 launches of B')."""
    base = tmp_path / "full.json"
    _fingerprint(build_nested(tmp_path / "full.sqlite"), base, capsys)
    cut_trace = build_nested(tmp_path / "cut.sqlite", **cut)
    rc, out, err = run_cli(["fingerprint", cut_trace, "--check", base], capsys)
    assert rc == 0 and "follows" in out, out + err
    steps = 15 if len(cut) == 2 else 17 if "end_cut" in cut else 22  # B's
    if "end_cut" in cut:
        last = 113 if "start_cut" in cut else 103
        ended = f"A's last {last} launches are past its end, not compared\n"
        assert ended in out and "B's last" not in out, out
        if "start_cut" not in cut:
            assert f"B's capture ends earlier (it holds {steps} steps, A 24): {ended}" in out
    if "start_cut" in cut:  # the cut step's launches: a capture difference (in no range)
        assert (
            f". The captures start apart (A holds 24 steps, B {steps}): A's first 14 and B's "
            "first 4 launches are each before the other's start, region by region, not compared"
        ) in out, out


def test_a_cut_capture_in_nested_ranges_names_the_real_change_first(tmp_path, capsys):
    base = tmp_path / "full.json"
    _fingerprint(build_nested(tmp_path / "full.sqlite"), base, capsys)
    swapped = build_nested(tmp_path / "swap_cut.sqlite", end_cut=END_CUT, swap_from=12)
    rc, out, err = run_cli(["fingerprint", swapped, "--check", base], capsys)
    assert rc == 1, out + err
    first = next(line for line in out.splitlines() if line.startswith("first divergence"))
    assert "gemm_o_dgrad_splitK replaced gemm_o_dgrad" in first, out
    assert "added" not in out.split("changed regions:")[1], out


@pytest.mark.parametrize("nvtx", [True, False], ids=["ranges", "period"])
def test_a_cut_capture_with_a_new_kernel_before_its_first_step_is_caught(tmp_path, capsys, nvtx):
    """A launch of a kernel the full capture never runs, at the cut capture's start, is
    no capture difference: the launches before the first step are not the end of a step."""
    base = tmp_path / "full.json"
    _fingerprint(build_nested(tmp_path / "full.sqlite", nvtx=nvtx), base, capsys)
    cut = build_nested(tmp_path / "cut.sqlite", nvtx=nvtx, start_cut=START_CUT, extra="new_setup")
    rc, out, err = run_cli(["fingerprint", cut, "--check", base], capsys)
    assert rc == 1 and "new_setup" in out, out + err


def test_a_period_capture_started_mid_warm_up_follows_the_full_captures_path(tmp_path, capsys):
    """Without ranges the two warm-up steps are outside the period steps, and a capture
    started inside the second finds the same steps: its launches before them are the last
    of the full capture's (a later start), not 20 kernels removed."""
    base = tmp_path / "full.json"
    doc = _fingerprint(build_nested(tmp_path / "full.sqlite", nvtx=False), base, capsys)
    cut = build_nested(tmp_path / "cut.sqlite", nvtx=False, start_cut=START_CUT)
    assert _fingerprint(cut, tmp_path / "cut.json", capsys)["steps"] == doc["steps"]
    rc, out, err = run_cli(["fingerprint", cut, "--check", base], capsys)
    said = "B's capture starts later (it holds 22 steps, A 22): A's first 20 launches are before"
    assert rc == 0 and f"note: {said} its start, not compared\n" in out, out + err
