"""Golden tests of the helper files every query stands on (queries/_shared.sql's macros,
_event_counts, _host_event_counts, _graph_replays, _memcpy_labels, _select_work,
_selection_size), on one tiny trace built here. Correlation ids are given by hand; the
StringIds ids (name_id, short_id) follow the builder's interning order: 0
cudaLaunchKernel_v7000, 1 the gemm (its short name is the same string), 2 and 3 the copy
kernel's demangled and short names.

pid 4242 (thread 4243 launches)          pid 4343
  cid 11 cudaLaunchKernel [900, 950]       cid 11 cudaLaunchKernel [2800, 2850] (same cid)
    -> gemm, device 0 stream 7 [1000, 2000]  -> copy kernel, device 1 stream 8 [3000, 5000]
  cid 12 cudaMemcpyAsync [5900, 5950] -> HtoD 4096 B, device 0 stream 7 [6000, 6500]
  flush overhead [6600, 6700] (inside device 0's work: nsys counts it)
  cid 13 cudaMemsetAsync [6950, 6960] -> memset 1024 B, device 0 stream 7 [7000, 7200]
  cid 15 cudaDeviceSynchronize [7300, 7400] (launches nothing)
  cid 14 cudaGraphLaunch [7900, 7910] -> graph replay, device 0 stream 9 [8000, 9000]
  flush overhead [9500, 9600] (after the last operation nsys counts: left out)
  NVTX: range 'step' [800, 7300], a mark at 9700
"""

from __future__ import annotations

import polars as pl
import pytest
from fixtures.builder import DIRECT_COPY, XMMA_GEMM, add_graph_replays

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens.filters import select_work
from tracelens.synth import TraceBuilder, global_pid

PID, OTHER = 4242, 4343
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")

    def call(name, start, end, cid, pid=PID, tid=PID + 1):
        return b.runtime(name, start=start, end=end, pid=pid, tid=tid, correlation_id=cid)

    call("cudaLaunchKernel_v7000", 900, 950, 11)
    b.kernel(XMMA_GEMM, start=1000, end=2000, pid=PID, correlation_id=11)
    call("cudaLaunchKernel_v7000", 2800, 2850, 11, pid=OTHER, tid=OTHER)
    b.kernel(DIRECT_COPY, start=3000, end=5000, pid=OTHER, device=1, stream=8, correlation_id=11)
    call("cudaMemcpyAsync_v3020", 5900, 5950, 12)
    b.memcpy("HtoD", 4096, start=6000, end=6500, pid=PID, correlation_id=12)
    call("cudaMemsetAsync_v3020", 6950, 6960, 13)
    b.memset(1024, start=7000, end=7200, pid=PID, correlation_id=13)
    call("cudaDeviceSynchronize_v3020", 7300, 7400, 15)
    call("cudaGraphLaunch_v10000", 7900, 7910, 14)
    for start in (6600, 9500):
        b.add_row("PROFILER_OVERHEAD", start=start, end=start + 100,
                  globalTid=b._gtid(PID, None),
                  nameId=b.string("CUDA profiling data flush overhead"))  # fmt: skip
    b.nvtx_range("step", start=800, end=7300, pid=PID)
    b.nvtx_mark("mark", at=9700, pid=PID)
    path = b.write(tmp_path_factory.mktemp("shared") / "shared_golden.sqlite")
    # A graph-level CUDA graph replay (the builder's schemas have no GRAPH_TRACE table).
    add_graph_replays(path, [(8000, 9000, 0, 1, None, 9, 14, global_pid(PID), 3, 4)])
    return path


def _ops(*pairs: tuple[int, int]) -> pl.DataFrame:
    return pl.DataFrame(
        {"globalPid": [global_pid(p) for p, _ in pairs], "correlationId": [c for _, c in pairs]}
    )


def _select_other_kernel(trace: tracelens.Trace) -> None:
    # selection 1: pid 4343's kernel only (pid 4242's cid 11 is another operation)
    select_work(trace, _ops((OTHER, 11)))


