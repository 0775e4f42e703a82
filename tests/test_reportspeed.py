"""The report's cuts of CPU time (#14): util's sort of the GPU work (tracelens.util_order)
makes columns NULL throughout (short_id and graph_id of most reads) anew rather than
gathering them, and they come out as a gather would give them; the stakeout read directly
scans only its kernels' launches."""

from __future__ import annotations

import polars as pl
import pytest

from tracelens.util_order import ORDER, in_order, taken_by_device_start

_SCHEMA = {
    "device": pl.Int64,
    "start_ns": pl.Int64,
    "end_ns": pl.Int64,
    "stream": pl.Int64,
    "kind": pl.Int8,
    "name_id": pl.Int64,
    "short_id": pl.Int64,
    "graph_id": pl.Int64,
}


def _read(rows: int) -> pl.DataFrame:
    """A read as DuckDB hands it over: in several chunks, short_id and graph_id NULL
    throughout, name_id NULL for the copies only."""
    part = pl.DataFrame(
        {
            "device": [i % 2 for i in range(rows)],
            "start_ns": [(i * 7) % 11 for i in range(rows)],
            "end_ns": [(i * 7) % 11 + 3 for i in range(rows)],
            "stream": [i % 3 for i in range(rows)],
            "kind": [i % 2 for i in range(rows)],
            "name_id": [None if i % 2 else 100 + i for i in range(rows)],
            "short_id": [None] * rows,
            "graph_id": [None] * rows,
        },
        schema=_SCHEMA,
    )
    return pl.concat([part, part.with_columns(pl.col("start_ns") + 20)], rechunk=False)


@pytest.mark.parametrize("rows", [0, 1, 9])
def test_null_columns_come_out_as_the_sort_gives_them(rows):
    read = _read(rows)
    expected = read.sort(*ORDER, "name_id", "short_id")
    got = in_order(read.clone())
    assert got.schema == read.schema
    assert got.equals(expected)
    assert got["short_id"].null_count() == got["graph_id"].null_count() == got.height


def test_the_taken_sort_makes_null_columns_anew_too():
    read = _read(9)
    held = [read.clone()]
    work = taken_by_device_start(held)
    assert held == []
    assert work.schema == read.schema
    assert work.select(ORDER[:2]).equals(read.sort("device", "start_ns").select(ORDER[:2]))
    assert work["graph_id"].null_count() == work.height
    assert work["name_id"].null_count() == read["name_id"].null_count()


@pytest.mark.parametrize("kind", ["demangled", "short"])
def test_stakeout_durations_scan_only_the_named_launches(kind, monkeypatch):
    """The stakeout's spreads and histograms read directly (report_stakeout_durations.sql)
    scan the launches of the named kernels only, picked out of the page's read first: as
    many rows as the census counts of those names; a name not launched adds none."""
    import tracelens
    from tracelens.demo import demo_path
    from tracelens.report import sharedread, stakeoutread

    scanned = []
    durations = stakeoutread._durations

    def spied(trace, names, name_kind, work, per_octave):
        scanned.append(work.num_rows)
        return durations(trace, names, name_kind, work, per_octave)

    monkeypatch.setattr(stakeoutread, "_durations", spied)
    with tracelens.open(demo_path("bs16"), cache=False) as t:
        table = sharedread.for_duckdb(sharedread.read_work(t, short=kind == "short"))
        census = t.census(name=kind)
        names = census["name"].head(3).to_list() + ["not launched"]
        got = stakeoutread.direct_profiles(t, names, kind, table, 4)
    assert got is not None and got.spread.height == 3
    assert scanned == [int(census["instances"].head(3).sum())]
    assert 0 < scanned[0] < table.num_rows
