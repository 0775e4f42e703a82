"""Steps of a loop of CUDA graph launches traced node by node (nsys --cuda-graph-trace=node):
every kernel of a replay carries its launch's correlation id. A step's kernels and kernel
time, and its top kernels' launches and time, count each kernel once, with a filter or
without: joined to the steps' work by correlation id, each was counted once per kernel of
its graph (a 4-kernel graph: 16 kernels a step, each top kernel 4 calls)."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder

PID = 10
NAMES = ("void gemm_a(int)", "void softmax_b(int)", "void gemm_c(int)", "void add_d(int)")
STEPS = 40


def _graph_loop(path):
    b = TraceBuilder("3.23.3")
    b.process(PID, "python serve.py")
    b.gpu(0)
    t = 1_000_000
    for _ in range(STEPS):
        cid = b.runtime("cudaGraphLaunch_v10000", start=t, end=t + 500, pid=PID, tid=PID)
        k = t + 1_000
        for node, name in enumerate(NAMES, start=1):
            dur = 10_000 * node
            b.kernel(name, start=k, end=k + dur, pid=PID, correlation_id=cid, graph_id=1,
                     graph_node_id=node)  # fmt: skip
            k += dur + 500
        t = k + 3_000_000
    return b.write(path)


@pytest.mark.parametrize(
    "where", [None, EventFilter(pid=PID), EventFilter(start_ns=0)], ids=["whole", "pid", "from"]
)
def test_each_kernel_of_a_graph_counts_once(tmp_path, where):
    path = _graph_loop(tmp_path / "graphs.sqlite")
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps(where=where, top_kernels=4)
    assert steps.count == STEPS
    rows = steps.frame.filter(steps.frame["step"] == 3).row(0, named=True)
    assert (rows["kernels"], rows["kernel_ns"]) == (4, 100_000)
    top = steps.top_kernels.filter(steps.top_kernels["step"] == 3)
    assert top.select("name", "calls", "total_ns").rows() == [
        ("void add_d(int)", 1, 40_000),
        ("void gemm_c(int)", 1, 30_000),
        ("void softmax_b(int)", 1, 20_000),
        ("void gemm_a(int)", 1, 10_000),
    ]