def _select_twice(trace: tracelens.Trace) -> None:
    # selection 1: the gemm (given twice), the copy kernel and the memcpy; selection 2: the
    # copy kernel and the memset, within selection 1, so the copy kernel alone
    first = select_work(trace, _ops((PID, 11), (PID, 11), (OTHER, 11), (PID, 12)))
    select_work(trace, _ops((OTHER, 11), (PID, 13)), first)


def test_shared_scalar_macros(trace_path):
    # in_window is nsys's rule: an event is in [t0, t1) when it ends at or after t0 and
    # starts before t1 (the [21, 30], [0, 9] and [0, 10] windows miss [10, 20], [20, 30]
    # holds it; [10, 10] is in [10, 20], not in [0, 10]); event_passes is that and each filter;
    # launched_by needs the same correlation id in the same process; of_process matches the
    # pid in bits 24-47, any with NULL; api_name drops only a '_vNNNN' suffix (string_or_id:
    # the value, else '<unknown string id N>', NULL for no id); is_nvtx_range
    # is a closed range of type 59, 60, 70 or 71 (is_nvtx_range_type: the type alone);
    # mem_kind_name is CUPTI's memory kinds 0-7 and NULL past them; name_matches: 'exact'
    # is the whole name, 'contains' a part, 'regex' an RE2 search.
    assert_golden(trace_path, "_shared", "scalars")


@pytest.mark.parametrize(
    ("case", "where"),
    [
        # all five operations, the graph replay included; name_id is the kernels' demangled
        # name (gemm 1, copy kernel 2), NULL for the others
        ("gpu_work", {}),
        # [1500, 6200]: the gemm ends in it, the copy kernel lies in it, the memcpy starts in
        # it; the memset (7000) and the replay (8000) start after it
        ("gpu_work_window", {"start_ns": 1500, "end_ns": 6200}),
        # device 0 stream 7: the gemm, the memcpy and the memset (the replay is on stream 9)
        ("gpu_work_device_0_stream_7", {"device": 0, "stream": 7}),
        # pid 4343: its copy kernel only
        ("gpu_work_pid", {"pid": OTHER}),
    ],
)
def test_shared_gpu_work(trace_path, case, where):
    assert_golden(trace_path, "_shared", case, probe="gpu_work", **(NO_FILTER | where))


def test_shared_gpu_work_selection(trace_path):
    # selection 1 holds pid 4343's cid 11 only: pid 4242's gemm, also cid 11, is not in it
    params = NO_FILTER | {"selection": 1}
    assert_golden(
        trace_path, "_shared", "gpu_work_selection", _select_other_kernel, probe="gpu_work",
        **params,
    )  # fmt: skip


def test_findings_gpu_ops(trace_path):
    """findings_gpu.gpu_ops over util's read: the four operations nsys analyze sees (not the
    graph replay) and the flush overhead at 6600, inside pid 4242's device-0 range [1000,
    7200]; the one at 9500 lies past it. The golden is that of the nsys_gpu_ops macro of
    queries/_shared.sql it replaced."""
    from tracelens.findings_gpu import gpu_ops
    from tracelens.util import read_work

    with tracelens.open(trace_path) as trace:
        ops = gpu_ops(trace, read_work(trace))
    names = {"start_ns": "start", "end_ns": "end", "pid": "process_id", "device": "deviceId"}
    actual = ops.drop("pair").rename(names | {"context": "contextId"}).sort("start", "deviceId")
    assert actual.write_csv() == (GOLDEN / "findings_gpu_ops__shared.csv").read_text()


def test_shared_runtime_calls_window(trace_path):
    # pid 4242 in [5925, 7350]: the memcpy call ends in it, the memset call lies in it, the
    # synchronize starts in it; the launches (900, 2800) and the graph launch (7900) do not
    params = {"pid": PID, "start_ns": 5925, "end_ns": 7350, "selection": None}
    assert_golden(trace_path, "_shared", "runtime_calls_window", probe="runtime_calls", **params)


