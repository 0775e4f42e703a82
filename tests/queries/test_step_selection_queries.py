"""Golden tests of the queries behind --step/--steps on a tiny trace built here: process
A's thread has two step ranges (step 2 holds a nested range that is also a step, step 3);
process B launches on the same GPU with the same correlation ids; a memcpy is launched in
step 1; device 1 runs one kernel."""

from __future__ import annotations

import polars as pl
import pytest
from fixtures.builder import FILL, REDUCE_SUM, XMMA_GEMM

import tracelens
from queries.golden import assert_golden
from tracelens.synth import TraceBuilder

A, B = 5151, 6262
# A's main thread as the builder stores it (globalPid | tid; globalPid carries the pid in
# bits 24-47 and a host id above).
A_TID = (1 << 48) | (A << 24) | A


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(A, "python train.py")
    b.process(B, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")

    def launch(pid, name, at, start, dur, device=0, stream=7, cid=None):
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, pid=pid, correlation_id=cid)
        b.kernel(name, start=start, end=start + dur, device=device, stream=stream, pid=pid,
                 correlation_id=cid)  # fmt: skip
        return cid

    c1 = launch(A, XMMA_GEMM, 1_010, 2_000, 300)  # step 1
    launch(B, FILL, 1_010, 2_100, 50, stream=20, cid=c1)  # B, same correlation id
    m = b.runtime("cudaMemcpyAsync_v3020", start=1_020, end=1_025, pid=A)
    b.memcpy("DtoD", 4096, start=2_400, end=2_450, pid=A, correlation_id=m)
    launch(A, FILL, 1_210, 2_500, 40)  # step 2, before the nested range
    launch(A, REDUCE_SUM, 1_260, 2_600, 60)  # inside the nested step 3
    launch(A, FILL, 1_400, 3_000, 30, device=1)  # outside every step, device 1
    return b.write(tmp_path_factory.mktemp("stepsel") / "step_selection.sqlite")


NO_IDS = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None)

# The step bounds the work queries read (the relation step_bounds, registered by
# tracelens.stepwork): the step ranges, and the period windows.
RANGES = pl.DataFrame(
    {"step": [1, 2, 3], "globalTid": [A_TID] * 3, "start": [1_000, 1_200, 1_250],
     "end": [1_100, 1_300, 1_280]}
)  # fmt: skip


def _bounds(frame):
    if "device" in frame.columns and "pids" not in frame.columns:
        # period windows: no loop's processes (NULL), every process's work is the step's
        frame = frame.with_columns(pids=pl.lit(None, dtype=pl.List(pl.Int64)))

    def register(trace):
        trace.db.register("step_bounds", frame)

    return register


def test_steps_range_work_one_step(trace_path):
    params = dict(first=1, last=1, **NO_IDS)
    assert_golden(trace_path, "steps_range_work", "step_1", _bounds(RANGES), **params)


def test_steps_range_work_nested_goes_to_the_inner_step(trace_path):
    params = dict(first=2, last=2, **NO_IDS)
    assert_golden(trace_path, "steps_range_work", "step_2", _bounds(RANGES), **params)


@pytest.mark.parametrize(("case", "ids"), [("pid_a", {"pid": A}), ("stream_20", {"stream": 20})])
def test_steps_range_work_narrowed(trace_path, case, ids):
    # A's four operations of steps 1 to 3; stream 20 holds B's FILL alone, which B
    # launched outside every step range (it has A's correlation id): none
    params = dict(first=1, last=3, **(NO_IDS | ids))
    assert_golden(trace_path, "steps_range_work", case, _bounds(RANGES), **params)


def test_steps_window_work(trace_path):
    # Device 0: step 1 from 2,000 up to (not including) 2,500 holds A's GEMM, B's kernel and
    # the copy; step 2 from 2,500 to 2,650 A's FILL and REDUCE. Device 1: a window before
    # its kernel holds nothing.
    windows = pl.DataFrame(
        {"device": [0, 0, 1], "step": [1, 2, 1], "start": [2_000, 2_500, 0],
         "end": [2_500, 2_650, 1]}
    )  # fmt: skip
    assert_golden(trace_path, "steps_window_work", "two_steps", _bounds(windows), **NO_IDS)


