"""Golden tests of the util query files, on a tiny trace built here: compute on stream 7,
an NCCL all-reduce overlapping it on stream 8, a copy alone, a launch-bound gap, a gap
while the host sat in cudaStreamSynchronize, and a second device with a copy kernel."""

from __future__ import annotations

import pytest
from fixtures.builder import DIRECT_COPY, XMMA_GEMM

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens.synth import TraceBuilder
from tracelens.util import sync_api_regex, work_params
from tracelens.util_sweep import communication_sweep, device_sweep

PID = 5150
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    t = 1_000_000

    def launch(name, start, end, at, *, device=0, stream=7):
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 10, pid=PID)
        b.kernel(name, start=start, end=end, device=device, stream=stream, correlation_id=cid)

    launch(XMMA_GEMM, t, t + 100, t - 50)
    launch(ALLREDUCE, t + 50, t + 150, t - 40, stream=8)
    cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 250, end=t + 260, pid=PID)
    b.memcpy("DtoD", 4096, start=t + 300, end=t + 320, correlation_id=cid)
    b.runtime("cudaStreamSynchronize_v3020", start=t + 330, end=t + 380, pid=PID)
    launch(XMMA_GEMM, t + 400, t + 500, t + 390)
    launch(DIRECT_COPY, t + 10, t + 30, t - 30, device=1)
    b.nvtx_range("ncclAllReduce", start=t - 45, end=t - 35, pid=PID)
    path = tmp_path_factory.mktemp("util") / "util_golden.sqlite"
    b.write(path)
    return path


def _params(path, **where):
    from tracelens.filters import EventFilter

    with tracelens.open(path) as trace:
        return work_params(trace, EventFilter(**where))


def test_util_kernel_names(trace_path):
    assert_golden(trace_path, "util_kernel_names", "three_names")


def test_util_name_texts(trace_path):
    """Repeats and NULLs are ignored; an id StringIds lacks gets a placeholder name."""
    assert_golden(trace_path, "util_name_texts", "two_and_unknown", ids=[6, 2, 6, None, 999])


def test_util_window(trace_path):
    """From the first API call (1_000_000 - 50) to the last end (the kernel at +500)."""
    assert_golden(trace_path, "util_window", "span", gpu=True)


def test_util_window_without_gpu(trace_path):
    """The GPU tables left out: to the end of the last API call (the launch at +390)."""
    assert_golden(trace_path, "util_window", "api_and_nvtx", gpu=False)


def test_work_in_order(trace_path):
    """The query's rows as util.work_in_order sorts them (the query leaves the order to it)."""
    from tracelens.util import work_in_order

    with tracelens.open(trace_path) as trace:
        actual = work_in_order(trace).write_csv()
    assert actual == (GOLDEN / "work_in_order__util.csv").read_text()


def test_util_work(trace_path):
    """The query's rows as util.read_work sorts them (by device and start; no two operations
    of a device start together here)."""
    from tracelens.util import read_work

    with tracelens.open(trace_path) as trace:
        actual = read_work(trace).write_csv()
    assert actual == (GOLDEN / "util_work__util.csv").read_text()


def _ops(path, **where):
    """util.operations over work_in_order: the input of the sweeps."""
    from tracelens.filters import EventFilter
    from tracelens.util import operations, work_in_order

    with tracelens.open(path) as trace:
        return operations(work_in_order(trace, EventFilter(**where)), _params(path, **where))


# The operations the sweeps read were a query of their own (util_ops.sql) before they were
# derived from work_in_order: its golden CSVs, unchanged but for their names
# (util_operations__*.csv), are what util.operations must give.
@pytest.mark.parametrize(
    ("case", "where"),
    [("two_devices", {}), ("window", {"start_ns": 1_000_060, "end_ns": 1_000_450})],
)
def test_util_operations(trace_path, case, where):
    expected = (GOLDEN / f"util_operations__{case}.csv").read_text()
    assert _ops(trace_path, **where).write_csv() == expected


def test_util_sync_calls(trace_path):
    assert_golden(trace_path, "util_sync_calls", "one_sync", sync_regex=sync_api_regex())


# The sweeps over the operations (tracelens.util_sweep) have goldens too: the CSVs the SQL
# sweeps they replaced gave on this trace, unchanged.
def _sweep_csv(path, sweep, **where):
    from tracelens.util import _collective_kinds

    params = _params(path, **where)
    ops = _ops(path, **where)
    with tracelens.open(path) as trace:
        if sweep == "util_devices":
            syncs = trace.query("util_sync_calls", sync_regex=sync_api_regex())
            return device_sweep(ops, syncs, params["t0"], params["t1"]).write_csv()
        return communication_sweep(ops, _collective_kinds(params)).write_csv()


@pytest.mark.parametrize(
    ("sweep", "case", "where"),
    [
        ("util_devices", "two_devices", {}),
        ("util_devices", "window", {"start_ns": 1_000_060, "end_ns": 1_000_450}),
        ("util_communication", "allreduce", {}),
    ],
)
def test_sweeps(trace_path, sweep, case, where):
    expected = (GOLDEN / f"{sweep}__{case}.csv").read_text()
    assert _sweep_csv(trace_path, sweep, **where) == expected


def test_util_nccl_ranges(trace_path):
    assert_golden(
        trace_path, "util_nccl_ranges", "one_range", prepare=tracelens.Trace.load_nvtx_text
    )