def test_shared_runtime_calls_selection(trace_path):
    # with selection 1 (pid 4343's kernel), the call that launched it: pid 4343's cid 11,
    # not pid 4242's call with the same correlation id
    params = {"pid": None, "start_ns": None, "end_ns": None, "selection": 1}
    assert_golden(
        trace_path, "_shared", "runtime_calls_selection", _select_other_kernel,
        probe="runtime_calls", **params,
    )  # fmt: skip


def test_shared_gpu_operations(trace_path):
    # every operation with its device and stream; kernels carry their demangled and short
    # name ids (gemm 1 and 1, copy kernel 2 and 3), the others NULL
    assert_golden(trace_path, "_shared", "gpu_operations")


def test_event_counts(trace_path):
    # kernels: 2 in [1000, 5000] from both processes; one memcpy [6000, 6500] and one memset
    # [7000, 7200] (pid 4242); 6 API calls [900, 7910] from both; 2 NVTX events, the last
    # ending at the mark (9700, it has no end); one graph replay [8000, 9000]; no processes
    # are listed for NVTX and graph replays
    assert_golden(trace_path, "_event_counts", "all")


def test_host_event_counts(trace_path):
    # _event_counts's runtime, nvtx and graph rows, the same figures (the report's info
    # takes the GPU kinds' from its read of the work); without the runtime row when the
    # caller holds its figures (the report's util read the calls)
    assert_golden(trace_path, "_host_event_counts", "all", runtime=True)
    assert_golden(trace_path, "_host_event_counts", "no_runtime", runtime=False)


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ("all", {}),  # one replay of 1000 ns
        ("device_1", {"device": 1}),  # none on device 1: 0 and 0, not NULL
        ("window_before", {"end_ns": 7999}),  # ends before the replay starts
    ],
)
def test_graph_replays(trace_path, case, where):
    assert_golden(trace_path, "_graph_replays", case, **(NO_FILTER | where))


def test_memcpy_labels(trace_path):
    # the 14 copy kinds of ENUM_CUDA_MEMCPY_OPER, named as nsys stats prints them
    assert_golden(trace_path, "_memcpy_labels", "all")


def test_select_work(trace_path):
    # selection 1: (4242, 11) once though given twice, (4242, 12), (4343, 11); selection 2:
    # (4343, 11) only ((4242, 13) is not in selection 1)
    assert_golden(trace_path, "_select_work", "intersect", _select_twice)


@pytest.mark.parametrize(("selection", "case"), [(1, "three"), (2, "one"), (3, "none")])
def test_selection_size(trace_path, selection, case):
    assert_golden(trace_path, "_selection_size", case, _select_twice, selection=selection)


def test_shared_stats(trace_path):
    # a: 1, 2, 3, 10 ns: total 16, 4 instances, mean 4.0, median 2.5 (mean of the middle
    # two), min 1, max 10, sample stddev sqrt((9 + 4 + 1 + 36) / 3) = 4.08 -> 4.1, and
    # 16 / 21 of all = 76.2 %; b: one of 5 ns: stddev 0, 23.8 %
    assert_golden(trace_path, "_shared", "stats")


def test_shared_launch_spread(trace_path):
    # a: 10, 20, 30, 40 ns: p10 = 10 + 0.3 * 10 = 13, p50 25, p90 37, p99 39.7 (linear
    # interpolation); cv = stddev 12.91 / mean 25 = 0.516; devices 0, 1; streams (0, 7),
    # (0, 8), (1, 7); b: one launch, cv 0
    assert_golden(trace_path, "_shared", "spread")


def test_shared_calls_in_ranges(trace_path):
    # pid 4242's cid 11 launch (900) lies in 'early'; pid 4343's (2800) in 'other' (same
    # correlation id, its own process); the memcpy call (5900) in 'late' ('nested' starts
    # at 5920). The memset call (6950) and the synchronize (7300) lie in 'late' too, but the
    # latest range begun before them is 'nested', ended at 5960: they are in none (the macro
    # is for ranges that do not nest). The graph launch (7900) is after every range.
    assert_golden(trace_path, "_shared", "calls_in_ranges")
