"""The fingerprint sorts its launches once, in host launch order (orders.launch_order), and
takes the units' order from it where the units follow one another in it: that order must be
the one a sort of the units gives (unit, correlation id NULL last, start, code), CUDA graph
kernels that share a call and a start included, and the step search must see the launch
sequence it reads itself."""

from __future__ import annotations

import importlib
import random

import polars as pl

import tracelens
from tracelens.fingerprint import nvtxpaths

orders = importlib.import_module("tracelens.fingerprint.order")


def _launches(seed: int, n: int = 400) -> pl.DataFrame:
    """Launches of 3 devices in random row order; calls launch 1-4 kernels (a graph),
    several of which start together; some calls have no correlation id."""
    rng = random.Random(seed)
    rows = []
    for device in range(3):
        corr = 0
        while len(rows) < (device + 1) * n // 3:
            corr += rng.randint(1, 3)
            start = rng.randint(0, 10_000)
            for _ in range(rng.randint(1, 4)):
                if rng.random() < 0.5:
                    start += rng.randint(0, 5)
                rows.append(
                    {
                        "device": device,
                        "correlation_id": None if rng.random() < 0.05 else corr,
                        "start_ns": start,
                        "stream": rng.choice([7, 13, None]),
                        "end_ns": start + rng.randint(0, 3),
                        "code": rng.randint(0, 5),
                    }
                )
    rng.shuffle(rows)
    schema = {"device": pl.Int32, "correlation_id": pl.Int64, "start_ns": pl.Int64}
    schema.update(stream=pl.Int64, end_ns=pl.Int64, code=pl.Int32)
    return pl.DataFrame(rows, schema=schema)


def _by_sort(frame: pl.DataFrame) -> list[tuple]:
    order, unit = orders.unit_order(frame)
    return frame[order].select("device", "correlation_id", "start_ns", "code").rows()


def test_units_in_launch_order_are_the_units_sorted():
    """Without steps or regions (a unit per device) the units take the launch order; the
    same launches, unit by unit, as the sort gives them (ties of call and start by code)."""
    for seed in range(20):
        frame = _launches(seed).with_columns(
            step=pl.lit(None, pl.Int64), region_id=pl.lit(None, pl.Int64)
        )
        launched = orders.launch_order(frame)
        order, unit = orders.unit_order(frame, launched)
        got = frame[order].select("device", "correlation_id", "start_ns", "code").rows()
        assert got == _by_sort(frame)
        assert unit.to_list() == orders.unit_order(frame)[1].to_list()


def test_graph_kernels_that_start_together_are_ordered_by_code():
    """The launch order puts kernels of one call that start together by stream and end; a
    unit puts them by code (what the old sort gave: fails if the ties are left as they
    are)."""
    frame = pl.DataFrame(
        {
            "device": pl.Series([0, 0, 0, 0], dtype=pl.Int32),
            "correlation_id": [5, 5, 5, 6],
            "start_ns": [10, 10, 10, 20],
            "stream": [7, 13, 15, 7],
            "end_ns": [11, 12, 13, 21],
            "code": pl.Series([3, 1, 2, 0], dtype=pl.Int32),
            "step": pl.Series([None] * 4, dtype=pl.Int64),
            "region_id": pl.Series([None] * 4, dtype=pl.Int64),
        }
    )
    launched = orders.launch_order(frame)
    assert launched.to_list() == [0, 1, 2, 3]
    order, _ = orders.unit_order(frame, launched)
    assert order.to_list() == [1, 2, 0, 3]


