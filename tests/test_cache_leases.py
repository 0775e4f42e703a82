"""What a run reads stays in the cache while it reads it: another trace's cache build past
the cap passes over an entry a run holds (cache.hold), and a run whose entry is removed all
the same (by hand: ``cache clear`` passes over it too) reads the trace directly with one
notice. Deterministic:
two Trace objects in turns in one process (flock leases conflict between open files, so
one process stands for two runs)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import tracelens
from tracelens import cache, cache_evict
from tracelens._schema import VIEWS


def _two_traces(tmp_path: Path) -> tuple[Path, Path]:
    from tracelens.demo import demo_path

    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shutil.copyfile(demo_path("bs1"), first)
    shutil.copyfile(demo_path("bs1"), second)
    con = sqlite3.connect(second)  # another trace, so another entry
    con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + 1 WHERE rowid = 1')
    con.commit()
    con.close()
    return first, second


def _whole(trace: tracelens.Trace) -> dict:
    return {view: trace.sql(f"SELECT * FROM {view} ORDER BY ALL").rows() for view in VIEWS}


def _read(trace: tracelens.Trace) -> tuple:
    return _whole(trace), trace.census().rows(), trace.nvtx().rows(), trace.api().rows()


def test_a_build_past_the_cap_never_evicts_the_entry_another_run_reads(
    tmp_path, cache_dir, monkeypatch
):
    # Before: b's build removed a's entry (the least recently used, over a cap of 0), and
    # a's next statement failed: IO Error: No files found that match the pattern ...
    first, second = _two_traces(tmp_path)
    with tracelens.open(first, cache=False) as direct:
        expected = _read(direct)
    with tracelens.open(first) as a:
        _whole(a)  # every table cached whole: the views read only the entry from now on
        held = a.parquet_dir
        monkeypatch.setenv("TRACELENS_CACHE_MAX_MB", "0")
        with tracelens.open(second) as b:
            b.census()
            assert b.parquet_dir != held and b.parquet_dir.is_dir()
        assert held.is_dir() and a.parquet_dir == held
        assert _read(a) == expected and a.notices == []
    # once no run reads it, the next build past the cap evicts it
    with tracelens.open(second) as b:
        b.api()
    assert not held.exists()


def test_an_entry_evicted_before_its_lease_is_built_again(tmp_path, cache_dir):
    first, _second = _two_traces(tmp_path)
    with tracelens.open(first) as a:
        a.census()
        entry = a.parquet_dir
    ident = cache.identity(first)
    assert cache.lookup(cache_dir, ident) == entry
    lease = cache.hold(entry)
    assert lease is not None
    eviction = cache_evict.evict(cache.Settings(cache_dir, max_bytes=0))
    assert eviction.removed == [] and [e.path for e in eviction.held] == [entry]  # passed over
    lease.close()
    eviction = cache_evict.evict(cache.Settings(cache_dir, max_bytes=0))
    assert [e.path for e in eviction.removed] == [entry] and eviction.held == []
    assert cache.hold(entry) is None  # gone: no lease on an empty directory


def test_cache_clear_keeps_the_entry_a_run_reads(tmp_path, cache_dir):
    # Before: `cache clear` removed it (the run then read its trace directly)
    first, _second = _two_traces(tmp_path)
    with tracelens.open(first) as a:
        _whole(a)
        entry = a.parquet_dir
        size = cache_evict.entries(cache_dir)[0].size_bytes
        assert cache_evict.clear() == (0, 0, 1, size)
        assert a.parquet_dir == entry and entry.is_dir() and a.notices == []
    assert cache_evict.clear() == (1, size, 0, 0)
    assert list((cache_dir / "traces").iterdir()) == []


def test_a_run_whose_entry_is_removed_reads_the_trace_directly(tmp_path, cache_dir):
    first, _second = _two_traces(tmp_path)
    with tracelens.open(first, cache=False) as direct:
        expected = _read(direct)
    messages = []
    with tracelens.open(first, progress=lambda m, _f: m and messages.append(m)) as a:
        _whole(a)
        shutil.rmtree(a.parquet_dir)  # by hand: `cache clear` passes over it
        assert _read(a) == expected
        assert a.parquet_dir is None and a._lazy.off
        (notice,) = a.notices
        assert notice == (
            f"the cache entry of a.sqlite in {cache_dir} was removed while it was read; "
            "reading the trace directly"
        )
        assert messages[-1] == notice
    assert list((cache_dir / "traces").iterdir()) == []  # nothing was cached again
