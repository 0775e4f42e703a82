"""Golden tests of the util query files, on a tiny trace built here: compute on stream 7,
an NCCL all-reduce overlapping it on stream 8, a copy alone, a launch-bound gap, a gap
while the host sat in cudaStreamSynchronize, and a second device with a copy kernel."""

from __future__ import annotations

import io

import polars as pl
import pytest
from fixtures.builder import DIRECT_COPY, XMMA_GEMM

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens.synth import TraceBuilder
from tracelens.util import sync_api_regex, work_params
from tracelens.util_calls import read_calls
from tracelens.util_sweep import device_sweep

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
    assert_golden(trace_path, "util_name_texts", "two_and_unknown", ids="6,2,6,,999")


def test_util_window(trace_path):
    """From the first API call (1_000_000 - 50) to the last end (the kernel at +500)."""
    assert_golden(trace_path, "util_window", "span", gpu=True, api=True)


def test_util_window_without_gpu(trace_path):
    """The GPU tables left out: to the end of the last API call (the launch at +390)."""
    assert_golden(trace_path, "util_window", "api_and_nvtx", gpu=False, api=True)


def test_util_window_without_gpu_or_api(trace_path):
    """The GPU tables and the API calls left out: the NCCL NVTX range alone (-45 .. -35)."""
    assert_golden(trace_path, "util_window", "nvtx_only", gpu=False, api=False)


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
        actual = read_work(trace)
        narrow = read_work(trace, context=False)  # util alone: the same rows, no context
    assert actual.write_csv() == (GOLDEN / "util_work__util.csv").read_text()
    assert "context" in actual.columns
    assert narrow.equals(actual.drop("context"))


def _ops(path, **where):
    """util.operations over work_in_order: the input of the sweeps."""
    from tracelens.filters import EventFilter
    from tracelens.util import operations, work_in_order

    with tracelens.open(path) as trace:
        return operations(work_in_order(trace, EventFilter(**where)), _params(path, **where))


# The operations the sweeps read were a query of their own (util_ops.sql) before they were
# derived from work_in_order: its golden CSVs (util_operations__*.csv, renamed), are what
# util.operations must give; since the launching call is looked up for the gap-ending
# operations only, their last column is the correlation id (1..6 in the order the fixture
# makes the calls; 4 is the sync) where it was that call's start.
@pytest.mark.parametrize(
    ("case", "where"),
    [("two_devices", {}), ("window", {"start_ns": 1_000_060, "end_ns": 1_000_450})],
)
def test_util_operations(trace_path, case, where):
    expected = (GOLDEN / f"util_operations__{case}.csv").read_text()
    assert _ops(trace_path, **where).write_csv() == expected


@pytest.mark.parametrize("offset", [0, 10**9])  # name ids fit a table; too large: hashed
def test_operations_classes(offset):
    """Each kernel's class and collective kind come from its name id (none: compute),
    whether the ids are small enough for a lookup table or not; memcpys are memory and
    graph replays compute."""
    from tracelens.util import operations
    from tracelens.util_sweep import COMMUNICATION, COMPUTE, MEMORY

    work = pl.DataFrame(
        {
            "device": [0] * 6,
            "start_ns": [1, 2, 3, 4, 5, 6],
            "end_ns": [11, 12, 13, 14, 15, 16],
            "kind": [0, 0, 0, 0, 1, 3],
            "name_id": [offset + 1, offset + 2, offset + 3, None, None, None],
            "pid": [5] * 6,
            "correlation_id": [1, 2, 3, 4, 5, 6],
        },
        schema_overrides={"device": pl.Int32, "kind": pl.Int8},
    )
    params = {
        "t0": 0,
        "t1": 20,
        "name_ids": [offset + 2, offset + 3],
        "work_classes": ["communication", "memory"],
        "collectives": ["AllReduce", None],
    }
    ops = operations(work, params)
    assert ops["cls"].to_list() == [COMPUTE, COMMUNICATION, MEMORY, COMPUTE, MEMORY, COMPUTE]
    assert ops["collective"].to_list() == [0, 1, 0, 0, 0, 0]