def test_units_that_do_not_follow_the_launch_order_are_sorted():
    """Steps that are not in launch order (a step's launches around another's) and a NULL
    step before and after them: the units are sorted, as without the launch order."""
    frame = _launches(3).with_columns(region_id=pl.lit(None, pl.Int64))
    step = (pl.col("start_ns") // 2_000 % 3).cast(pl.Int64)
    frame = frame.with_columns(step=pl.when(step > 0).then(step))
    launched = orders.launch_order(frame)
    assert not frame["step"].gather(launched).is_sorted()
    order, unit = orders.unit_order(frame, launched)
    got = frame[order].select("device", "step", "correlation_id", "start_ns", "code").rows()
    order0, unit0 = orders.unit_order(frame)
    want = frame[order0].select("device", "step", "correlation_id", "start_ns", "code").rows()
    assert got == want and unit.to_list() == unit0.to_list()


def test_launch_order_is_the_step_searchs_host_order():
    """orders.launch_order is the order the step search gives launches read in GPU order
    (steps_order.host_order over orders.start_order)."""
    from tracelens.steps_order import host_order

    for seed in range(10):
        frame = _launches(seed)
        gpu = orders.start_order(frame)
        want = gpu.gather(host_order(frame.select("device", "correlation_id")[gpu]))
        assert orders.launch_order(frame).to_list() == want.to_list()


def test_two_processes_calls_with_one_id_and_start_stay_in_their_process():
    """Several processes on a device (a ``process`` rank per launch): the launch order is
    by process before correlation id, and two processes' launches with the same id and
    start are not reordered by code across them; random launches match the sort too (the
    same launches; those alike in all of these in either order)."""
    frame = pl.DataFrame(
        {
            "device": pl.Series([0, 0, 0], dtype=pl.Int32),
            "process": [0, 1, 1],
            "correlation_id": [5, 5, 6],
            "start_ns": [10, 10, 20],
            "stream": [7, 7, 7],
            "end_ns": [11, 11, 21],
            "code": pl.Series([3, 1, 0], dtype=pl.Int32),
            "step": pl.Series([None] * 3, dtype=pl.Int64),
            "region_id": pl.Series([None] * 3, dtype=pl.Int64),
        }
    )
    by_launch = [("device", True), ("process", True), ("correlation_id", True)]
    launched = orders.sort_order(frame, by_launch, ("start_ns", "stream", "end_ns"))
    assert orders.unit_order(frame, launched)[0].to_list() == [0, 1, 2]
    for seed in range(10):
        rows = _launches(seed).with_row_index("i")
        frame = rows.with_columns(
            process=(pl.col("i") % 2).cast(pl.Int64),
            step=pl.lit(None, pl.Int64),
            region_id=pl.lit(None, pl.Int64),
        ).drop("i")
        launched = orders.sort_order(frame, by_launch, ("start_ns", "stream", "end_ns"))
        order, _ = orders.unit_order(frame, launched)
        described = ["process", "correlation_id", "start_ns", "code"]
        assert (
            frame[order].select(described).rows()
            == frame[orders.unit_order(frame)[0]].select(described).rows()
        )


def test_a_process_per_device_is_read_without_the_process(tmp_path):
    """One process per device (a DDP job's ranks, as the 5M-kernel bench trace): the
    launches are read without their process (each would rank 0 on its device: the same
    order), two processes on one device with it."""
    from test_multiprocess_order import Process, build

    units = importlib.import_module("tracelens.fingerprint.units")
    apart = build(tmp_path / "apart.sqlite", [Process(4242, device=0), Process(5151, device=1)])
    shared = build(tmp_path / "shared.sqlite", [Process(4242), Process(5151, start=1_005_000)])
    for path, with_process in ((apart, False), (shared, True)):
        with tracelens.open(path) as trace:
            nvtxpaths.create_paths(trace)
            launches = units.read_launches(trace, paths=False)
        assert ("global_pid" in launches.columns) == with_process


def _graph_launch(path, start_together: bool):
    """One process, one GPU: 6 calls of one kernel each, then one call (a CUDA graph launch)
    whose two kernels run on streams 9 and 7, the one on 9 ending first; they start in the
    same ns when ``start_together``."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    for i in range(6):
        cid = b.runtime("cudaLaunchKernel_v7000", start=1_000 + i * 100, end=1_010 + i * 100)
        b.kernel(f"void k{i}(float*)", start=2_000 + i * 100, end=2_050 + i * 100,
                 correlation_id=cid)  # fmt: skip
    cid = b.runtime("cudaGraphLaunch_v10000", start=1_700, end=1_710)
    b.kernel("void g9(float*)", start=3_000, end=3_040, stream=9, correlation_id=cid)
    second = 3_000 if start_together else 3_001
    b.kernel("void g7(float*)", start=second, end=3_050, stream=7, correlation_id=cid)
    return b.write(path)


def test_the_stream_is_read_only_when_launches_start_together(tmp_path, monkeypatch):
    """The launches are read without their stream (DuckDB leaves streamId out of the scan),
    which orders only launches of one call that start in the same ns: then they are read
    again with it, and the launch order is the step search's (stream 7 before 9, where end
    alone put 9 first)."""
    build_module = importlib.import_module("tracelens.fingerprint.build")
    units = importlib.import_module("tracelens.fingerprint.units")
    reads = []
    real = units.read_launches

    def counting(trace, **kwargs):
        reads.append(kwargs.get("streams", True))
        return real(trace, **kwargs)

    monkeypatch.setattr(build_module, "read_launches", counting)
    for together, want_reads in ((False, [False]), (True, [False, True])):
        reads.clear()
        path = _graph_launch(tmp_path / f"g{together}.sqlite", together)
        with tracelens.open(path) as trace:
            nvtxpaths.create_paths(trace)
            launches, order = build_module._launches_in_order(trace, False)
            with_stream = real(trace, paths=False)
        assert reads == want_reads
        assert ("stream" in launches.columns) == together
        assert (
            launches[order]["start_ns"].to_list()
            == with_stream[orders.launch_order(with_stream)]["start_ns"].to_list()
        )
        if together:
            assert launches[order]["stream"].to_list()[-2:] == [7, 9]
        with tracelens.open(path) as trace:
            doc = tracelens.fingerprint(trace)
        assert doc["launches"] == 8
