"""Reads in any order (tracelens._fetch): the same rows as an ordered read, on a trace read
directly and through the columnar cache, and answers that do not depend on the order the
rows came in (each unordered read is shuffled here, several ways)."""

from __future__ import annotations

import polars as pl
import pytest
from queries.test_nvtx_helper_queries import trace_path  # noqa: F401 - the fixture

import tracelens
from tracelens import _fetch, _resources, nvtx_sweep
from tracelens.nvtx import gpu_projection


def _rows(frame: pl.DataFrame) -> list[tuple]:
    return sorted(frame.rows(), key=repr)


@pytest.mark.parametrize("cache", [False, True])
def test_unordered_read_holds_the_ordered_reads_rows(trace_path, cache, monkeypatch):  # noqa: F811
    # Through the caching connection too: a relation read there without its statement
    # prepared read the probes (each column's least and greatest value and NULL).
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    with tracelens.open(trace_path, cache=cache) as t:
        for name in ("_nvtx_calls", "_nvtx_op_ranges"):
            ordered = t.db.execute(_resources.query(name)).pl()
            unordered = _fetch.unordered_frame(t.db, _resources.query(name))
            assert unordered.schema == ordered.schema
            assert _rows(unordered) == _rows(ordered)
        order_kept = t.db.execute("SELECT current_setting('preserve_insertion_order')")
        assert order_kept.fetchone()[0] is True


def test_the_setting_is_put_back_after_an_error(trace_path):  # noqa: F811
    with tracelens.open(trace_path, cache=False) as t:
        with pytest.raises(Exception, match="no_such_view"):
            _fetch.unordered_frame(t.db, "SELECT * FROM no_such_view")
        order_kept = t.db.execute("SELECT current_setting('preserve_insertion_order')")
        assert order_kept.fetchone()[0] is True


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_projection_does_not_depend_on_read_order(trace_path, seed, monkeypatch):  # noqa: F811
    # The fixture's call 21 has two records (runtime and driver); the sweep must keep the
    # runtime one however the calls come in, and look its class up by key, not by row.
    with tracelens.open(trace_path, cache=False) as t:
        expected = gpu_projection(t).write_csv()
    unordered = _fetch.unordered_frame

    def shuffled(con, sql, **options):
        frame = unordered(con, sql, **options)
        return frame.sample(fraction=1.0, shuffle=True, seed=seed)

    monkeypatch.setattr(nvtx_sweep, "unordered_frame", shuffled)
    with tracelens.open(trace_path, cache=False) as t:
        assert gpu_projection(t).write_csv() == expected
    # and with correlation ids too sparse for a table of slots (every call's class read)
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_PER_CALL", 0)
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_FLOOR", 0)
    with tracelens.open(trace_path, cache=False) as t:
        assert gpu_projection(t).write_csv() == expected
