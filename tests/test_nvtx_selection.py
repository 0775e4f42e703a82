"""The work selection behind --nvtx: GPU work whose launching API call lies inside a
matching NVTX range on the same thread (nsys's GPU projection), the union over ranges.

The fixture is built so that a time window, a range on another thread, a call that
straddles a range's end, or a start/end range ended on another thread would each select
something different from the right answer.
"""

from __future__ import annotations

import pytest
from fixtures.builder import add_graph_replays
from queries.golden import assert_golden

import tracelens
from tracelens.errors import UsageError
from tracelens.filters import (
    EventFilter,
    glob_regex,
    select_nvtx,
    select_work,
)
from tracelens.synth import TraceBuilder, global_pid, global_tid

PID = 100
MAIN, WORKER = 100, 101


def _launch(b, api, start, dur=10, tid=MAIN):
    return b.runtime(api, start=start, end=start + dur, pid=PID, tid=tid)


def build_selection_trace(path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "app")
    # main thread: outer > inner, inner; a range that launches nothing; a range left open
    b.nvtx_range("outer", start=0, end=1000, pid=PID, tid=MAIN)
    b.nvtx_range("inner", start=100, end=200, pid=PID, tid=MAIN)
    b.nvtx_range("inner", start=300, end=400, pid=PID, tid=MAIN, registered=True)
    b.nvtx_range("idle", start=1500, end=1600, pid=PID, tid=MAIN)
    b.nvtx_range("open", start=1050, end=None, pid=PID, tid=MAIN)
    # a start/end range opened on the main thread and ended on the worker: nsys does not
    # project it, so it selects nothing although calls lie inside it in time
    b.nvtx_range(
        "async", start=0, end=1000, pid=PID, tid=MAIN, event_type=60,
        endGlobalTid=global_tid(PID, WORKER),
    )  # fmt: skip
    # worker thread: an "inner" range spanning everything (only the worker's calls count)
    b.nvtx_range("inner", start=0, end=2000, pid=PID, tid=WORKER)

    k = "cudaLaunchKernel_v7000"
    # GPU work runs later than its launch (the CPU runs ahead), out of range time
    b.kernel("k_a", start=5000, end=5100, pid=PID, correlation_id=_launch(b, k, 50))
    b.kernel("k_b", start=5100, end=5300, pid=PID, correlation_id=_launch(b, k, 150))
    cid = _launch(b, "cudaMemcpyAsync_v3020", 350)
    b.memcpy("HtoD", 4096, start=5300, end=5400, pid=PID, correlation_id=cid)
    # starts inside the first "inner" and ends after it: inside "outer" only
    b.kernel("k_c", start=5400, end=5450, pid=PID, correlation_id=_launch(b, k, 195, 20))
    # after "outer", inside the open range (and in time inside the worker's "inner")
    b.kernel("k_d", start=5450, end=5500, pid=PID, correlation_id=_launch(b, k, 1100))
    b.kernel("k_e", start=5500, end=5600, pid=PID, correlation_id=_launch(b, k, 500, tid=WORKER))
    # a CUDA graph traced at node level: its kernels carry the graph launch's correlationId
    cid = _launch(b, "cudaGraphLaunch_v10000", 700)
    for i in range(3):
        b.kernel("k_g", start=6000 + 100 * i, end=6050 + 100 * i, pid=PID, correlation_id=cid)
    return b.write(path)


@pytest.fixture(scope="module")
def selection_trace(tmp_path_factory):
    return build_selection_trace(tmp_path_factory.mktemp("sel") / "sel.sqlite")


def _kernels(trace, where):
    df = trace.census(where=where)
    return {r["name"]: r["instances"] for r in df.iter_rows(named=True)}


@pytest.mark.parametrize(
    ("pattern", "ranges", "kernels"),
    [
        ("outer", 1, {"k_a": 1, "k_b": 1, "k_c": 1, "k_g": 3}),
        ("inner", 3, {"k_b": 1, "k_e": 1}),
        ("inn*", 3, {"k_b": 1, "k_e": 1}),
        ("open", 1, {"k_d": 1}),
        ("*", 7, {"k_a": 1, "k_b": 1, "k_c": 1, "k_d": 1, "k_e": 1, "k_g": 3}),
    ],
)
def test_selection_is_the_work_launched_inside_the_ranges(
    selection_trace, pattern, ranges, kernels
):
    with tracelens.open(selection_trace) as t:
        where, matched = select_nvtx(t, pattern)
        assert matched == ranges
        assert _kernels(t, where) == kernels


