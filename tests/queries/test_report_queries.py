"""Golden tests of the query files behind the report: tracelens.activity (the timeline's
bins, operations and NVTX ranges) and tracelens.stakeout.kernel_profiles (the stakeout of
several kernels at once). Each case is a tiny trace built here; the expected CSVs are in
golden/ (see golden.py for how to review an update)."""

from __future__ import annotations

import pytest

from queries.golden import assert_golden
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder
from tracelens.trace import list_param

GEMM = "void gemm_kernel<float>(float*, int)"
FILL = "void fill_kernel<4>(float*)"
ODD = "odd_kernel"


@pytest.fixture(scope="module")
def steps_trace(tmp_path_factory):
    """Two repeated 'step_N' ranges (one launching two kernels and a copy on two streams),
    a longer range that does not repeat, a nested range, a mark, and a second thread."""
    b = TraceBuilder("3.25.0")
    b.process(10, "train")
    b.gpu(0)
    b.nvtx_range("outer", start=0, end=100_000, pid=10, tid=1)
    for i, t0 in enumerate((1_000, 40_000), start=1):
        b.nvtx_range(f"step_{i}", start=t0, end=t0 + 20_000, pid=10, tid=1)
        c1 = b.runtime("cudaLaunchKernel_v7000", start=t0 + 100, end=t0 + 200, pid=10, tid=1)
        gemm_end = t0 + 5_000 + 4_000 * i  # 4 µs, then 8 µs
        b.kernel(GEMM, start=t0 + 5_000, end=gemm_end, pid=10, stream=7, correlation_id=c1)
        c2 = b.runtime("cudaLaunchKernel_v7000", start=t0 + 300, end=t0 + 400, pid=10, tid=1)
        b.kernel(FILL, start=t0 + 9_500, end=t0 + 9_900, pid=10, stream=8, correlation_id=c2)
        c3 = b.runtime("cudaMemcpyAsync_v3020", start=t0 + 500, end=t0 + 600, pid=10, tid=1)
        b.memcpy("HtoD", 4096, start=t0 + 10_000, end=t0 + 10_800, pid=10, correlation_id=c3)
    b.nvtx_range("inner", start=2_000, end=3_000, pid=10, tid=1)
    b.nvtx_range("loader", start=500, end=90_000, pid=10, tid=2, registered=True)
    b.nvtx_mark("checkpoint", at=5_000, pid=10, tid=1)
    # Launched by another thread inside step_1's time: not step_1's work.
    c4 = b.runtime("cudaLaunchKernel_v7000", start=2_500, end=2_600, pid=10, tid=2)
    b.kernel(ODD, start=74_000, end=76_000, pid=10, stream=9, correlation_id=c4)
    b.memset(256, start=80_000, end=80_100, pid=10, stream=7)
    return b.write(tmp_path_factory.mktemp("steps") / "steps.sqlite")


def test_activity_bins(steps_trace):
    # Four bins of 25 µs; odd_kernel (74-76 µs) is split over the last two. Kernels are
    # colored by the categories in the temp table activity_categories: gemm_kernel (id 1)
    # is 'gemm' there, the others have no entry ('other').
    from tracelens.activity import KernelCategories, _install_categories

    def setup(t):
        _install_categories(t, KernelCategories([1], ["gemm"]))

    assert_setup_golden(
        steps_trace, "activity_bins", "four_bins", setup, t0=0, t1=100_000, bins=4,
        name_kind="demangled", work="trace",
    )  # fmt: skip


def test_activity_operations_window_and_limit(steps_trace):
    assert_golden(
        steps_trace, "activity_operations", "window", t0=40_000, t1=80_050, limit=4,
        name_kind="demangled", **EventFilter().params(),
    )  # fmt: skip


def test_activity_operations_filtered(steps_trace):
    # A page narrowed to stream 8 (report --stream 8): only fill_kernel's launches of the
    # window; gemm_kernel (stream 7) and the copies (stream 0) are left out.
    assert_golden(
        steps_trace, "activity_operations", "stream_8", t0=0, t1=100_000, limit=10,
        name_kind="demangled", **EventFilter(stream=8).params(),
    )  # fmt: skip


def test_stakeout_profile_queries_filtered(steps_trace):
    # From 40 µs on (report --start 40us): each kernel's second launch alone, gemm_kernel's
    # 8 µs one; the kernels before the window are in no spread, bin or configuration.
    args = {"names": list_param([GEMM, FILL]), "name_kind": "demangled"}
    late = args | EventFilter(start_ns=40_000).params()
    assert_golden(steps_trace, "stakeout_spread", "from_40us", **late)
    assert_golden(steps_trace, "stakeout_log_histogram", "from_40us", per_octave=4, **late)
    assert_golden(steps_trace, "stakeout_configs", "from_40us", **late)


def test_activity_kernel_names(steps_trace):
    assert_golden(steps_trace, "activity_kernel_names", "short", name_kind="short", work="trace")


def assert_setup_golden(trace_path, query: str, case: str, setup, **params) -> None:
    """assert_golden for a query that needs ``setup(trace)`` first (a temp table)."""
    import os

    import tracelens
    from queries import golden

    with tracelens.open(trace_path) as t:
        setup(t)
        actual = t.query(query, **params).write_csv()
    expected = golden.GOLDEN / f"{query}__{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected.write_text(actual)
    assert actual == expected.read_text(), f"{query} [{case}] differs from its golden CSV"


def assert_nvtx_golden(trace_path, query: str, case: str, **params) -> None:
    """A query over NVTX text needs Trace.load_nvtx_text() first."""
    assert_setup_golden(trace_path, query, case, lambda t: t.load_nvtx_text(), **params)