@pytest.mark.parametrize(
    ("case", "ids"), [("stream_20", {"stream": 20}), ("device_1", {"device": 1})]
)
def test_steps_window_work_narrowed(trace_path, case, ids):
    # the windows of test_steps_window_work: stream 20 holds B's FILL (step 1); device 1's
    # window holds nothing
    windows = pl.DataFrame(
        {"device": [0, 0, 1], "step": [1, 2, 1], "start": [2_000, 2_500, 0],
         "end": [2_500, 2_650, 1]}
    )  # fmt: skip
    assert_golden(trace_path, "steps_window_work", case, _bounds(windows), **(NO_IDS | ids))


def test_steps_range_work_in_a_window(trace_path):
    # `steps --start/--end` reads only the steps' work that passes the window (2,050 to
    # 2,520): step 1's GEMM (2,000-2,300, spans its start) and copy (2,400-2,450), step 2's
    # FILL (2,500-2,540); not REDUCE (from 2,600), nor B's FILL (2,100, in no step)
    params = dict(first=1, last=3, **(NO_IDS | {"start_ns": 2_050, "end_ns": 2_520}))
    assert_golden(trace_path, "steps_range_work", "window", _bounds(RANGES), **params)


def test_steps_window_work_in_a_window(trace_path):
    # the windows of test_steps_window_work; the window 2,420 to 2,560 passes step 1's copy
    # (2,400-2,450, ends in it) and step 2's FILL (2,500-2,540), not the GEMM, B's FILL
    # (ended before it) nor REDUCE (starts after it)
    windows = pl.DataFrame(
        {"device": [0, 0, 1], "step": [1, 2, 1], "start": [2_000, 2_500, 0],
         "end": [2_500, 2_650, 1]}
    )  # fmt: skip
    window = NO_IDS | {"start_ns": 2_420, "end_ns": 2_560}
    assert_golden(trace_path, "steps_window_work", "window", _bounds(windows), **window)


def _select_step_1(trace):
    from tracelens.filters import select_work

    _bounds(RANGES)(trace)
    select_work(trace, "steps_range_work", first=1, last=1, **NO_IDS)


def test_selection_span(trace_path):
    assert_golden(trace_path, "_selection_span", "step_1", prepare=_select_step_1, selection=1)


def test_selection_span_empty(trace_path):
    with tracelens.open(trace_path) as trace:
        assert trace.query("_selection_span", selection=99).row(0) == (None, None)


WINDOWS = pl.DataFrame(
    {"device": [0, 0], "step": [1, 2], "start": [2_000, 2_500], "end": [2_500, 2_650]}
)
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


def _step_work(trace):
    from tracelens import _resources

    _bounds(WINDOWS)(trace)
    sql = "CREATE TEMP TABLE step_work AS " + _resources.query("steps_window_work")
    trace.db.execute(sql, NO_IDS)


def test_steps_top_kernels(trace_path):
    # Step 1: A's GEMM (300) and B's FILL (50, another process on the same GPU); step 2:
    # REDUCE (60) over FILL (40).
    params = dict(top=2, **NO_FILTER)
    assert_golden(trace_path, "steps_top_kernels", "two_steps", prepare=_bounds(WINDOWS), **params)


def test_steps_top_kernels_of_one_process(trace_path):
    params = dict(top=1, **(NO_FILTER | {"pid": A}))
    assert_golden(trace_path, "steps_top_kernels", "pid_a", prepare=_bounds(WINDOWS), **params)


def test_step_top_kernels_ranks_ties_by_name_and_shares_over_every_kernel(trace_path):
    # The ranking both steps top-kernel queries share, on made-up per-kernel rows (see the
    # probe): ties go to the lower name id, and the kernels past $top count in the share.
    assert_golden(trace_path, "_step_top_kernels", "ties", top=2)


