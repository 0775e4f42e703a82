"""Golden tests of the findings query files (the `nsys analyze` 2022.4 rules) on a tiny
trace built here: a synchronous DtoH copy and a small synchronous HtoD copy, a pageable
cudaMemcpyAsync, synchronous and asynchronous memsets of managed memory, a
cudaDeviceSynchronize, a 600 ms gap between kernels, and a profiler flush overhead inside
the device's range (which nsys counts as GPU busy time)."""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens.synth import TraceBuilder

PID = 4141
MS = 1_000_000
FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 100 * MS

    def call(name, at, dur=10_000):
        return b.runtime(name, start=at, end=at + dur, pid=PID)

    b.kernel(XMMA_GEMM, start=t, end=t + 50 * MS, correlation_id=call("cudaLaunchKernel", t - 1))
    cid = call("cudaMemcpy_v3020", t + 50 * MS, 2 * MS)
    b.memcpy("DtoH", 4_000_000, start=t + 50 * MS + 1000, end=t + 51 * MS, correlation_id=cid)
    cid = call("cudaMemcpy_v3020", t + 52 * MS)
    b.memcpy("HtoD", 1_000, start=t + 52 * MS + 1000, end=t + 52 * MS + 3000, correlation_id=cid)
    cid = call("cudaMemcpyAsync_v3020", t + 53 * MS)
    b.memcpy("HtoD", 2_000_000, start=t + 53 * MS + 1000, end=t + 54 * MS, correlation_id=cid)
    cid = call("cudaMemset_v3020", t + 55 * MS)
    b.memset(1_000_000, start=t + 55 * MS + 1000, end=t + 56 * MS, mem_kind=4, correlation_id=cid)
    cid = call("cudaMemsetAsync_v3020", t + 57 * MS)
    b.memset(1_000_000, start=t + 57 * MS + 1000, end=t + 58 * MS, mem_kind=4, correlation_id=cid)
    call("cudaDeviceSynchronize_v3020", t + 58 * MS, 3 * MS)
    b.add_row(
        "PROFILER_OVERHEAD",
        start=t + 300 * MS,
        end=t + 310 * MS,
        globalTid=b._gtid(PID, None),
        nameId=b.string("CUDA profiling data flush overhead"),
    )
    at = t + 660 * MS
    b.kernel(
        XMMA_GEMM, start=at, end=at + 100 * MS, correlation_id=call("cudaLaunchKernel", at - 1)
    )
    path = tmp_path_factory.mktemp("findings") / "findings_golden.sqlite"
    b.write(path)
    return path


def test_findings_profiler_overheads(trace_path):
    assert_golden(trace_path, "findings_profiler_overheads", "one_flush")


# gpu_gaps and gpu_low_util were a query each (findings_gpu_gaps.sql, findings_gpu_low_util.sql)
# before they became sweeps over one read (tracelens.findings_gpu): their golden CSVs,
# unchanged, are what the sweeps must give.
def _gpu_csv(path, rule, **args):
    from tracelens import findings_gpu
    from tracelens.util import read_work

    with tracelens.open(path) as trace:
        ops = findings_gpu.gpu_ops(trace, read_work(trace))
    return getattr(findings_gpu, rule)(ops, **args).write_csv()


def test_gpu_gaps(trace_path):
    actual = _gpu_csv(trace_path, "gpu_gaps", gap_ns=200 * MS)
    assert actual == (GOLDEN / "findings_gpu_gaps__flush_splits_the_gap.csv").read_text()


def test_gpu_low_util(trace_path):
    actual = _gpu_csv(trace_path, "gpu_low_util", chunks=30, threshold_pct=50.0)
    assert actual == (GOLDEN / "findings_gpu_low_util__thirty_chunks.csv").read_text()


def test_sync_api(trace_path):
    params = dict(pid=None, start_ns=None, end_ns=None)
    assert_golden(trace_path, "findings_sync_api", "device_synchronize", **params)


def test_sync_memcpy(trace_path):
    assert_golden(trace_path, "findings_sync_memcpy", "dtoh_not_small_htod", **FILTER)


def test_sync_memset(trace_path):
    assert_golden(trace_path, "findings_sync_memset", "managed", **FILTER)


def test_pageable_async_memcpy(trace_path):
    assert_golden(trace_path, "findings_pageable_async_memcpy", "pageable_htod", **FILTER)


@pytest.mark.parametrize(
    ("macro", "pattern"), [("issued_memcpys", "cudaMemcpy%"), ("issued_memsets", "cudaMemset%")]
)
def test_issued_transfers(trace_path, macro, pattern):
    """The helper macros of queries/_issued_transfers.sql, every column: each copy or memset
    with the call that issued it (synchronous and asynchronous alike)."""
    assert_golden(trace_path, "_issued_transfers", macro, pattern=pattern)


def test_selected_pairs(trace_path):
    # the one process on device 0; a window before any work: none
    assert_golden(trace_path, "findings_selected_pairs", "all", **FILTER)
    before = {**FILTER, "start_ns": 0, "end_ns": 1_000}
    assert_golden(trace_path, "findings_selected_pairs", "none", **before)
