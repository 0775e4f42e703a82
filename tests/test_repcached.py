"""The first cached report's cuts of CPU time (#14): util's sort of the GPU work unpacks
device and start from its sorted key instead of gathering them (tracelens.util_order)."""

from __future__ import annotations

import polars as pl
import pytest

from tracelens.util_order import ORDER, _bounds, _keyed_order, _sort_keys, in_order


def _read(span: int) -> pl.DataFrame:
    """A read in two chunks: devices -1 to 1 (Int32, as a narrower read may type them),
    starts over ``span`` ns, many rows starting together on a device."""
    rows = 40
    part = pl.DataFrame(
        {
            "device": [i % 3 - 1 for i in range(rows)],
            "start_ns": [(i * 7) % 5 * (span // 4) for i in range(rows)],
            "end_ns": [(i * 7) % 5 * (span // 4) + i % 4 for i in range(rows)],
            "stream": [i % 2 for i in range(rows)],
            "kind": [i % 3 for i in range(rows)],
            "name_id": [100 + i for i in range(rows)],
        },
        schema_overrides={"device": pl.Int32, "kind": pl.Int8},
    )
    return pl.concat([part, part.with_columns(pl.col("name_id") + 1000)], rechunk=False)


def test_the_sorted_key_gives_device_and_start_in_order():
    read = _read(1_000)
    order, lead = _keyed_order(read, _bounds(read))
    assert lead.schema == read.select("device", "start_ns").schema
    assert lead.equals(read[order].select("device", "start_ns"))
    assert lead.equals(read.sort("device", "start_ns").select("device", "start_ns"))


@pytest.mark.parametrize("span", [1_000, 2**58])
def test_in_order_is_the_full_sort_with_the_key_or_without(span):
    """Starts over 2**58 ns leave no room for the row number in the key: the order is
    sorted on the key's values and gathered (None from _keyed_order); both give the full
    sort's rows and types."""
    read = _read(span)
    assert (_keyed_order(read, _bounds(read)) is None) == (span > 1_000)
    got = in_order(read.clone(), drop=("name_id",))
    assert got.schema == read.drop("name_id").schema
    assert got.equals(read.sort(_sort_keys(read)).drop("name_id"))
    assert got.select(ORDER).equals(read.sort(ORDER).select(ORDER))


def test_a_trace_without_nvtx_has_no_ranges_and_loads_no_nvtx_table(demo, cache_dir):
    """activity.nvtx_ranges of a trace without an NVTX table: no rows, the query's columns
    and types, and the NVTX table is not loaded (on a cached trace, loading it read the
    export through SQLite)."""
    import sqlite3

    import tracelens
    from tracelens.activity import nvtx_ranges

    with sqlite3.connect(demo) as con:
        con.execute("DROP TABLE NVTX_EVENTS")
    with tracelens.open(demo) as trace:
        got = nvtx_ranges(trace, 0, 2**62, min_ns=1_000, limit=10)
        tables = {
            r[0] for r in trace.db.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
        assert "nvtx_text" not in tables
        trace.load_nvtx_text()
        queried = trace.query("activity_nvtx_ranges", t0=0, t1=2**62, min_ns=1_000, limit=11)
    assert got.more is False
    assert got.frame.schema == queried.schema
    assert got.frame.equals(queried)
    assert queried.height == 0


def test_gpu_operation_counts_of_a_cached_trace_come_from_its_entry(demo, cache_dir, monkeypatch):
    """The header's GPU operation counts of a cached trace (Trace.table_rows): the rows of
    the entry's copy of each table (SQLite's count is not asked), SQLite's for a table the
    entry lacks, and the same as SQLite's counts."""
    import sqlite3

    import tracelens
    from tracelens.report.infoshare import gpu_operation_counts

    with sqlite3.connect(demo) as con:
        expected = {
            kind: con.execute(
                f"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_{kind.upper()}"
            ).fetchone()[0]
            for kind in ("kernel", "memcpy", "memset")
        }
    with tracelens.open(demo) as trace:
        trace.census()  # caches the kernels (and the strings), not the copies or memsets
    asked: list[str] = []
    rows = tracelens.Trace._sqlite_rows

    def counted(self, sql: str, *args):
        asked.append(sql)
        return rows(self, sql, *args)

    with tracelens.open(demo) as trace:
        trace.db  # noqa: B018  (open, as the page's reads have it by then)
        monkeypatch.setattr(tracelens.Trace, "_sqlite_rows", counted)
        got = gpu_operation_counts(trace)
    assert got == expected
    assert expected["kernel"] and expected["memcpy"]
    assert asked == [
        'SELECT count(*) FROM "CUPTI_ACTIVITY_KIND_MEMCPY"',
        'SELECT count(*) FROM "CUPTI_ACTIVITY_KIND_MEMSET"',
    ]


@pytest.mark.parametrize("name_kind", ["demangled", "short"])
def test_the_timeline_takes_its_kernel_names_from_the_census(demo, name_kind):
    """The timeline's kernel categories from the census's name ids (the page computed them
    from the same work) are those from a scan of the work, by either name kind."""
    import tracelens
    from tracelens.activity import kernel_categories
    from tracelens.report.sharedread import census_and_kernels, for_duckdb, read_work
    from tracelens.report.worktable import kernel_ids

    with tracelens.open(demo) as trace:
        work = for_duckdb(read_work(trace, short=name_kind == "short"))
        _census, kernels = census_and_kernels(trace, work, name_kind)
        given = kernel_ids(work, kernels)
        scanned = kernel_ids(work)
        from_census = kernel_categories(trace, name=name_kind, work=given)
        from_work = kernel_categories(trace, name=name_kind, work=scanned)
    assert given.schema == scanned.schema
    assert from_census == from_work
    assert len(from_census.name_ids) == kernels.height > 1


@pytest.mark.parametrize("threads", ["two_processes", "none"])
def test_the_runtime_processes_are_those_of_the_calls_distinct_threads(demo, threads):
    """queries/report_runtime_pids.sql (the calls' distinct threads, then their processes):
    every process of a call with a thread, once; NULL when no call has a thread."""
    import sqlite3

    import tracelens
    from tracelens.report.infoshare import pid_of

    with sqlite3.connect(demo) as con:
        if threads == "none":
            con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL")
        else:  # every third call of another process (pid 77), some of no thread
            con.execute(
                "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = (77 << 24) + 5 "
                "WHERE rowid % 3 = 0"
            )
            con.execute(
                "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid % 7 = 0"
            )
        tids = [
            t for (t,) in con.execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME")
        ]
    expected = sorted({pid_of(t) for t in tids if t is not None})
    with tracelens.open(demo, cache=False) as trace:
        pids = trace.query_rows("report_runtime_pids").data[0][0]
    if threads == "none":
        assert pids is None
    else:
        assert sorted(pids) == expected
        assert len(pids) == len(expected) == 2
