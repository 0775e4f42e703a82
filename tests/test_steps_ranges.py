"""tracelens.steps_ranges: steps from NVTX ranges computed from three reads and polars must be
exactly the rows of queries/steps_by_range.sql (the statement of what a step holds): on a
trace with nested and crossing matching ranges, several threads (of one process: the thread
whose ranges launched the most defines the steps, the other's ranges are left out) or
processes (step numbers are per thread, a step's ranges several), devices, streams, memcpys
and filters, through both ways of finding each call's step and of the busy time."""

from __future__ import annotations

import random

import polars as pl
import pytest
from fixtures.builder import FILL, FLASH_FWD, XMMA_GEMM

import tracelens
from tracelens import steps_ranges
from tracelens.filters import glob_regex, select_work
from tracelens.stepwork import step_report
from tracelens.synth import TraceBuilder

PID = 5151
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module", params=["threads", "processes", "gpu_threads"])
def trace_path(tmp_path_factory, request):
    """Two threads of one process (or two processes), each with `iter N` ranges (some
    nested, some crossing start/end ranges) and a `log` range; calls at random times launch
    kernels and memcpys on two devices (both owners' work on each). "threads": the first
    thread launches three times as often (it defines both GPUs' steps); "gpu_threads": each
    thread launches mostly to a GPU of its own (each defines that GPU's steps)."""
    processes = request.param == "processes"
    gpu_threads = request.param == "gpu_threads"
    b = TraceBuilder("3.0.0")
    owners = (PID, PID + 1)
    for pid in owners if processes else owners[:1]:
        b.process(pid, "python train.py")
    for gpu in (0, 1):
        b.gpu(gpu, "NVIDIA H100 80GB HBM3")
    rng = random.Random(11)

    def on(owner: int) -> dict:
        return {"pid": owner} if processes else {"tid": owner}

    for owner in owners:
        t = 10_000
        for i in range(12):
            end = t + rng.randrange(2_000, 6_000)
            event_type = 60 if owner != PID and i % 4 == 3 else 59
            b.nvtx_range(f"iter {i}", start=t, end=end, event_type=event_type, **on(owner))
            if i % 3 == 1:  # a nested matching range
                b.nvtx_range(f"iter {i}.x", start=t + 500, end=t + 1_500, **on(owner))
            if event_type == 60:  # a crossing one
                b.nvtx_range(
                    f"iter {i}.y", start=end - 300, end=end + 800, event_type=60, **on(owner)
                )
            b.nvtx_range("log", start=end + 10, end=end + 40, **on(owner))
            t = end + rng.choice((0, 100, 1_000))
    names = (XMMA_GEMM, FILL, FLASH_FWD)
    for _ in range(600):
        if request.param == "threads":
            owner = owners[0] if rng.random() < 0.75 else owners[1]
        else:
            owner = rng.choice(owners)
        kernel_pid = {"pid": owner} if processes else {}
        at = rng.randrange(9_000, 80_000)
        if rng.random() < 0.1:
            cid = b.runtime("cudaMemcpyAsync_v3020", start=at, end=at + 5, **on(owner))
            b.memcpy("DtoD", 4096, start=at + 100, end=at + 150, correlation_id=cid, **kernel_pid)
            continue
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5, **on(owner))
        start = at + rng.randrange(50, 3_000)
        b.kernel(
            rng.choice(names),
            start=start,
            end=start + rng.randrange(10, 900),
            # gpu_threads: nine launches in ten to the thread's own GPU
            device=owners.index(owner) ^ (rng.random() < 0.1)
            if gpu_threads
            else rng.choice((0, 1)),
            stream=rng.choice((7, 8)),
            correlation_id=cid,
            **kernel_pid,
        )
    path = tmp_path_factory.mktemp("steps_ranges") / f"steps_ranges_{request.param}.sqlite"
    b.write(path)
    return path


CASES = [
    dict(pattern=glob_regex("iter*"), match="regex", top_level=False),
    dict(pattern=glob_regex("iter ?"), match="regex", top_level=False),
    dict(pattern="iter #", match="family", top_level=True),
    dict(pattern="log", match="family", top_level=True),
    # on one of the two threads: the other's operations have no thread
    dict(pattern="iter #.y", match="family", top_level=True),
    dict(pattern=glob_regex("nothing*"), match="regex", top_level=False),
]