def test_memory_and_lineup_follow_the_selection(selection_trace):
    with tracelens.open(selection_trace) as t:
        inner, _ = select_nvtx(t, "inner")
        outer, _ = select_nvtx(t, "outer")
        assert t.memory_time(where=inner)["count"].to_list() == [1]
        lineup = t.lineup(where=outer)
        categories = lineup.filter(lineup["subfamily"].is_null())
        assert categories["total_ns"].sum() == 100 + 200 + 100 + 50 + 3 * 50
        timeline = t.timeline(where=inner).events
        gpu = timeline.filter(timeline["kind"].is_in(["kernel", "memcpy", "memset"]))
        assert sorted(zip(gpu["kind"], gpu["name"], strict=True))[:2] == [
            ("kernel", "k_b"),
            ("kernel", "k_e"),
        ]
        assert gpu["kind"].to_list().count("memcpy") == 1 and gpu.height == 3


def test_selections_intersect(selection_trace):
    with tracelens.open(selection_trace) as t:
        outer, _ = select_nvtx(t, "outer")
        both, matched = select_nvtx(t, "inner", outer)
        assert matched == 3
        assert _kernels(t, both) == {"k_b": 1}
        # the filters other than the selection are kept
        dev, _ = select_nvtx(t, "outer", EventFilter(device=3))
        assert dev.device == 3 and _kernels(t, dev) == {}


def test_select_work_takes_a_relation_and_an_empty_one_selects_nothing(selection_trace):
    import polars as pl

    gpid = global_pid(PID)
    with tracelens.open(selection_trace) as t:
        ids = t.sql("SELECT correlationId FROM kernels WHERE start >= 6000")["correlationId"]
        rows = pl.DataFrame({"globalPid": [gpid] * len(ids), "correlationId": ids})
        where = select_work(t, rows)
        assert _kernels(t, where) == {"k_g": 3}
        empty = select_work(t, rows.clear())
        assert empty.selection != where.selection
        assert _kernels(t, empty) == {}


def test_ranges_that_select_nothing_are_usage_errors(selection_trace):
    with tracelens.open(selection_trace) as t:
        with pytest.raises(UsageError, match="'idle' launched no GPU work"):
            select_nvtx(t, "idle")
        with pytest.raises(UsageError, match="1 of them end on another thread"):
            select_nvtx(t, "async")
        with pytest.raises(UsageError, match="no NVTX range labelled 'iner'; closest: 'inner'"):
            select_nvtx(t, "iner")
        idle_free, _ = select_nvtx(t, "inner")
        with pytest.raises(UsageError, match="is in the rest of the selection"):
            select_nvtx(t, "open", idle_free)


@pytest.mark.parametrize("pattern", ["inner", "outer"])
def test_golden_selected_work(selection_trace, pattern):
    assert_golden(
        selection_trace,
        "nvtx_selected_work",
        pattern,
        prepare=tracelens.Trace.load_nvtx_text,
        label_re=glob_regex(pattern),
    )


def test_golden_matching_ranges(selection_trace):
    assert_golden(
        selection_trace,
        "nvtx_matching_ranges",
        "async",
        prepare=tracelens.Trace.load_nvtx_text,
        label_re=glob_regex("async"),
    )


def test_graph_replays_traced_at_graph_level_follow_the_selection(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "app")
    b.nvtx_range("replay", start=0, end=100, pid=PID, tid=MAIN)
    inside = _launch(b, "cudaGraphLaunch_v10000", 10)
    outside = _launch(b, "cudaGraphLaunch_v10000", 200)
    cid = _launch(b, "cudaLaunchKernel_v7000", 20)
    b.kernel("k", start=1000, end=1010, pid=PID, correlation_id=cid)
    path = b.write(tmp_path / "graph.sqlite")
    add_graph_replays(
        path,
        [
            (start, start + 500, 0, 1, None, 7, corr, global_pid(PID), 1, 1)
            for corr, start in ((inside, 2000), (outside, 3000))
        ],
    )
    with tracelens.open(path) as t:
        where, _ = select_nvtx(t, "replay")
        assert t.graph_replays(where) == (1, 500)
        assert t.graph_replays() == (2, 1000)
