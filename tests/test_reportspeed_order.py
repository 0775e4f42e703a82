"""util's sort of the GPU work (tracelens.util_order): columns NULL throughout (short_id and
graph_id of most reads) are made anew rather than gathered, and come out as a gather would
give them."""

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