def _range_step_work(trace):
    from tracelens import _resources

    _bounds(RANGES)(trace)
    sql = "CREATE TEMP TABLE step_work AS " + _resources.query("steps_range_work")
    trace.db.execute(sql, {"first": 1, "last": 3, **NO_IDS})


@pytest.mark.parametrize("filters", [{}, {"pid": A}, {"device": 1}], ids=["all", "pid_a", "dev1"])
def test_steps_range_top_kernels_is_top_kernels_of_the_range_work(trace_path, filters):
    # Step 1: A's GEMM (300; B's FILL has A's correlation id but another process); step 2:
    # A's FILL (40); step 3 (nested in step 2): REDUCE (60). Device 1's kernel is in none.
    from fixtures.step_work_top import top_kernels_over_step_work

    from queries.golden import query_csv

    params = dict(top=2, **(NO_FILTER | filters))
    one = query_csv(trace_path, "steps_range_top_kernels", _bounds(RANGES), **params)
    with tracelens.open(trace_path) as trace:
        _range_step_work(trace)
        two = top_kernels_over_step_work(trace, **params).write_csv()
    assert one == two
    if not filters:
        assert_golden(
            trace_path, "steps_range_top_kernels", "three_steps", _bounds(RANGES), **params
        )


def _kernel_totals(trace):
    # the per-step kernel totals tracelens.steps_ranges counts for the three steps of RANGES
    # (each kernel in the step of its call; B's FILL is in no step), as step_kernel_totals
    ids = dict(trace.db.execute("SELECT value, id FROM strings").fetchall())
    rows = [
        (1, 0, ids[XMMA_GEMM], 1, 300),
        (2, 0, ids[FILL], 1, 40),
        (3, 0, ids[REDUCE_SUM], 1, 60),
    ]
    columns = ["step", "device", "name_id", "calls", "total_ns"]
    trace.db.register("step_kernel_totals", pl.DataFrame(rows, schema=columns, orient="row"))


def test_steps_range_kernel_ranks_rank_as_steps_range_top_kernels(trace_path):
    # The same ranking over the totals the step search counted: the rows the query over
    # the range work gives (its golden three_steps)
    from queries.golden import query_csv

    params = dict(top=2, **NO_FILTER)
    ranked = query_csv(trace_path, "steps_range_kernel_ranks", _kernel_totals, top=2)
    assert ranked == query_csv(trace_path, "steps_range_top_kernels", _bounds(RANGES), **params)
    assert_golden(trace_path, "steps_range_kernel_ranks", "three_steps", _kernel_totals, top=2)


def _select_windows(trace):
    # selection 1: the work of the two period steps of WINDOWS on device 0 (A's GEMM, B's
    # FILL, the copy, A's FILL and REDUCE)
    from tracelens.filters import select_work

    _bounds(WINDOWS)(trace)
    select_work(trace, "steps_window_work", **NO_IDS)


PASSING = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=1)


@pytest.mark.parametrize(
    ("case", "filters"), [("all", {}), ("device_1", {"device": 1}), ("pid_b", {"pid": B})]
)
def test_selection_passing_size(trace_path, case, filters):
    # 5 operations in the selection; none on device 1 (its kernel is in no window); B's 1
    params = PASSING | filters
    assert_golden(trace_path, "_selection_passing_size", case, _select_windows, **params)


def _select_b_in_step_work(trace):
    # step_work: the two steps' work; selection 1: B's part of it (its FILL, in step 1)
    from tracelens.filters import select_work

    _step_work(trace)
    select_work(trace, "steps_window_work", **(NO_IDS | {"pid": B}))


def test_steps_selected_steps(trace_path):
    assert_golden(trace_path, "steps_selected_steps", "pid_b", _select_b_in_step_work, selection=1)


@pytest.mark.parametrize(("case", "filters"), [("all", {}), ("pid_b", {"pid": B})])
def test_steps_passing_work(trace_path, case, filters):
    # step 1 on device 0: A's GEMM, B's FILL (stream 20) and A's copy; step 2: A's FILL and
    # REDUCE; with B alone its FILL
    assert_golden(trace_path, "steps_passing_work", case, _step_work, **(NO_FILTER | filters))
