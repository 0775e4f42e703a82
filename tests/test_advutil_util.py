"""Adversarial review of `tracelens util`: what held is in the report; here what did not.
One CUDA graph replay traced at graph level was '1 CUDA graph replays traced at graph level
count as compute: the export does not list their kernels'."""

from __future__ import annotations

from conftest import run_cli
from fixtures.builder import XMMA_GEMM, add_graph_replays

from tracelens.synth import TraceBuilder, global_pid

PID = 4242


def replays(tmp_path, count):
    """An eager GEMM [1000, 2000) then ``count`` graph-level replays of 700 ns, 1 µs apart."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    cid = b.runtime("cudaLaunchKernel_v7000", start=900, end=905, pid=PID)
    b.kernel(XMMA_GEMM, start=1_000, end=2_000, pid=PID, correlation_id=cid)
    rows = []
    for i in range(count):
        at = 2_100 + i * 1_000
        b.runtime(
            "cudaGraphLaunch_v10000", start=at, end=at + 50, pid=PID, correlation_id=10_000 + i
        )
        rows.append((at + 200, at + 900, 0, 1, None, 7, 10_000 + i, global_pid(PID), 3, 4))
    path = b.write(tmp_path / f"replays_{count}.sqlite")
    add_graph_replays(path, rows)
    return path


def test_the_replay_note_counts_one_replay_as_one(tmp_path, capsys):
    rc, _, err = run_cli(["util", replays(tmp_path, 1), "-f", "csv"], capsys)
    assert (rc, err) == (
        0,
        "tracelens: note: 1 CUDA graph replay traced at graph level counts as compute: the "
        "export does not list its kernels (profile with --cuda-graph-trace=node)\n",
    )
    rc, _, err = run_cli(["util", replays(tmp_path, 2), "-f", "csv"], capsys)
    assert (rc, err) == (
        0,
        "tracelens: note: 2 CUDA graph replays traced at graph level count as compute: the "
        "export does not list their kernels (profile with --cuda-graph-trace=node)\n",
    )
