"""util and steps figures as --fail-if gates: `tracelens util --fail-if`, `tracelens steps
--fail-if`, and `tracelens diff --fail-if` (B's figures by name, A's with `_a`). The
fixture is built so that its figures are known from what was put in it: one device, a
2 ms NCCL kernel of which 0.5 ms runs under a compute kernel (1.5 ms exposed), then
ProfilerStep ranges of known lengths."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import NCCL_SENDRECV, XMMA_GEMM

import tracelens
from tracelens.synth import TraceBuilder
from tracelens.util import figures

PID = 4242
MS = 1_000_000


def build(path, *, hide_ns=MS // 2, step_ns=(1 * MS, 1 * MS, 1 * MS, 1 * MS, 1 * MS)):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")

    def launch(name, at, start, dur, stream=7):
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, pid=PID)
        b.kernel(name, start=start, end=start + dur, stream=stream, pid=PID, correlation_id=cid)

    t = 10 * MS
    launch(NCCL_SENDRECV, t - 1000, t, 2 * MS, stream=9)
    launch(XMMA_GEMM, t - 900, t + 2 * MS - hide_ns, hide_ns)  # hides the NCCL kernel's end
    t += 3 * MS
    for i, dur in enumerate(step_ns, start=1):
        b.nvtx_range(f"ProfilerStep#{i}", start=t, end=t + 100, pid=PID)
        launch(XMMA_GEMM, t + 10, t + 1000, dur)
        t += dur + 2 * MS
    b.write(path)
    return path


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The fixture of the module docstring, with its default figures."""
    path = tmp_path_factory.mktemp("gates") / "gates.sqlite"
    return build(path)


def test_the_figures_are_what_was_built(traced):
    with tracelens.open(traced) as trace:
        f = figures(trace)
    assert f["exposed_communication_ms"] == pytest.approx(1.5)
    assert f["steps"] == 5 and f["step_median_ms"] == pytest.approx(1.0)


def test_util_fail_if(traced, capsys):
    rc, out, err = run_cli(["util", str(traced), "--fail-if", "exposed_communication_ms>1"], capsys)
    assert rc == 1 and out.startswith("util of gates.sqlite")  # the output comes first
    assert err == (
        "tracelens: gate tripped: exposed_communication_ms>1 (exposed_communication_ms = 1.5)\n"
    )
    rc, out, err = run_cli(
        ["util", str(traced), "--fail-if", "exposed_communication_ms>2", "-f", "json"], capsys
    )
    assert (rc, err) == (0, "")
    with tracelens.open(traced) as trace:
        util = trace.util().figures()["util"]
    rc, _, err = run_cli(["util", str(traced), "--fail-if", "util<0.99"], capsys)
    assert rc == 1 and err == f"tracelens: gate tripped: util<0.99 (util = {util:.4g})\n"
    # A step's figures: step 2 alone is one kernel with no communication.
    rc, _, err = run_cli(
        ["util", str(traced), "--step", "2", "--fail-if", "exposed_communication_ms>0"], capsys
    )
    assert (rc, err) == (0, "")


def test_steps_fail_if(traced, capsys):
    rc, out, err = run_cli(["steps", str(traced), "--fail-if", "step_median_ms>0.9"], capsys)
    assert rc == 1 and "5 steps from 5 NVTX ranges" in out
    assert err == "tracelens: gate tripped: step_median_ms>0.9 (step_median_ms = 1)\n"
    rc, out, err = run_cli(["steps", str(traced), "--fail-if", "util<0.8"], capsys)
    assert (rc, out) == (2, "")
    assert err == (
        "tracelens: --fail-if: unknown figure 'util'; known: level_shift, level_shift_ratio, "
        "outlier_steps, step_median_ms, step_p90_ms, step_std_ms, steps, warmup_steps\n"
    )