def test_activity_nvtx_ranges(steps_trace):
    # Marks are not ranges; min_ns drops 'inner' (1 µs); the window keeps what overlaps it.
    assert_nvtx_golden(
        steps_trace, "activity_nvtx_ranges", "window", t0=2_500, t1=45_000, min_ns=2_000, limit=3
    )


def test_stakeout_profile_queries(steps_trace):
    args = {"names": list_param([GEMM, FILL, "not launched"]), "name_kind": "demangled"}
    whole = args | EventFilter().params()
    assert_golden(steps_trace, "stakeout_spread", "two_kernels", **whole)
    assert_golden(steps_trace, "stakeout_log_histogram", "two_kernels", per_octave=4, **whole)
    assert_golden(steps_trace, "stakeout_configs", "two_kernels", **whole)
    # The three at once, from one read (the report's): each part as its query above.
    assert_golden(steps_trace, "stakeout_profiles", "two_kernels", per_octave=4, **args)


def test_report_kernel_summary(steps_trace):
    # The census of the GPU work the report read (registered as a relation): gemm_kernel's
    # two launches (4 and 8 µs: median 6 µs), fill_kernel's two, odd_kernel's one; the
    # memcpys and the memset are not kernels.
    from tracelens.report.sharedread import read_work

    def setup(t):
        t.db.register("shared_work", read_work(t))

    assert_setup_golden(
        steps_trace, "report_kernel_summary", "steps", setup, work="shared_work",
        name_kind="demangled",
    )  # fmt: skip


def test_report_lineup_activities(steps_trace):
    # lineup_activities of the whole trace, its kernels from the GPU work the report read:
    # gemm_kernel's two launches (12 µs), odd_kernel's one, fill_kernel's two; the two
    # HtoD memcpys and the memset read from the trace; short names displayed.
    from tracelens.report.sharedread import read_work

    def setup(t):
        t.db.register("shared_work", read_work(t))

    assert_setup_golden(
        steps_trace, "report_lineup_activities", "steps", setup, work="shared_work",
        name_kind="short",
    )  # fmt: skip
    with tracelens_open(steps_trace) as t:
        want = t.query("lineup_activities", by=None, name_kind="short", **_no_filter())
        t.db.register("shared_work", read_work(t))
        got = t.query("report_lineup_activities", work="shared_work", name_kind="short")
    assert got.drop("group_key").equals(want.drop("group_key"))


def test_report_lineup_kernels(steps_trace):
    # The line-up by demangled name, its kernels from the census of the GPU work the report
    # read (report_kernel_summary's name_id, launches, summed_ns: gemm_kernel's two launches,
    # 12 µs; odd_kernel's one; fill_kernel's two): the rows report_lineup_activities gives
    # from the work itself; memcpys and the memset read from the trace.
    from tracelens.report.sharedread import KERNEL_COLUMNS, read_work

    def setup(t):
        t.db.register("shared_work", read_work(t))
        kernels = t.query("report_kernel_summary", work="shared_work", name_kind="demangled")
        t.db.register("census_kernels", kernels.select(KERNEL_COLUMNS))

    assert_setup_golden(
        steps_trace, "report_lineup_kernels", "steps", setup, kernels="census_kernels"
    )
    with tracelens_open(steps_trace) as t:
        setup(t)
        want = t.query("report_lineup_activities", work="shared_work", name_kind="demangled")
        got = t.query("report_lineup_kernels", kernels="census_kernels")
    assert got.schema == want.schema
    assert got.equals(want)


def tracelens_open(path):
    import tracelens

    return tracelens.open(path)


def _no_filter() -> dict:
    from tracelens.filters import EventFilter

    return {"selection": None, **EventFilter().params()}


def test_report_stakeout_queries(steps_trace):
    # The stakeout read directly: the spreads and histograms of the GPU work the report read
    # (stakeout_spread's and stakeout_log_histogram's rows, two_kernels above), the ids of
    # the names (the text of each, once here), and SQLite's launch configurations per name
    # id: gemm_kernel's two launches share one configuration (12 µs), fill_kernel's two
    # another; no row holds what nsys never writes (odd 0).
    import json

    from tracelens.report.sharedread import for_duckdb, read_work

    names = list_param([GEMM, FILL, "not launched"])

    def setup(t):
        t.db.register("shared_work", for_duckdb(read_work(t)))

    assert_setup_golden(
        steps_trace, "report_stakeout_durations", "two_kernels", setup, work="shared_work",
        names=names, name_kind="demangled", per_octave=4,
    )  # fmt: skip
    assert_golden(steps_trace, "report_name_ids", "two_kernels", names=names)
    with tracelens_open(steps_trace) as t:
        ids = t.query("report_name_ids", names=names)["id"].to_list()
    assert_golden(
        steps_trace, "report_stakeout_configs_export", "two_kernels", export_tables=True,
        name_ids=json.dumps(ids), name_kind="demangled",
    )  # fmt: skip


def test_report_runtime_processes(steps_trace):
    # The header's processes with CUDA API calls: the distinct threads of the calls as
    # SQLite reads them (pid 10's threads 1 and 2, in the order of their first calls), and
    # their one process through the view.
    assert_golden(steps_trace, "report_runtime_threads_export", "two_threads", export_tables=True)
    assert_golden(steps_trace, "report_runtime_pids", "two_threads")


def test_lineup_activity_rows(steps_trace):
    # queries/_lineup.sql, which lineup_activities and report_lineup_activities share: the
    # kernels handed over named from StringIds (demangled 1, displayed as id 2's text; an
    # unknown id said so), the two HtoD memcpys and the memset (all on stream 7) grouped
    # by stream and labelled.
    assert_golden(steps_trace, "_lineup", "by_stream")
