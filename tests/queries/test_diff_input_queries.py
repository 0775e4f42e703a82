"""Golden tests of the queries the diff and the hints read per trace (trace_totals,
copy_kinds, diff_kernels, nvtx_labels), on one tiny trace built here: two devices with
overlapping kernels, copies of three kinds, a memset, and NVTX ranges (one left open, one
of a start/end kind, one with a registered string)."""

from __future__ import annotations

import pytest

import tracelens
from queries.golden import assert_golden
from tracelens.synth import TraceBuilder

PID = 77
GEMM = "void gemm_kernel<float>(float*, int)"
SOFTMAX = "softmax_kernel(float*)"


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")

    def launch(name, start, end, *, device=0, stream=7, grid=(1, 1, 1), block=(128, 1, 1)):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 20, end=start - 10, pid=PID)
        b.kernel(name, start=start, end=end, device=device, stream=stream, correlation_id=cid,
                 pid=PID, grid=grid, block=block, short_name=name.split("(")[0].split()[-1])  # fmt: skip

    launch(GEMM, 1_000, 1_100, grid=(4, 2, 1), block=(256, 1, 1))
    launch(GEMM, 1_050, 1_200, stream=8, grid=(8, 2, 1), block=(256, 1, 1))  # overlaps
    launch(SOFTMAX, 1_300, 1_350, grid=(3, 1, 1), block=(64, 2, 1))
    launch(SOFTMAX, 1_400, 1_420, device=1, grid=(1, 1, 1), block=(32, 1, 1))
    b.memcpy("HtoD", 4096, start=900, end=950, pid=PID)
    b.memcpy("DtoH", 1024, start=1_500, end=1_530, pid=PID)
    b.memcpy("HtoD", 2048, start=1_600, end=1_610, pid=PID, device=1)
    b.memcpy("DtoD", 512, start=1_700, end=1_705, pid=PID)
    b.memset(256, start=1_800, end=1_802, pid=PID)
    b.nvtx_range("decode_step", start=950, end=1_450, pid=PID)
    b.nvtx_range("decode_step", start=1_460, end=1_900, pid=PID)
    b.nvtx_range("attention", start=1_000, end=1_100, pid=PID, registered=True)
    b.nvtx_range("warmup", start=800, end=900, pid=PID, event_type=60)
    b.nvtx_range("left open", start=1_950, end=None, pid=PID)
    path = tmp_path_factory.mktemp("diff_inputs") / "diff_inputs.sqlite"
    b.write(path)
    return path


ALL = {"start_ns": None, "end_ns": None, "selection": None}


def test_trace_totals(trace_path):
    assert_golden(trace_path, "trace_totals", "two_devices", **ALL, runtime=True)


def test_trace_totals_window(trace_path):
    params = ALL | {"start_ns": 1_250, "end_ns": 1_650}
    assert_golden(trace_path, "trace_totals", "window", **params, runtime=True)


@pytest.mark.parametrize(
    ("window", "figures"),
    [
        # device 0: [1000, 1100] and [1050, 1200] overlap (200), [1300, 1350] (50); device 1: 20;
        # GPU busy (util's) adds the copies and the memset, none under a kernel: 50 + 30 + 5 + 2
        # on device 0, 10 on device 1
        (
            {},
            {"kernel_launches": 4, "distinct_kernels": 2, "kernel_time_ns": 320,
             "gpu_busy_ns": 200 + 50 + 20 + 50 + 30 + 5 + 2 + 10, "memcpy_count": 4, "memcpy_bytes": 7680,
             "memcpy_time_ns": 95, "memset_count": 1, "memset_bytes": 256, "runtime_calls": 4,
             "first_ns": 900, "last_ns": 1_802, "span_ns": 902},
        ),
        # only [1300, 1350] starts, ends or spans [1250, 1650] on device 0; device 1: 20; and
        # the copies [1500, 1530] (device 0) and [1600, 1610] (device 1)
        (
            {"start_ns": 1_250, "end_ns": 1_650},
            {"kernel_launches": 2, "distinct_kernels": 1, "kernel_time_ns": 70,
             "gpu_busy_ns": 50 + 20 + 30 + 10, "memcpy_count": 2, "memcpy_bytes": 3072,
             "memcpy_time_ns": 40, "memset_count": 0, "memset_bytes": 0, "runtime_calls": 2,
             "first_ns": 1_280, "last_ns": 1_610, "span_ns": 330},
        ),
    ],
)  # fmt: skip
def test_trace_totals_figures(trace_path, window, figures):
    """The figures compare.collect.trace_totals adds to trace_totals.sql's from the kernels
    (launches, distinct kernels, kernel time, the span with theirs, and util's busy time: the
    union of the kernels, copies and memsets per device, the overlap counted once, summed
    over devices): the query's figures are those the golden files held when it computed
    them all."""
    from tracelens.compare.collect import trace_totals
    from tracelens.filters import EventFilter
    from tracelens.util import accounting_and_calls

    with tracelens.open(trace_path) as trace:
        where = EventFilter(**window)
        assert trace_totals(trace, where) == figures
        # the diff's way: the API call figures from util's read of them, not a scan
        calls = accounting_and_calls(trace, where)[1]
        assert calls["runtime_calls"] == figures["runtime_calls"]
        assert trace_totals(trace, where, calls=calls) == figures


