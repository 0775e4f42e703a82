"""--nvtx X with --step N: the trace's step N, intersected with X's work. The steps are
found on the whole trace (not inside X's work, where X's own ranges or their period would
become the steps, numbered from 1), so N is the number `tracelens steps` prints, and a step
that holds none of X's work is one line, exit 2.

Two fixtures, expected values from what was put in them:
- period: 8 steps found from the launch period (kernels a, b, c; no step ranges); an NVTX
  range 'ckpt' around c's launch and a copy in even steps only; c lasts 10 us x the step
  number, the copy moves 1,000 bytes x the step number.
- nested: 6 'train_step' ranges with nested 'attn' and 'mlp'; a nested 'eval' range (one
  kernel, 30 us) in step 4 only: on its own, one range, no step structure.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder

PID = 100
C_NS = 10_000  # c of step s lasts s * C_NS
EVAL_NS = 30_000
COPY_BYTES = 1_000  # the copy in step s's 'ckpt' range moves s * COPY_BYTES


def _launch(b: TraceBuilder, name: str, t: int, duration: int, lag: int) -> None:
    cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 3_000, pid=PID)
    b.kernel(name, start=t + lag, end=t + lag + duration, pid=PID, correlation_id=cid)


def build_period(path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python t.py")
    b.gpu(0)
    for s in range(1, 9):
        t = 1_000_000 + s * 1_000_000
        _launch(b, "void a_k(float*)", t, 200_000, 50_000)
        _launch(b, "void b_k(float*)", t + 300_000, 200_000, 50_000)
        if s % 2 == 0:
            b.nvtx_range("ckpt", start=t + 590_000, end=t + 700_000, pid=PID)
            cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 650_000, end=t + 653_000, pid=PID)
            b.memcpy("DtoH", COPY_BYTES * s, start=t + 900_000, end=t + 910_000, pid=PID,
                     correlation_id=cid)  # fmt: skip
        _launch(b, "void c_k(float*)", t + 600_000, C_NS * s, 50_000)
    return b.write(path)


def build_nested(path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python t.py")
    b.gpu(0)
    for s in range(1, 7):
        t = s * 1_000_000
        b.nvtx_range("train_step", start=t, end=t + 900_000, pid=PID)
        b.nvtx_range("attn", start=t + 10_000, end=t + 100_000, pid=PID)
        _launch(b, "void attn_k(float*)", t + 20_000, 50_000, 200_000)
        b.nvtx_range("mlp", start=t + 200_000, end=t + 300_000, pid=PID)
        _launch(b, "void mlp_k(float*)", t + 210_000, 80_000, 200_000)
        if s == 4:
            b.nvtx_range("eval", start=t + 400_000, end=t + 500_000, pid=PID)
            _launch(b, "void eval_k(float*)", t + 410_000, EVAL_NS, 200_000)
    return b.write(path)


@pytest.fixture(scope="module")
def period(tmp_path_factory):
    return build_period(tmp_path_factory.mktemp("nvtxstep") / "period.sqlite")


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    return build_nested(tmp_path_factory.mktemp("nvtxstep") / "nested.sqlite")


def _kernels(census) -> dict[str, int]:
    return dict(zip(census["name"].to_list(), census["total_ns"].to_list(), strict=True))


@pytest.mark.parametrize("step", [2, 4, 6, 8])
def test_period_step_keeps_the_traces_number(period, step):
    with tracelens.open(period) as trace:
        assert trace.steps().count == 8
        assert _kernels(trace.census(nvtx="ckpt", step=step)) == {"void c_k(float*)": C_NS * step}
        util = trace.util(nvtx="ckpt", step=step).frame
        copies = trace.memory_size(nvtx="ckpt", step=step)
    assert util["compute_ns"].to_list() == [C_NS * step]
    assert copies["total_bytes"].sum() == COPY_BYTES * step


@pytest.mark.parametrize("step", [1, 3, 5, 7])
def test_step_without_the_selected_work_is_an_error(period, step):
    with tracelens.open(period) as trace, pytest.raises(UsageError) as caught:
        trace.census(nvtx="ckpt", step=step)
    assert f"none of the GPU work of step {step} is in the rest of the selection" in str(
        caught.value
    )


def test_selected_work_of_one_range_in_nvtx_steps(nested):
    with tracelens.open(nested) as trace:
        assert trace.steps().count == 6
        assert _kernels(trace.census(nvtx="eval", step=4)) == {"void eval_k(float*)": EVAL_NS}
        with pytest.raises(UsageError, match="none of the GPU work of step 3 is in"):
            trace.census(nvtx="eval", step=3)
        # the steps of a glob that repeats: still the trace's steps
        assert _kernels(trace.census(nvtx="attn", steps="2:3")) == {"void attn_k(float*)": 100_000}


@pytest.mark.parametrize(
    "command", [["census"], ["lineup"], ["memory"], ["danger"], ["timeline"], ["util"]]
)
def test_every_command_numbers_the_traces_steps(period, capsys, command):
    args = [command[0], str(period), *command[1:], "--no-cache", "--nvtx", "ckpt"]
    rc, out, err = run_cli([*args, "--step", "4", "-f", "csv"], capsys)
    assert rc == 0, err
    assert "only the GPU work of step 4 of 8 (steps from the period" in err + out
    rc, out, err = run_cli([*args, "--step", "3"], capsys)
    assert (rc, out) == (2, "")
    assert err.strip().endswith("none of the GPU work of step 3 is in the rest of the selection")


def test_per_step_census_and_diff(period, capsys):
    rc, out, err = run_cli(
        ["census", period, "--no-cache", "--nvtx", "ckpt", "--steps", "4:6", "--per-step"],
        capsys,
    )
    assert rc == 0, err
    assert "steps 4 to 6 of 8" in out
    rc, out, err = run_cli(
        ["diff", period, period, "--no-cache", "--nvtx", "ckpt", "--step", "4", "-f", "json"],
        capsys,
    )
    assert rc == 0, err
    assert "step 4 of 8" in out
