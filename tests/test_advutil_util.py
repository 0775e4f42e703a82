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


def test_a_device_whose_only_kernel_lasted_0_ns_is_not_said_to_have_run_none(tmp_path, capsys):
    """Device 1 ran one kernel of 0 ns (no busy time): util lists it as an opened device
    without work, all idle, whose note said it 'ran no kernel, memcpy or memset in the
    window', which it did."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    for device in (0, 1):
        b.gpu(device, "NVIDIA H100 80GB HBM3")
        ids = {"hwId": 0, "vmId": 0, "processId": PID, "deviceId": device}
        b.add_row("TARGET_INFO_CUDA_NULL_STREAM", streamId=7, contextId=device + 1, **ids)
    for device, start, end in ((0, 1_000, 2_000), (1, 1_500, 1_500), (0, 3_000, 4_000)):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 100, end=start - 95, pid=PID)
        b.kernel(
            XMMA_GEMM, start=start, end=end, pid=PID, device=device, context=device + 1,
            correlation_id=cid,
        )  # fmt: skip
    path = b.write(tmp_path / "instant.sqlite")
    rc, out, err = run_cli(["util", path, "-f", "csv"], capsys)
    assert rc == 0 and out.splitlines()[2].startswith("1,3100,0,3100,")
    assert err.startswith(
        "tracelens: note: device 1: a traced process had a CUDA context on it but it ran no "
        "kernel, memcpy or memset in the window (or only ones of 0 ns): its whole span is idle "
        "(counted as before_first); "
    )
