"""report --format markdown of one trace says what its figures leave out, as the page's
'not in this report' row does. review4: on the real graph-traced export (10 replays, 7.81 s
of GPU time) the CI summary said 'Kernel time 78.27 us', 'GPU time 78.27 us' and
'elementwise 100.0%' with no word of the replays; damaged records went unmentioned too."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import needs_shared, run_cli, shared_traces
from fixtures.builder import add_graph_replays

from tracelens.synth import TraceBuilder, global_pid

PID = 4242


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """One 10 us kernel, a 500 us CUDA graph replay traced at graph level, and a kernel
    record that ends before it starts."""
    path = tmp_path_factory.mktemp("replayed") / "replayed.sqlite"
    b = TraceBuilder("3.24.18")
    b.process(PID, "python app.py")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000_000, end=1_001_000, pid=PID)
    b.kernel("k", start=1_002_000, end=1_012_000, correlation_id=cid, pid=PID)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_020_000, end=1_021_000, pid=PID)
    b.kernel("broken", start=1_030_000, end=1_040_000, correlation_id=cid, pid=PID)
    cid = b.runtime("cudaGraphLaunch_v10000", start=1_100_000, end=1_110_000, pid=PID)
    b.write(path)
    add_graph_replays(path, [(1_150_000, 1_650_000, 0, 1, None, 7, cid, global_pid(PID), 1, 1)])
    con = sqlite3.connect(path)
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE start = 1030000")
    con.commit()
    con.close()
    return path


def test_markdown_names_graph_replays_and_damaged_records(replayed, capsys):
    rc, out, err = run_cli(["report", replayed, "-f", "markdown"], capsys)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    graph = (
        "_Note: 1 CUDA graph replay (500.0 µs of GPU time) is not broken down by kernel and "
        "is not in these numbers; profile with --cuda-graph-trace=node to see its kernels._"
    )
    damaged = "_Note: 1 kernel record ends before it starts (damaged export): left out._"
    assert graph in lines and damaged in lines
    # before the figures they qualify
    assert lines.index(graph) < lines.index("Kernel time 10.00 µs in 1 distinct kernels.")


def test_markdown_of_a_clean_trace_has_no_note(tmp_path, capsys):
    b = TraceBuilder("3.24.18")
    b.process(PID, "python app.py")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000_000, end=1_001_000, pid=PID)
    b.kernel("k", start=1_002_000, end=1_012_000, correlation_id=cid, pid=PID)
    path = b.write(tmp_path / "clean.sqlite")
    rc, out, _ = run_cli(["report", path, "-f", "markdown"], capsys)
    assert rc == 0 and "_Note:" not in out


@needs_shared
def test_real_graph_traced_export(capsys):
    (path,) = [p for p in shared_traces() if p.stem == "nsys2024.6_a100_2.7B_cudagraph"]
    rc, out, _ = run_cli(["report", path, "-f", "markdown"], capsys)
    assert rc == 0
    assert "_Note: 10 CUDA graph replays (7.81 s of GPU time) are not broken down" in out
