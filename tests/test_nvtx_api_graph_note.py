"""nvtx --kernels and api --exec list kernels; CUDA graph replays traced at graph level
record none, so both say what they leave out, as census, lineup, danger, stakeout and decode
do (a last 'note: ...' line; on stderr for csv and json). Before, a range that launched only
a graph replay was silently missing from nvtx --kernels, and api --exec listed the kernels
as if they were all the GPU work. nvtx --gpu counts each replay as a GPU operation, where
nsys does not: it says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from fixtures.builder import add_graph_replays

from tracelens.synth import TraceBuilder, global_pid

PID = 7
US = 1_000
NOTE = (
    "3 CUDA graph replays (1.50 ms of GPU time) are not broken down by kernel and are not in "
    "these numbers; profile with --cuda-graph-trace=node to see their kernels"
)


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> Path:
    """3 'step' ranges, each launching k_pre and, inside 'graph', a 500 µs graph replay."""
    path = tmp_path_factory.mktemp("graph_nvtx") / "steps.sqlite"
    b = TraceBuilder("3.24.18")
    b.process(PID, "python app.py")
    b.gpu(0)
    replays = []
    for step in range(3):
        t0 = (1 + step) * 1_000 * US
        b.nvtx_range("step", start=t0, end=t0 + 900 * US)
        cid = b.runtime("cudaLaunchKernel_v7000", start=t0 + 10 * US, end=t0 + 11 * US)
        b.kernel("k_pre", start=t0 + 20 * US, end=t0 + 30 * US, correlation_id=cid)
        b.nvtx_range("graph", start=t0 + 100 * US, end=t0 + 200 * US)
        cid = b.runtime("cudaGraphLaunch_v10000", start=t0 + 110 * US, end=t0 + 120 * US)
        # start, end, deviceId, contextId, greenContextId, streamId, correlationId,
        # globalPid, graphId, graphExecId
        replays.append((t0 + 150 * US, t0 + 650 * US, 0, 1, None, 7, cid, global_pid(PID), 1, 1))
    b.write(path)
    add_graph_replays(path, replays)
    return path


@pytest.mark.parametrize("args", [["nvtx", "--kernels"], ["api", "--exec"]])
def test_kernel_lists_say_the_graph_replays_are_left_out(steps, capsys, args):
    rc, out, err = run_cli([args[0], steps, *args[1:]], capsys)
    assert rc == 0 and err == ""
    assert "k_pre" in out and out.endswith("\nnote: " + NOTE + "\n")
    rc, out, err = run_cli([args[0], steps, *args[1:], "-f", "csv"], capsys)
    assert rc == 0 and err == f"tracelens: note: {NOTE}\n" and "note" not in out


GPU_NOTE = (
    "3 CUDA graph replays traced at graph level are in these numbers as one GPU operation "
    "each, not broken down by kernel (nsys's nvtx_gpu_proj leaves graph replays out)"
)


@pytest.mark.parametrize("each", [[], ["--each"]])
def test_the_projection_says_it_counts_the_replays_where_nsys_does_not(steps, capsys, each):
    """--gpu projects a replay as one GPU operation of the 'graph' range (nsys's
    nvtx_gpu_proj has no 'graph' row): it says so, as the other notes are said."""
    rc, out, err = run_cli(["nvtx", steps, "--gpu", *each], capsys)
    assert rc == 0 and err == "" and "graph" in out
    assert out.endswith("\nnote: " + GPU_NOTE + "\n")
    rc, out, err = run_cli(["nvtx", steps, "--gpu", *each, "-f", "json"], capsys)
    assert rc == 0 and err == f"tracelens: note: {GPU_NOTE}\n" and "note" not in out


@pytest.mark.parametrize("args", [["nvtx"], ["nvtx", "--style", "pushpop"], ["api"]])
def test_reports_of_cpu_time_carry_no_note(steps, capsys, args):
    """CPU times of ranges and API calls leave nothing out."""
    rc, out, err = run_cli([args[0], steps, *args[1:]], capsys)
    assert rc == 0 and err == "" and "note:" not in out


def test_api_exec_note_follows_pid(steps, capsys):
    rc, out, err = run_cli(["api", steps, "--exec", "--pid", str(PID + 1)], capsys)
    assert rc == 0 and "note:" not in out and "note:" not in err
