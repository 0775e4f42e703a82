"""The NVTX range tree in polars (tracelens.nvtx_tree.nested) for ranges that nest: the same
rows as queries/_nvtx_tree.sql, which builds the chunks that do not nest (overlapping
start/end ranges, ranges without a thread) and is not run for those that do."""

from __future__ import annotations

import random

import polars as pl
import pytest
from test_nvtx import build_shapes

import tracelens
from tracelens import _engine, _resources, nvtx, nvtx_tree
from tracelens.synth import TraceBuilder

PID = 4242


def _nested_ranges(seed: int, threads: int = 3, top: int = 40) -> pl.DataFrame:
    """Properly nested ranges on a few threads, with the cases the depths order: identical
    ranges, empty ones, children that start or end with their parent, siblings that touch."""
    rng = random.Random(seed)
    rows: list[tuple[int, int, int]] = []

    def fill(tid: int, lo: int, hi: int, depth: int) -> None:
        at = lo
        while at <= hi and depth < 6:
            if rng.random() < 0.3:
                at += rng.randint(0, 3)
            if at > hi:
                return
            end = min(hi, at + rng.choice((0, 0, 1, 2, 5, 20, 60)))
            for _copy in range(rng.choice((1, 1, 1, 2))):  # identical ranges, now and then
                rows.append((tid, at, end))
            if end > at and rng.random() < 0.7:
                fill(tid, at, end, depth + 1)
            at = end if rng.random() < 0.3 else end + 1  # siblings touch, or not

    for tid in range(1, threads + 1):
        fill(tid << 24 | PID, 0, top * 20, 0)
    rng.shuffle(rows)
    return pl.DataFrame(
        {
            "range_id": range(1, len(rows) + 1),
            "global_tid": [r[0] for r in rows],
            "start": [r[1] for r in rows],
            "end": [r[2] for r in rows],
        }
    )


def _by_query(ranges: pl.DataFrame) -> pl.DataFrame:
    con = _engine.connect(sqlite=False)
    try:
        con.register("_d", ranges)
        con.execute("CREATE TEMP TABLE nvtx_depths AS SELECT * FROM _d")
        return con.execute(_resources.query("_nvtx_tree")).pl()
    finally:
        con.close()


def _rows(frame: pl.DataFrame) -> list[tuple]:
    return sorted(frame.select(nvtx_tree.COLUMNS).iter_rows())


@pytest.mark.parametrize("seed", range(6))
def test_nested_gives_the_rows_of_the_query(seed):
    ranges = nvtx_tree.depths(_nested_ranges(seed))
    rows = nvtx_tree.nested(ranges)
    assert rows is not None
    assert rows.height == ranges.height > 100
    assert rows["parent_id"].null_count() < rows.height  # the sample nests
    assert _rows(rows) == _rows(_by_query(ranges))


def test_nested_declines_overlapping_ranges_and_ranges_without_a_thread():
    # B starts inside A and ends after it: its candidate parent A does not contain it
    tid = 1 << 24 | PID
    overlap = pl.DataFrame(
        {"range_id": [1, 2], "global_tid": [tid, tid], "start": [0, 5], "end": [10, 20]}
    )
    assert nvtx_tree.nested(nvtx_tree.depths(overlap)) is None
    # ranges without a thread: left to the query (which gives them no parent)
    threadless = overlap.with_columns(pl.lit(None, pl.Int64).alias("global_tid"))
    assert nvtx_tree.nested(nvtx_tree.depths(threadless)) is None
    # nested, the same ranges are taken
    nested = overlap.with_columns(pl.Series("end", [30, 20]))
    rows = nvtx_tree.nested(nvtx_tree.depths(nested))
    assert rows is not None
    assert _rows(rows) == [(1, tid, 0, 30, None, 0, 0), (2, tid, 5, 20, 1, 1, 1)]


def _tree_queries(path, monkeypatch) -> tuple[list[str], list[tuple]]:
    """The queries nvtx.build_sweep read while building the tree of ``path``, and the tree."""
    read: list[str] = []
    query = _resources.query

    def recording(name: str) -> str:
        read.append(name)
        return query(name)

    monkeypatch.setattr(_resources, "query", recording)
    with tracelens.open(path, cache=False) as trace:
        nvtx.build_sweep(trace)
        tree = trace.db.execute("SELECT * FROM nvtx_tree ORDER BY range_id").fetchall()
    monkeypatch.setattr(_resources, "query", query)
    return read, tree


def test_nested_ranges_skip_the_tree_query(tmp_path, monkeypatch):
    # every range of the shapes trace nests: no chunk runs _nvtx_tree.sql (its joins cost
    # ~0.8 CPU s on 250k ranges)
    read, tree = _tree_queries(build_shapes(tmp_path / "shapes.sqlite"), monkeypatch)
    assert "_nvtx_chunk_spans" in read and "_nvtx_tree" not in read
    assert len(tree) > 20
    # a thread whose start/end ranges overlap is refitted by the query
    b = TraceBuilder("3.25.0")
    b.process(PID, "p")
    for rid, (start, end) in enumerate(((0, 10), (5, 20), (6, 8)), start=1):
        b.nvtx_range(f"r{rid}", start=start, end=end, pid=PID, tid=7, event_type=60)
    cid = b.runtime("cudaLaunchKernel_v7000", start=7, end=7, pid=PID, tid=7)
    b.kernel("k", start=30, end=40, pid=PID, correlation_id=cid)
    read, tree = _tree_queries(b.write(tmp_path / "overlap.sqlite"), monkeypatch)
    assert "_nvtx_tree" in read
    # r2 is not inside r1 (a root, as r1); r3 lies in both: its parent is the tighter
    # container, r1 (6 + 2 ns of slack, r2 1 + 12)
    parents = {row[0]: row[4] for row in tree}
    assert parents == {1: None, 2: None, 3: 1}
