"""Golden tests of the steps query files on a tiny trace built here: two top-level
`decode_step_N` ranges on the main thread (the second with a nested `layer` range), one
`log` range, a kernel launched inside each step, a memcpy in step 2, and a kernel
launched outside every range on device 1."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, XMMA_GEMM

import tracelens
from queries.golden import assert_golden
from tracelens.filters import glob_regex
from tracelens.synth import TraceBuilder

PID = 6060
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    t = 1_000_000

    def launch(name, at, start, dur, device=0, stream=7):
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, pid=PID)
        b.kernel(
            name, start=start, end=start + dur, device=device, stream=stream, correlation_id=cid
        )

    b.nvtx_range("decode_step_1", start=t, end=t + 100, pid=PID)
    launch(XMMA_GEMM, t + 10, t + 200, 50)
    launch(FILL, t + 20, t + 230, 40, stream=8)  # overlaps the GEMM: busy 70, kernels 90
    b.nvtx_range("decode_step_2", start=t + 300, end=t + 400, pid=PID)
    b.nvtx_range("layer", start=t + 310, end=t + 390, pid=PID)
    launch(XMMA_GEMM, t + 320, t + 500, 60)
    cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 330, end=t + 335, pid=PID)
    b.memcpy("DtoD", 4096, start=t + 600, end=t + 610, correlation_id=cid)
    b.nvtx_range("log", start=t + 700, end=t + 710, pid=PID)
    launch(FILL, t + 800, t + 900, 30, device=1)
    path = tmp_path_factory.mktemp("steps") / "steps_golden.sqlite"
    b.write(path)
    return path


def _golden(trace_path, query, case, **params):
    assert_golden(trace_path, query, case, prepare=tracelens.Trace.load_nvtx_text, **params)


def test_steps_range_families(trace_path):
    _golden(trace_path, "steps_range_families", "decode", **NO_FILTER)


def test_steps_range_tops(trace_path):
    # the top-level ranges: both decode steps (family decode_step_#, 2 ranges, example
    # decode_step_1) and log; not the layer inside step 2
    _golden(trace_path, "steps_range_tops", "decode")


def test_steps_by_range_family(trace_path):
    params = dict(pattern="decode_step_#", match="family", top_level=True, **NO_FILTER)
    _golden(trace_path, "steps_by_range", "family", **params)


def test_steps_by_range_glob(trace_path):
    params = dict(pattern=glob_regex("lay*"), match="regex", top_level=False, **NO_FILTER)
    _golden(trace_path, "steps_by_range", "nested_glob", **params)


def test_steps_range_list(trace_path):
    params = dict(pattern=glob_regex("*"), match="regex", top_level=False)
    _golden(trace_path, "steps_range_list", "all", **params)
    _golden(trace_path, "steps_range_list", "family", pattern="decode_step_#", match="family",
            top_level=True)  # fmt: skip


def _register_steps(trace):
    trace.load_nvtx_text()
    steps = trace.query("steps_range_list", pattern=glob_regex("*"), match="regex", top_level=False)
    trace.db.register("step_ranges", steps)


def test_steps_range_marks(trace_path):
    # every range is a step: decode_step_1 [t, t+100] (1), decode_step_2 [t+300, t+400] (2)
    # holding layer [t+310, t+390] (3), log [t+700, t+710] (4); after layer ends, calls go
    # to decode_step_2 again, after it ends to none
    assert_golden(trace_path, "steps_range_marks", "all", prepare=_register_steps)


def test_steps_range_ops(trace_path):
    # Unordered by design: compared sorted. The memcpy's call is on the thread too.
    import polars as pl

    from queries.golden import GOLDEN
    from tracelens.trace import list_param

    with tracelens.open(trace_path) as t:
        tids = t.db.execute("SELECT DISTINCT globalTid FROM runtime_calls").pl()["globalTid"]
        rows = t.query("steps_range_ops", tids=list_param(tids.to_list()), **NO_FILTER)
        others = t.query("steps_range_ops", tids=list_param([12345]), **NO_FILTER)
    # launched from none of $tids: every operation, without a thread or call
    assert others.height == rows.height and others["thread"].null_count() == rows.height
    assert others["call_key"].null_count() == rows.height
    assert rows["thread"].null_count() == 0
    actual = rows.sort(pl.all()).write_csv()
    assert actual == (GOLDEN / "steps_range_ops__all.csv").read_text()


def test_steps_range_count(trace_path):
    _golden(trace_path, "steps_range_count", "decode", label_re=glob_regex("decode_step_*"))


def test_steps_launches(trace_path):
    _golden(trace_path, "steps_launches", "all", **NO_FILTER)


def test_steps_launch_rows(trace_path):
    # Unordered by design (tracelens.steps_order.launch_order sorts them): compared sorted.
    import polars as pl

    from queries.golden import GOLDEN

    with tracelens.open(trace_path) as t:
        rows = t.query("steps_launch_rows", **NO_FILTER, streams=True, pids=True)
        without = t.query("steps_launch_rows", **NO_FILTER, streams=False, pids=True)
        no_pids = t.query("steps_launch_rows", **NO_FILTER, streams=True, pids=False)
    # without the streams: the same rows, their stream NULL; without the processes, pid NULL
    assert without["stream"].null_count() == without.height
    assert without.drop("stream").sort(pl.all()).equals(rows.drop("stream").sort(pl.all()))
    assert no_pids["pid"].null_count() == no_pids.height
    assert no_pids.drop("pid").sort(pl.all()).equals(rows.drop("pid").sort(pl.all()))
    assert rows.schema == {
        "device": pl.Int32,
        "stream": pl.Int64,
        "start_ns": pl.Int64,
        "end_ns": pl.Int64,
        "correlation_id": pl.Int64,
        "token": pl.Int64,
        "pid": pl.Int32,
    }
    actual = rows.sort(pl.all()).write_csv()
    assert actual == (GOLDEN / "steps_launch_rows__all.csv").read_text()


def test_steps_launches_filters(trace_path):
    # The filter is applied after the union of kernels and replays (for the sort's sake):
    # each part of it must still keep exactly the launches it keeps in every other query.
    import polars as pl

    from tracelens.filters import select_work

    with tracelens.open(trace_path) as t:
        everything = t.query("steps_launches", **NO_FILTER)
        assert everything.height == 4  # the kernels (the memcpy is not a launch here)

        def launches(**params):
            return t.query("steps_launches", **{**NO_FILTER, **params})

        assert launches(device=1).equals(everything.filter(pl.col("device") == 1))
        assert launches(stream=8).height == 1
        assert launches(pid=PID).equals(everything)
        assert launches(pid=PID + 1).is_empty()
        window = launches(start_ns=1_000_240, end_ns=1_000_600)
        assert window.equals(
            everything.filter(pl.col("end_ns") >= 1_000_240, pl.col("start_ns") <= 1_000_600)
        )
        first_two = t.db.execute(
            "SELECT globalPid, correlationId FROM kernels ORDER BY start LIMIT 2"
        ).pl()
        chosen = select_work(t, first_two)
        assert launches(selection=chosen.selection).equals(everything.head(2))

        # The unordered narrow read keeps the same launches under every filter.
        def tokens(**params):
            found = t.query(
                "steps_launch_rows", **{**NO_FILTER, **params}, streams=False, pids=False
            )
            return sorted(zip(found["start_ns"], found["token"], strict=True))

        for params in (
            {}, {"device": 1}, {"stream": 8}, {"pid": PID}, {"pid": PID + 1},
            {"start_ns": 1_000_240, "end_ns": 1_000_600}, {"selection": chosen.selection},
        ):  # fmt: skip
            assert tokens(**params) == sorted(
                launches(**params).select("start_ns", "name_id").rows()
            )


def test_step_marks_of_nested_steps(trace_path):
    # The nesting both steps_by_range and steps_range_marks read (made-up steps: the probe).
    assert_golden(trace_path, "_step_marks", "nested")


def test_step_range_calls(trace_path):
    # The calls made in NVTX range steps, steps_range_work's and fingerprint_range_steps'
    # rule (made-up steps, one nested: the probe).
    assert_golden(trace_path, "_step_range_calls", "nested")


def test_outer_step_ranges(trace_path):
    # A matching range inside an earlier one of its thread with the same label is no step
    # of its own (made-up ranges: the probe).
    assert_golden(trace_path, "_step_ranges", "outer", tracelens.Trace.load_nvtx_text)


def test_steps_period_copies(trace_path):
    # the memcpy of step 2 (device 0, [t+600, t+610]); none on device 1
    _golden(trace_path, "steps_period_copies", "all", **NO_FILTER)
    _golden(trace_path, "steps_period_copies", "device_1", **{**NO_FILTER, "device": 1})


def test_steps_host_gaps(trace_path):
    # the main thread's launch calls, t+10..15, t+20..25, t+320..325 (device 0) and t+800
    # (device 1): no gap before the first, then 5, 295 and 475 ns (the memcpy call at
    # t+330 launched no kernel); device 1 alone: its one call has none
    _golden(trace_path, "steps_host_gaps", "all", **NO_FILTER)
    _golden(trace_path, "steps_host_gaps", "device_1", **{**NO_FILTER, "device": 1})
    # a window of device 0's launches, [t+200, t+300): the GEMM and the fill that start in
    # it (correlation ids 1 and 2), none after (the calls read start before t+300)
    window = {**NO_FILTER, "device": 0, "start_ns": 1_000_200, "end_ns": 1_000_300}
    _golden(trace_path, "steps_host_gaps", "window", **window)