def _filters(trace) -> list[dict]:
    first = trace.db.execute(
        "SELECT globalPid, correlationId FROM kernels ORDER BY start LIMIT 50"
    ).pl()
    selection = select_work(trace, first).selection
    return [
        NO_FILTER,
        {**NO_FILTER, "device": 1},
        {**NO_FILTER, "stream": 8},
        {**NO_FILTER, "start_ns": 30_000, "end_ns": 50_000},
        {**NO_FILTER, "selection": selection},
    ]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['match']}:{c['pattern']}")
def test_same_rows_as_steps_by_range(trace_path, case, monkeypatch):
    with tracelens.open(trace_path) as trace:
        trace.load_nvtx_text()
        for params in _filters(trace):
            expected = trace.query("steps_by_range", **case, **params)
            args = (trace, case["pattern"], case["match"], case["top_level"], params)
            assert steps_ranges.range_steps(*args)[0].equals(expected), params
            if case["pattern"] == "iter #" and params is NO_FILTER:
                assert expected.height > 10 and expected["device"].n_unique() == 2
                # with two processes, a step is two ranges (one per process), and with a
                # thread per GPU (one per thread)
                two = trace_path.stem != "steps_ranges_threads"
                assert (expected["step"].max() < expected["ranges"][0]) == two
            # the general paths: an ASOF join, and a running maximum per group
            with monkeypatch.context() as m:
                m.setattr(steps_ranges, "_packed_search", lambda *a: False)
                m.setattr(steps_ranges, "_busy", steps_ranges._busy_by_group)
                assert steps_ranges.range_steps(*args)[0].equals(expected), params


def test_same_families_as_steps_range_families(trace_path, monkeypatch):
    """range_families gives the rows of steps_range_families.sql, and the operations it read
    serve the steps of a family as a fresh read does."""
    with tracelens.open(trace_path) as trace:
        trace.load_nvtx_text()
        for params in _filters(trace):
            expected = trace.query("steps_range_families", **params)
            found, launched = steps_ranges.range_families(trace, params)
            assert found.equals(expected), params
            if params is NO_FILTER:
                assert expected.height == 3 and expected["gpu_ns"].min() > 0
            with monkeypatch.context() as m:
                m.setattr(steps_ranges, "_packed_search", lambda *a: False)
                assert steps_ranges.range_families(trace, params)[0].equals(expected), params
            for family in ("iter #", "log", "iter #.y"):
                args = (trace, family, "family", True, params)
                fresh = steps_ranges.range_steps(*args)[0]
                assert launched.tops is not None and (fresh.height or params is not NO_FILTER)
                assert steps_ranges.range_steps(*args, launched)[0].equals(fresh), params


def test_steps_use_it(trace_path):
    with tracelens.open(trace_path) as trace:
        found = trace.steps(range="iter ?")
        trace.load_nvtx_text()
        expected = trace.query(
            "steps_by_range", pattern=glob_regex("iter ?"), match="regex", top_level=False,
            **NO_FILTER,
        )  # fmt: skip
    assert found.method == "range"
    assert found.frame.drop("warmup", "outlier").equals(
        expected.select(found.frame.columns[:-2]).sort("step", "device")
    )
    assert found.frame.schema["kernels"] == pl.Int64


def test_steps_ranges_list_every_range_of_a_step(trace_path):
    """Steps.ranges (what --step selects a step's work by) holds every range of a step that
    launched work: one per step in one process (of its thread whose ranges launched the
    most), one per process and step in two."""
    with tracelens.open(trace_path) as trace:
        found = trace.steps(range="iter ?")
        trace.load_nvtx_text()
        listed = trace.query(
            "steps_range_list", pattern=glob_regex("iter ?"), match="regex", top_level=False
        )
    assert found.ranges is not None
    # of one process's two threads, the one whose ranges launched more: the other's left out
    # (but for a thread per GPU: each defines its GPU's steps)
    kept = found.ranges["global_tid"].unique()
    assert kept.len() == (1 if trace_path.stem == "steps_ranges_threads" else 2)
    left = listed.filter(~pl.col("globalTid").is_in(kept.implode()))
    assert found.outside.left_ranges == left.height
    held = listed.filter(
        pl.col("step").is_in(found.frame["step"].unique().implode()),
        pl.col("globalTid").is_in(kept.implode()),
    )
    assert found.ranges.equals(
        held.sort("step", "range").select(
            "step", global_tid="globalTid", cpu_start_ns="start", cpu_end_ns="end"
        )
    )
    two = trace_path.stem != "steps_ranges_threads"
    assert (found.ranges.height > found.ranges["step"].n_unique()) == two