def test_a_result_without_figures(tmp_path, capsys):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python once.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    cid = b.runtime("cudaLaunchKernel_v7000", start=100, end=105)
    b.kernel(XMMA_GEMM, start=1000, end=2000, correlation_id=cid)
    path = b.write(tmp_path / "one.sqlite")
    rc, out, err = run_cli(["steps", str(path), "--fail-if", "steps<1"], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: --fail-if: steps was not measured: no steps found\n"
    # util's gates on the steps figures: not measured either (was "unknown figure")
    rc, out, err = run_cli(["util", str(path), "--fail-if", "step_median_ms>1"], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: --fail-if: step_median_ms was not measured: no steps found\n"
    # a figure no result has is still unknown
    rc, out, err = run_cli(["util", str(path), "--fail-if", "speed>1"], capsys)
    assert rc == 2 and err.startswith("tracelens: --fail-if: unknown figure 'speed'; known: ")


def graph_replays(tmp_path):
    """The reviewer's gen_graph_comm.py, smaller: 3 eager kernels, then 20 CUDA graph
    replays of 5 ms traced at graph level (their kernels, a tensor-parallel AllReduce among
    them in the real program, are in no table)."""
    from fixtures.builder import add_graph_replays

    from tracelens.synth import global_pid

    b = TraceBuilder("3.0.0")
    b.process(PID, "python -m vllm.entrypoints.openai.api_server --tensor-parallel-size 2")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(3):
        at = 100 + i * 50_000
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 1_900, pid=PID)
        b.kernel(XMMA_GEMM, start=at + 4_900, end=at + 14_900, pid=PID, correlation_id=cid)
    for i in range(20):
        at = 200_000 + i * 6 * MS
        b.runtime(
            "cudaGraphLaunch_v10000", start=at, end=at + 10_000, pid=PID, correlation_id=10_000 + i
        )
    path = b.write(tmp_path / "graphs.sqlite")
    rows = [
        (300_000 + i * 6 * MS, 5_300_000 + i * 6 * MS, 0, 1, None, 7, 10_000 + i, global_pid(PID), 3, 4)
        for i in range(20)
    ]  # fmt: skip
    add_graph_replays(path, rows)
    return path


def test_communication_hidden_in_graph_replays_is_not_measured(tmp_path, capsys):
    """No kernel is communication, yet the replays may run some: exposed communication
    (and memory) cannot be measured, and a gate on it fails so (it passed at 0 ms)."""
    path = graph_replays(tmp_path)
    why = (
        "CUDA graph replays traced at graph level run communication and copies that the "
        "export does not list (profile with --cuda-graph-trace=node)\n"
    )
    for fmt in ("table", "csv"):
        gate = ["--fail-if", "exposed_communication_ms>1", "-f", fmt]
        rc, out, err = run_cli(["util", str(path), *gate], capsys)
        assert (rc, out) == (2, "")
        assert err == "tracelens: --fail-if: exposed_communication_ms was not measured: " + why
    with tracelens.open(path) as trace:
        f = figures(trace)
    assert f.not_measured["exposed_memory_ms"] == why.strip()
    assert "exposed_communication_ms" not in f and f["util"] > 0.8  # busy is measured
    rc, _, err = run_cli(["util", str(path), "--fail-if", "util<0.5"], capsys)
    assert (rc, err) == (0, "")
    # csv has no place for util's notes: the replays' note is on stderr
    rc, _, err = run_cli(["util", str(path), "-f", "csv"], capsys)
    assert rc == 0
    assert err == (
        "tracelens: note: 20 CUDA graph replays traced at graph level count as compute: the "
        "export does not list their kernels (profile with --cuda-graph-trace=node)\n"
    )
    # diff: the side with the replays (B) does not measure it; A does
    other = build(tmp_path / "a.sqlite")
    rc, _, err = run_cli(
        ["diff", str(other), str(path), "--fail-if", "exposed_memory_ms>0"], capsys
    )
    assert rc == 2 and err == "tracelens: --fail-if: exposed_memory_ms was not measured: " + why
    gate = "exposed_communication_ms_a>1"
    rc, _, err = run_cli(["diff", str(other), str(path), "--fail-if", gate], capsys)
    assert rc == 1 and err.startswith(f"tracelens: gate tripped: {gate}")


def test_diff_gates_on_each_sides_figures(tmp_path, capsys):
    a = build(tmp_path / "a.sqlite", hide_ns=MS)  # 1 ms exposed
    b = build(tmp_path / "b.sqlite", hide_ns=MS // 4, step_ns=(2 * MS,) * 5)  # 1.75 ms
    gates = ["exposed_communication_ms>1.5", "exposed_communication_ms_a>1.5", "step_median_ms>1.5"]
    rc, _, err = run_cli(["diff", str(a), str(b), *[f"--fail-if={g}" for g in gates]], capsys)
    assert rc == 1
    assert err == (
        "tracelens: gate tripped: exposed_communication_ms>1.5 (exposed_communication_ms = 1.75)\n"
        "tracelens: gate tripped: step_median_ms>1.5 (step_median_ms = 2)\n"
    )
    rc, _, err = run_cli(["diff", str(a), str(b), "--fail-if", "step_median_ms_a>1.5"], capsys)
    assert (rc, err) == (0, "")
