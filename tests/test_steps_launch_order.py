"""The launch sequence of tracelens steps' period search: queries/steps_launch_rows.sql read
unordered and put in launch order by tracelens.steps_order.launch_order, which must give
exactly the order of queries/steps_launches.sql (device, correlation id NULL last, start,
stream, end, kernels before replays, replays by graph), ties included, by each of its ways
of sorting; and host_order, the same order for rows read in GPU order (the diff's)."""

from __future__ import annotations

import random

import polars as pl
import pytest
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM, add_graph_replays

import tracelens
from tracelens.steps_order import host_order, launch_order, launch_tokens
from tracelens.steps_period import LaunchSequence
from tracelens.synth import TraceBuilder

PID = 4242
NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)
KEYS = ("device", "correlation_id", "start_ns", "stream", "end_ns", "graph")
NULLS_LAST = [False, True, False, False, False, False]


def _reference(rows: pl.DataFrame) -> list[int]:
    """Row numbers in launch order, by a plain sort on every key."""
    graph = pl.when(pl.col("token") <= -2).then(-2 - pl.col("token")).alias("graph")
    ordered = rows.with_row_index("row").with_columns(graph).sort(KEYS, nulls_last=NULLS_LAST)
    return ordered["row"].to_list()


def _rows(starts, devices, rng, span) -> pl.DataFrame:
    n = len(starts)
    # few distinct correlation ids (kernels of one graph launch share one), some NULL
    launched = (0, 1, span // 3, span // 2, span, None)
    return pl.DataFrame(
        {
            "device": pl.Series(devices, dtype=pl.Int32),
            "stream": [rng.choice((7, 13, 20)) for _ in range(n)],
            "start_ns": starts,
            "correlation_id": [rng.choice(launched) for _ in range(n)],
            # distinct ends: rows tied on every key have no defined order
            "end_ns": [s + 1_000 + i for i, s in enumerate(starts)],
            "token": [rng.choice((0, 1, 2, -1, -2, -5)) for _ in range(n)],
        },
        schema_overrides={"stream": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )


@pytest.mark.parametrize(
    "span, device_ids",
    [
        (10_000, (0, 1, 3)),  # device, correlation id and row number packed in one key
        ((1 << 62) + 5, (0, 1)),  # no room for them: a sort on every key
    ],
    ids=["packed", "every_key"],
)
def test_launch_order_matches_a_sort_on_every_key(span, device_ids):
    rng = random.Random(span)
    n = 400
    # few distinct starts: many launches tie on device, correlation id and start
    starts = [rng.choice((0, 1, 1_000, 5_000, 10_000)) for _ in range(n)]
    starts += [rng.randrange(10_000) for _ in range(n)]
    devices = [rng.choice(device_ids) for _ in range(2 * n)]
    rows = _rows(starts, devices, rng, span)
    expected = _reference(rows)
    assert launch_order(rows).to_list() == expected
    assert launch_order(rows.head(0)).to_list() == []
    # Rows read in GPU order (device, start, stream, end, graph), as the diff reads them:
    # host_order gives the same launch order by a stable sort of device and correlation id.
    graph = pl.when(pl.col("token") <= -2).then(-2 - pl.col("token")).alias("graph")
    gpu = rows.with_columns(graph).sort("device", "start_ns", "stream", "end_ns", "graph")
    in_gpu_order = (
        rows.with_row_index("row")
        .with_columns(graph)
        .sort("device", "start_ns", "stream", "end_ns", "graph")["row"]
    )
    assert in_gpu_order.gather(host_order(gpu)).to_list() == expected
    # Read without streams: with launches that tie on device, correlation id and start,
    # only the stream orders them, and launch_order says it needs them.
    streamless = rows.with_columns(stream=pl.lit(None, dtype=pl.Int64))
    assert launch_order(streamless, streams=False) is None
    # With distinct starts it does not: the same order as with them.
    distinct = rows.with_columns(start_ns=pl.int_range(pl.len(), dtype=pl.Int64) * 7 % 801)
    ordered = launch_order(distinct.with_columns(stream=pl.lit(None, dtype=pl.Int64)), False)
    assert ordered is not None and ordered.to_list() == _reference(distinct)


def _read_queries(trace, monkeypatch) -> tuple[LaunchSequence, list[bool]]:
    """LaunchSequence.read of every launch, and the $streams of each steps_launch_rows it
    ran."""
    from tracelens.trace import Trace

    asked: list[bool] = []
    query = Trace.query

    def recorded(self, name, **params):
        if name == "steps_launch_rows":
            asked.append(params["streams"])
        return query(self, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    try:
        return LaunchSequence.read(trace, NO_FILTER), asked
    finally:
        monkeypatch.setattr(Trace, "query", query)


def _tokens(sequence: LaunchSequence) -> list[list[int]]:
    return [sequence.tokens(o, c).to_list() for _, o, c in sequence.devices()]


def test_streams_are_read_only_for_launches_that_tie_on_start(tmp_path, monkeypatch):
    """Two streams of one device, each kernel its own launch: the host order needs no
    stream, and the read leaves it out. Kernels of one launch (one correlation id, as a
    CUDA graph's) that start in the same ns on two streams: ordered by stream, read again
    with them. Both routes give the order of steps_launches.sql."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    names = (XMMA_GEMM, FILL, FLASH_FWD)
    for i in range(60):
        # GPU start order differs from launch order: stream 8's kernels run first
        stream = 7 if i % 2 else 8
        start = 1_000_000 + 1_000 * i + (0 if stream == 7 else -1_500)
        b.kernel(names[i % 3], start=start, end=start + 400, stream=stream)
    path = tmp_path / "two_streams.sqlite"
    b.write(path)
    with tracelens.open(path) as trace:
        sequence, asked = _read_queries(trace, monkeypatch)
        expected = trace.query("steps_launches", **NO_FILTER)["name_id"].to_list()
    assert asked == [False]
    assert _tokens(sequence) == [expected]
    assert sequence.rows["stream"].null_count() == sequence.rows.height

    # one launch's kernels on two streams at one start: the stream orders them
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 5, start = 2000000, "
            '"end" = 2000400 + rowid WHERE rowid IN (1, 2)'  # streams 8 and 7
        )
    with tracelens.open(path) as trace:
        sequence, asked = _read_queries(trace, monkeypatch)
        launches = trace.query("steps_launches", **NO_FILTER)
    assert asked == [False, True]
    assert _tokens(sequence) == [launches["name_id"].to_list()]
    tied = sequence.rows.filter(pl.col("start_ns") == 2_000_000)
    assert tied["stream"].sort().to_list() == [7, 8]


def test_read_order_is_steps_launches_order(tmp_path):
    """On a built export with kernels and graph replays that tie on start."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python decode.py")
    for gpu in (0, 2):
        b.gpu(gpu, "NVIDIA H100 80GB HBM3")
    rng = random.Random(3)
    names = (XMMA_GEMM, FILL, FLASH_FWD, REDUCE_SUM)
    replays = []
    for i in range(300):
        start = 1_000_000 + rng.choice((0, 10, 20)) * (i // 3)
        device = rng.choice((0, 2))
        stream = rng.choice((7, 8))
        if i % 7 == 0:
            graph = rng.choice((1, 2))
            replays.append((start, start + 50 + i, device, 1, None, stream, None, None, graph, 9))
            continue
        b.kernel(rng.choice(names), start=start, end=start + 100 + i, device=device, stream=stream)
    path = tmp_path / "ties.sqlite"
    b.write(path)
    add_graph_replays(path, replays)
    with tracelens.open(path) as trace:
        launches = trace.query("steps_launches", **NO_FILTER)
        expected = launches.select(
            pl.col("device").cast(pl.Int32), "start_ns", "end_ns", token=launch_tokens(launches)
        )
        sequence = LaunchSequence.read(trace, NO_FILTER)
    assert expected["token"].min() <= -2  # replays are in it
    got = pl.concat(
        sequence.times(offset, count).select(
            pl.lit(device, dtype=pl.Int32).alias("device"), "start_ns", "end_ns", "token"
        )
        for device, offset, count in sequence.devices()
    )
    assert got.equals(expected)
    tokens = pl.concat(sequence.tokens(o, c) for _, o, c in sequence.devices())
    assert tokens.to_list() == expected["token"].to_list()
    given = LaunchSequence.given(launches)
    assert [given.tokens(o, c).to_list() for _, o, c in given.devices()] == [
        sequence.tokens(o, c).to_list() for _, o, c in sequence.devices()
    ]