def test_copy_kinds(trace_path):
    assert_golden(trace_path, "copy_kinds", "three_kinds", **ALL)


DIFF_WORK = "diff_work_rows"  # what the tests below register the diff's read of the work as
DIFF_READ = {"grid": True, "short": True}  # work_in_order.sql's parameters in the diff's read


def register_diff_work(trace, **window):
    """The diff's read of the GPU work of ``window`` (an EventFilter's fields:
    work_in_order.sql with the grid and the short names), registered on the trace's
    connection as :data:`DIFF_WORK`: what diff_kernels and kernel_name_pairs read."""
    from tracelens.filters import EventFilter

    params = {"selection": None, **EventFilter(**window).params(), **DIFF_READ}
    rows = trace.query("work_in_order", **params)
    trace.db.register(DIFF_WORK, rows.to_arrow())


def test_the_grid_adds_blocks_to_work_in_order(trace_path):
    """With $grid and $short its rows are util.work_in_order's (sorted as util sorts them),
    with each kernel's blocks; without them, blocks and short_id are NULL."""
    from tracelens.util import _in_order, work_in_order

    params = {"device": None, "pid": None, "stream": None} | ALL
    with tracelens.open(trace_path) as trace:
        rows = _in_order(trace.query("work_in_order", **params, **DIFF_READ))
        assert rows.drop("blocks").equals(work_in_order(trace, keep_stream=True))
        bare = _in_order(trace.query("work_in_order", **params, grid=False, short=False))
    assert rows.filter(rows["kind"] == 0)["blocks"].to_list() == [8, 16, 3, 1]
    assert rows.filter(rows["kind"] != 0)["blocks"].null_count() == 5
    assert rows["short_id"].null_count() == 5  # the kernels have theirs
    assert bare["blocks"].null_count() == bare["short_id"].null_count() == bare.height
    assert bare.drop("blocks", "short_id").equals(rows.drop("blocks", "short_id"))


@pytest.mark.parametrize(
    ("case", "window"), [("two_devices", {}), ("window", {"start_ns": 1_250, "end_ns": 1_650})]
)
def test_work_in_order_with_the_grid(trace_path, case, window):
    """work_in_order.sql's rows as the diff reads them (with $grid and $short), sorted as
    the diff sorts them (the query leaves the order to its caller), against
    golden/work_in_order__grid_<case>.csv."""
    import os

    from queries.golden import GOLDEN
    from tracelens.filters import EventFilter
    from tracelens.util import _in_order

    with tracelens.open(trace_path) as trace:
        params = {"selection": None, **EventFilter(**window).params(), **DIFF_READ}
        actual = _in_order(trace.query("work_in_order", **params)).write_csv()
    expected_path = GOLDEN / f"work_in_order__grid_{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    assert actual == expected_path.read_text()


@pytest.mark.parametrize("name_kind", ["demangled", "short"])
def test_diff_kernels(trace_path, name_kind):
    assert_golden(
        trace_path, "diff_kernels", name_kind, register_diff_work, work=DIFF_WORK,
        name_kind=name_kind,
    )  # fmt: skip


def test_diff_kernels_window(trace_path):
    def prepare(trace):
        register_diff_work(trace, start_ns=1_250, end_ns=1_650)

    assert_golden(
        trace_path, "diff_kernels", "window", prepare, work=DIFF_WORK, name_kind="demangled"
    )


@pytest.mark.parametrize("name_kind", ["demangled", "short"])
def test_diff_kernels_are_the_census(trace_path, name_kind):
    """Its census columns are kernel_summary's, row for row (the diff shows them as census)."""
    from tracelens.census import kernel_summary

    with tracelens.open(trace_path) as trace:
        register_diff_work(trace)
        rows = trace.query("diff_kernels", work=DIFF_WORK, name_kind=name_kind)
        census = kernel_summary(trace, name=name_kind)
    assert rows.drop("name_id", "avg_blocks").equals(census)


def test_nvtx_labels(trace_path):
    assert_golden(trace_path, "nvtx_labels", "four_labels", prepare=tracelens.Trace.load_nvtx_text)