def test_util_calls(trace_path):
    """Every API call, one cudaStreamSynchronize among them (sync); by start here (the
    query leaves the order to its reader)."""
    from queries.golden import query_csv

    text = query_csv(trace_path, "util_calls", sync_regex=sync_api_regex())
    rows = pl.read_csv(io.StringIO(text)).sort("start")
    assert rows.write_csv() == (GOLDEN / "util_calls__one_sync.csv").read_text()


def test_util_launch_calls(trace_path):
    """Every API call's thread, correlation id and start: util_calls' first three columns
    (by start here: the query leaves the order to its reader)."""
    from queries.golden import query_csv

    text = query_csv(trace_path, "util_launch_calls")
    rows = pl.read_csv(io.StringIO(text)).sort("start")
    assert rows.write_csv() == (GOLDEN / "util_launch_calls__every_call.csv").read_text()


@pytest.mark.parametrize("regex", [None, "cudaNoSuchCall"])
def test_launch_calls_are_those_of_the_read_of_every_call(trace_path, gaps_path, regex):
    """read_launch_calls gives what read_calls gives with its window open: the launching
    calls (each operation's launch start), the synchronizing calls, span and count."""
    from tracelens.util_calls import read_launch_calls

    for path in (trace_path, gaps_path):
        with tracelens.open(path) as trace:
            every = read_calls(trace, regex or sync_api_regex(), (None, None))
            fewer = read_launch_calls(trace, regex or sync_api_regex())
            work = tracelens.util.read_work(trace)
        assert fewer.launches.launches(work).equals(every.launches.launches(work))
        assert work.height and fewer.launches.launch_starts(work).null_count() < work.height
        assert fewer.syncs.equals(every.syncs)
        assert (fewer.first_ns, fewer.last_ns) == (every.first_ns, every.last_ns)
        assert fewer.in_window == every.in_window


def test_util_call_figures(trace_path):
    """The one cudaStreamSynchronize, with the count (6 calls) and span of every call."""
    assert_golden(trace_path, "util_call_figures", "one_sync", sync_regex=sync_api_regex())


def test_util_call_figures_without_a_sync_call(trace_path):
    """No call matches: one row, sync false, with the count and span of every call."""
    assert_golden(trace_path, "util_call_figures", "no_sync", sync_regex="cudaNoSuchCall")


@pytest.mark.parametrize("regex", [None, "cudaNoSuchCall"])
def test_call_figures_are_those_of_the_read_of_every_call(trace_path, gaps_path, regex):
    """read_call_figures gives the synchronizing calls, span and count that read_calls
    gives (its window open), without the launching calls."""
    from tracelens.util_calls import read_call_figures

    for path in (trace_path, gaps_path):
        with tracelens.open(path) as trace:
            every = read_calls(trace, regex or sync_api_regex(), (None, None))
            figures = read_call_figures(trace, regex or sync_api_regex())
        assert figures.launches is None
        assert figures.syncs.equals(every.syncs)
        assert figures.syncs.height == (0 if regex else 1)
        assert (figures.first_ns, figures.last_ns) == (every.first_ns, every.last_ns)
        assert figures.in_window == every.in_window


# The sweeps over the operations (tracelens.util_sweep) have goldens too: the CSVs the SQL
# sweeps they replaced gave on this trace, unchanged.
def _sweep_csv(path, sweep, **where):
    from tracelens.util_ops import collective_kinds

    params = _params(path, **where)
    ops = _ops(path, **where)
    with tracelens.open(path) as trace:
        calls = read_calls(trace, sync_api_regex())
    t0, t1, kinds = params["t0"], params["t1"], collective_kinds(params)
    swept = device_sweep(ops, calls.syncs, calls.launches, t0, t1, kinds)
    return (swept.devices if sweep == "util_devices" else swept.communication).write_csv()


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


