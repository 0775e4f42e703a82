"""The fingerprint's period steps hold the launches the step search put in them, in host
launch order: a collective launched last in a step whose stream runs behind starts inside
the next step's GPU window, and is still its own step's (two runs of one program that
differ only in that timing have the same fingerprint); a kernel switched in such a run is
still found. Steps from NVTX ranges hold the launches whose call their range holds."""

from __future__ import annotations

import importlib

from conftest import run_cli
from fixtures.builder import FILL, FLASH_FWD, NCCL_SENDRECV, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens import fingerprint as fp
from tracelens.fingerprint import nvtxpaths

PID = 4242
STEPS = 20
GEMM_B = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
COMPUTE = [(XMMA_GEMM, 40_000), (FILL, 2_000), (FLASH_FWD, 30_000), (XMMA_GEMM, 40_000)]


def build(tmp_path, stem, lagging=(), switched=()):
    """``STEPS`` steps: the compute kernels on stream 7, then a collective on stream 13,
    launched last. It starts beside the step's first GEMM, or, in the steps ``lagging``
    lists (from 0), after the next step's first kernel started. Steps in ``switched`` run
    another GEMM last."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for i in range(STEPS):
        first = t
        for k, (name, dur) in enumerate(COMPUTE):
            r.kernel(GEMM_B if i in switched and k == 3 else name, t, dur, pid=PID, stream=7)
            t += dur + 1_000
        t += 50_000  # the host's gap between steps
        at = t + 20_000 if i in lagging else first + 5_000
        r.kernel(NCCL_SENDRECV, at, 30_000, pid=PID, stream=13)
    return r.write(tmp_path, stem).path


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def test_a_collective_that_starts_in_the_next_steps_window_stays_in_its_step(tmp_path, capsys):
    a = build(tmp_path, "a")
    b = build(tmp_path, "b", lagging=(3, 7, 11))
    with tracelens.open(b) as trace:
        steps = trace.steps()
    # the case at hand: B's step 4 (the 4th, from 1) ends after step 5 starts
    frame = steps.frame.sort("step")
    assert steps.method == "period" and frame["end_ns"][3] > frame["start_ns"][4]
    doc_a, doc_b = _doc(a), _doc(b)
    assert doc_b["steps"] == doc_a["steps"] == {"method": "period", "count": STEPS}
    assert fp.dumps(doc_a) == fp.dumps(doc_b)  # GPU windows moved B's collective a step on
    base = tmp_path / "a.json"
    assert run_cli(["fingerprint", a, "-o", base], capsys)[0] == 0
    rc, out, _ = run_cli(["fingerprint", b, "--check", base], capsys)
    assert rc == 0 and "follows" in out
    other = tmp_path / "b.json"
    assert run_cli(["fingerprint", b, "-o", other], capsys)[0] == 0
    rc, out, _ = run_cli(["diff", base, other, "--fail-if", "path_changed"], capsys)
    assert rc == 0 and "follows" in out


def test_a_switched_kernel_in_a_lagging_run_is_still_found(tmp_path):
    a = _doc(build(tmp_path, "a"))
    b = _doc(build(tmp_path, "b", lagging=(3, 7, 11), switched=(5,)))
    diff = fp.compare(a, b)
    assert diff.figures["path_changed"] == 1
    (region,) = diff.regions
    assert region.steps == (6,)
    (change,) = region.changes
    assert change.kind == "variant" and change.position == 4
    assert "segment_k_off" in change.b.name


def test_steps_not_found_on_these_launches_keep_their_gpu_windows(tmp_path):
    """Steps whose figures no block of the launch sequence has (found on other launches)
    leave the launches to the GPU windows (host_order_steps says None); the found ones put
    each launch of a complete period in its block's step."""
    from dataclasses import replace

    import polars as pl

    from tracelens.fingerprint import members, units

    with tracelens.open(build(tmp_path, "a", lagging=(3,))) as trace:
        steps = trace.steps()
        nvtxpaths.create_paths(trace)  # fp_paths: empty, the fixture has no NVTX
        launches = units.read_launches(trace, paths=False)
    order = importlib.import_module("tracelens.fingerprint.order").launch_order(launches)
    step, found = members.host_order_steps(launches, order, steps)
    assert found.all()
    # launches in correlation order: the collective launched 5th is its step's last launch
    in_host_order = step.gather(launches["correlation_id"].arg_sort())
    per_step = len(COMPUTE) + 1
    numbered = in_host_order.drop_nulls()
    assert numbered.len() == steps.count * per_step
    assert numbered.to_list() == [s for s in range(1, steps.count + 1) for _ in range(per_step)]
    moved = replace(steps, frame=steps.frame.with_columns(pl.col("start_ns") + 1))
    assert members.host_order_steps(launches, order, moved) is None


