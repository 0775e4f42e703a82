"""Kept frames are written on the writing thread (tracelens.keep_writer), not on the thread
that hands them over: the diff's first cached run went on only once its 5M-row work file
was written. In the order handed over; looked for only once written; written by the time
the trace closes; a cache that cannot be written keeps nothing, without an error, and a
bug in a write is raised, not lost."""

from __future__ import annotations

import threading

import polars as pl
import pytest

import tracelens
from tracelens import cache, keep_writer, util_workfile

FRAME = pl.DataFrame({"a": [1, 2, 3]})


@pytest.fixture
def writes(monkeypatch):
    """Every Parquet file polars writes from now on: (file name, writing thread's name),
    each write held until the ``go`` event is set (set at the start: tests clear it)."""
    done: list[tuple[str, str]] = []
    go = threading.Event()
    go.set()
    real = pl.DataFrame.write_parquet

    def write_parquet(frame, path, *args, **kwargs):
        go.wait(timeout=30)
        real(frame, path, *args, **kwargs)
        done.append((path.name.split(".")[0], threading.current_thread().name))

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write_parquet)
    return done, go


def test_written_on_the_writing_thread_in_order(demo, cache_dir, writes):
    done, _go = writes
    with tracelens.open(demo) as trace:
        trace.census()  # the cache entry is made by the first read
        for name in ("first", "second", "third"):
            util_workfile.write_kept(trace, name, "v1", FRAME)
        assert util_workfile.read_kept(trace, "second", "v1").equals(FRAME)
    assert [n for n, _t in done] == ["first", "second", "third"]
    assert {t for _n, t in done} != {threading.current_thread().name}
    assert all(t.startswith("tracelens-keep") for _n, t in done)


def test_looked_for_and_closed_only_once_written(demo, cache_dir, writes):
    """write_kept returns while the write waits; derived_path (every reader's way to a kept
    file) and closing the trace wait for it."""
    done, go = writes
    with tracelens.open(demo) as trace:
        trace.census()
        go.clear()
        util_workfile.write_kept(trace, "held", "v1", FRAME)
        assert done == []  # handed over, not written: this thread went on
        threading.Timer(0.2, go.set).start()
        assert util_workfile.kept_path(trace, "held", "v1") is not None
        go.clear()
        util_workfile.write_kept(trace, "at_close", "v1", FRAME)
        entry = trace._lazy.entry
        threading.Timer(0.2, go.set).start()
    assert [n for n, _t in done] == ["held", "at_close"]
    assert cache.derived_path(entry, "at_close", "v1") is not None


def test_an_unwritable_cache_keeps_nothing_and_a_bug_is_raised(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as trace:
        trace.census()

        def full(*_args, **_kwargs):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
        util_workfile.write_kept(trace, "full", "v1", FRAME)
        assert util_workfile.kept_path(trace, "full", "v1") is None  # no error: not kept

        def bug(*_args, **_kwargs):
            raise RuntimeError("a bug in a write")

        monkeypatch.setattr(pl.DataFrame, "write_parquet", bug)
        util_workfile.write_kept(trace, "buggy", "v1", FRAME)
        with pytest.raises(RuntimeError, match="a bug in a write"):
            keep_writer.settle()
    assert trace.closed