# The idle causes look each gap-ending operation's launching call up (util_calls): a trace
# of one device whose gaps (100 ns each) cover the cases. By hand: launch_bound 2 gaps
# (B; E+F), unexplained 2 (C+D; G), sync 1 (H); before_first 50 (from the first call).
@pytest.fixture(scope="module")
def gaps_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 2_000_000

    def op(start, at=None, *, stream=7):
        cid = None if at is None else b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5)
        cid = b.correlation_id() if cid is None else cid  # no call has it: none launched it
        b.kernel(XMMA_GEMM, start=start, end=start + 100, stream=stream, correlation_id=cid)

    op(t, t - 50)  # A
    op(t + 200, t + 150)  # B: launched after the gap [100, 200] began: launch_bound
    # C and D start together after [300, 400]: the earlier launch (C's, before the gap
    # began) decides: the work was queued, unexplained.
    op(t + 400, t + 250)
    op(t + 400, t + 350, stream=8)
    # E (no API call) and F start together after [500, 600]: F's launch, after the gap
    # began, decides: launch_bound.
    op(t + 600)
    op(t + 600, t + 550, stream=8)
    op(t + 800)  # G, after [700, 800], no API call: unexplained
    b.runtime("cudaStreamSynchronize_v3020", start=t + 880, end=t + 950)
    op(t + 1000, t + 960)  # H, after [900, 1000], launched as the host left a sync: sync
    path = tmp_path_factory.mktemp("util_gaps") / "util_gaps.sqlite"
    b.write(path)
    return path


def test_util_devices_gap_causes(gaps_path):
    expected = (GOLDEN / "util_devices__gap_causes.csv").read_text()
    assert _sweep_csv(gaps_path, "util_devices") == expected


def _launch_index(calls):
    """A LaunchIndex of ``calls`` (pid, correlation_id, start, tid; None pid: a NULL
    globalTid)."""
    from tracelens.synth.ids import global_tid
    from tracelens.util_calls import LaunchIndex

    rows = [(None if p is None else global_tid(p, t), c, s) for p, c, s, t in calls]
    schema = ["global_tid", "correlation_id", "start"]
    return LaunchIndex(pl.DataFrame(rows, schema=schema, orient="row"))


@pytest.mark.parametrize("far_id", [3, 50_000_000])  # dense slots; sparse ids: hashed
@pytest.mark.parametrize("others", [0, 20])  # processes found by comparison; by a hash join
@pytest.mark.parametrize("reverse", [False, True])  # the calls in either order
def test_launch_index(far_id, others, reverse):
    """The earliest of two calls that share a (pid, correlation id), and its thread (of
    two that start together, the smaller); null for an id, a process or a NULL the calls
    lack; the same answers whether the ids are dense or not, however many processes made
    calls, in whatever order the calls come."""
    from tracelens.synth.ids import global_tid

    calls = [(7, 1, 100, 7), (7, 2, 250, 71), (7, 2, 200, 72), (7, far_id, 300, 7)]
    calls += [(9, 1, 400, 9), (9, 5, 450, 93), (9, 5, 450, 92), (None, 4, 1, 0)]
    calls += [(100 + k, 1, 500 + k, 100 + k) for k in range(others)]
    index = _launch_index(calls[::-1] if reverse else calls)
    ops = pl.DataFrame(
        [(7, 2), (7, far_id), (9, 1), (9, 2), (8, 1), (7, None), (None, 1), (7, 0), (9, 5)],
        schema=["pid", "correlation_id"],
        orient="row",
    )
    found = index.launches(ops)
    starts = [200, 300, 400, None, None, None, None, None, 450]
    assert found["launch_start"].to_list() == starts
    assert index.launch_starts(ops).to_list() == starts
    tids = [(7, 72), (7, 7), (9, 9), *[None] * 5, (9, 92)]
    assert found["launch_tid"].to_list() == [t and global_tid(*t) for t in tids]