def _top_kernels_by_query(trace, ranges: pl.DataFrame, top: int, params: dict) -> pl.DataFrame:
    """steps_range_top_kernels.sql over the steps' ranges, as stepwork registers them."""
    bounds = ranges.select("step", globalTid="global_tid", start="cpu_start_ns", end="cpu_end_ns")
    trace.db.register("step_bounds", bounds)
    try:
        return trace.query("steps_range_top_kernels", top=top, **params)
    finally:
        trace.db.unregister("step_bounds")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['match']}:{c['pattern']}")
def test_kernel_totals_rank_as_steps_range_top_kernels(trace_path, case):
    """The kernel totals range_steps counts rank (ranked_kernels) to the rows of
    steps_range_top_kernels.sql; they are not counted (None) where ranges of a thread
    overlap, since that query's ASOF join may then tell another step than the marks."""
    with tracelens.open(trace_path) as trace:
        trace.load_nvtx_text()
        counted = 0
        for params in _filters(trace):
            args = (trace, case["pattern"], case["match"], case["top_level"], params)
            assert steps_ranges.range_steps(*args)[2] is None  # not asked for
            frame, ranges, totals, _ = steps_ranges.range_steps(*args, count_kernels=True)
            if totals is None:
                continue
            counted += 1
            for top in (1, 2, 5):
                expected = _top_kernels_by_query(trace, ranges, top, params)
                assert steps_ranges.ranked_kernels(trace, totals, top).equals(expected), params
            kernels = totals.group_by("step", "device").agg(pl.col("calls").sum())
            assert (
                kernels.join(frame, on=["step", "device"])
                .filter(pl.col("calls") != pl.col("kernels"))
                .is_empty()
            )
    # nested (iter*) or no (nothing*) ranges: none counted; the others under most filters
    # (3 of the 5: a filter may leave a family's steps no work)
    assert (counted >= 3) == (case["pattern"] not in (glob_regex("iter*"), glob_regex("nothing*")))


def test_a_call_recorded_twice_is_counted_once(tmp_path):
    """Two records of one call (a runtime and a driver record with the same correlationId)
    in one step: range_steps lists its kernel twice, steps_range_top_kernels.sql counts the
    call once, so no kernel totals are counted and step_report ranks by the query."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(3):
        t = 10_000 * (i + 1)
        b.nvtx_range(f"step_{i}", start=t, end=t + 5_000, tid=PID)
        for k in range(3):
            at = t + 100 + k * 1_000
            cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 50, tid=PID)
            if k == 0:
                b.runtime("cuLaunchKernel", start=at + 10, end=at + 40, tid=PID,
                          correlation_id=cid, event_class=1)  # fmt: skip
            name = XMMA_GEMM if k else FILL
            b.kernel(name, start=at + 200, end=at + 700, device=0, stream=7, correlation_id=cid)
    path = tmp_path / "twice.sqlite"
    b.write(path)
    with tracelens.open(path) as trace:
        trace.load_nvtx_text()
        args = (trace, "step_#", "family", True, NO_FILTER)
        _frame, ranges, totals, _ = steps_ranges.range_steps(*args, count_kernels=True)
        assert totals is None
        found = step_report(trace, range="step_*", top_kernels=2)
        assert found.top_kernels.equals(_top_kernels_by_query(trace, ranges, 2, NO_FILTER))
        assert found.top_kernels.filter(pl.col("rank") == 2)["calls"].to_list() == [1, 1, 1]