def build_nvtx(path, lagging=()):
    """``STEPS`` 'step N' NVTX ranges on the host, each launching the compute kernels on
    stream 7 then a collective on stream 13, whose GPU start is beside the step's first
    GEMM, or, in the steps ``lagging`` lists, after the next step's first kernel started."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    step_ns = 400_000
    for i in range(STEPS):
        cpu = 1_000_000 + i * step_ns
        gpu = cpu + 50_000
        b.nvtx_range(f"step {i}", start=cpu, end=cpu + 100_000, pid=PID)
        t = gpu
        for k, (name, dur) in enumerate(COMPUTE):
            cid = b.runtime(
                "cudaLaunchKernel_v7000",
                start=cpu + k * 10_000 + 1_000,
                end=cpu + k * 10_000 + 5_000,
                pid=PID,
            )
            b.kernel(name, start=t, end=t + dur, pid=PID, correlation_id=cid, stream=7)
            t += dur + 1_000
        at = gpu + step_ns + 20_000 if i in lagging else gpu + 5_000
        cid = b.runtime("cudaLaunchKernel_v7000", start=cpu + 60_000, end=cpu + 65_000, pid=PID)
        b.kernel(NCCL_SENDRECV, start=at, end=at + 30_000, pid=PID, correlation_id=cid, stream=13)
    b.write(path)
    return path


def test_a_collective_launched_in_a_steps_range_stays_in_that_step(tmp_path):
    """Steps from NVTX ranges: a launch is in the step whose range holds its call (the rule
    of `steps --steps`), not in the GPU window its start falls in."""
    a = build_nvtx(tmp_path / "a.sqlite")
    b = build_nvtx(tmp_path / "b.sqlite", lagging=(3, 7, 11))
    with tracelens.open(b) as trace:
        steps = trace.steps()
    frame = steps.frame.sort("step")
    assert steps.method == "marker" and frame["end_ns"][3] > frame["start_ns"][4]
    doc_a, doc_b = _doc(a), _doc(b)
    assert doc_a["steps"] == {"method": "marker", "count": STEPS}
    assert fp.dumps(doc_a) == fp.dumps(doc_b)
    assert fp.compare(doc_a, doc_b).identical


def test_range_steps_put_each_launch_in_the_step_of_its_call(tmp_path):
    """members.range_steps: each launch in the step whose range holds its call, the lagging
    collective (GPU start in the next step's window) too, found by the call's key."""
    from tracelens.fingerprint import members, units

    with tracelens.open(build_nvtx(tmp_path / "b.sqlite", lagging=(3,))) as trace:
        steps = trace.steps()
        nvtxpaths.create_paths(trace)
        launches = units.read_launches(trace)
        step = members.range_steps(trace, launches, steps)
    by_call = step.gather(launches["correlation_id"].arg_sort()).to_list()
    per_step = len(COMPUTE) + 1
    assert by_call == [s for s in range(1, STEPS + 1) for _ in range(per_step)]


def _steps_by_join(keys, call_keys, call_steps):
    import polars as pl

    calls = pl.DataFrame({"launch": call_keys, "step": call_steps})
    frame = keys.to_frame("launch").join(calls, on="launch", how="left", maintain_order="left")
    return frame["step"]


def test_step_by_key_is_the_join_of_launches_with_their_calls(monkeypatch):
    """members._step_by_key (a dense table of (process, correlation id) slots) gives each
    launch key the step a join with the calls gives: launches of a process no call is of,
    correlation ids past the calls' on either side and NULL keys get none; ids too sparse
    for the table (a small floor here) take the join, and no calls give every launch none."""
    import polars as pl

    from tracelens.fingerprint import members

    pid = 2**32
    call_keys = pl.Series([3 * pid + 5, 3 * pid + 9, 7 * pid + 1, 7 * pid + 6, 9 * pid + 2])
    call_steps = pl.Series([1, 2, 1, None, 4], dtype=pl.Int64)
    keys = pl.Series(
        [7 * pid + 1, 3 * pid + 9, 3 * pid + 5, 5 * pid + 5, 3 * pid + 4, 3 * pid + 10, None]
        + [7 * pid + 6, 9 * pid + 2, 11 * pid + 2, 3 * pid + 6, 9 * pid + 1],
        dtype=pl.Int64,
    )
    expected = _steps_by_join(keys, call_keys, call_steps)
    assert expected.to_list() == [1, 2, 1, None, None, None, None, None, 4, None, None, None]
    assert members._step_by_key(keys, call_keys, call_steps).to_list() == expected.to_list()
    monkeypatch.setattr(members, "_SLOTS_FLOOR", 4)  # 3 processes x 9 ids: past 4 per call
    assert members._step_by_key(keys, call_keys, call_steps).to_list() == expected.to_list()
    none = members._step_by_key(keys, call_keys.clear(), call_steps.clear())
    assert none.to_list() == [None] * keys.len() and none.dtype == pl.Int64
