"""SQLite reads of one table in parts side by side (``tracelens.trace.parts``): the parts
cover the table's rowids once each, whatever holes the rowids have, and a command reads the
same rows in one part (one DuckDB thread) as in two; stakeout's filtered kernel read also
counts the damaged kernels of the whole table, so no second scan counts them."""

from __future__ import annotations

import sqlite3

import pytest

import tracelens
from tracelens import _engine
from tracelens.stakeout import stakeout
from tracelens.synth import TraceBuilder
from tracelens.trace.parts import rowid_parts, sqlite_query_parts, sqlite_rows_parts

PID = 5151
KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"


def _build(path, launches: int = 41):
    """``launches`` launches alternating gemm and add (each add's rows after the gemm's in
    the table), every call on one thread; then rows 5 and 6 deleted (rowids with a hole) and
    the third add cut off (end 0: a damaged record)."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    for i in range(launches):
        start = 1_000_000 + i * 100_000
        name = "gemm_kernel" if i % 2 == 0 else "void add<float>(float *, int)"
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 20_000, end=start - 15_000)
        b.kernel(name, start=start, end=start + 30_000 + i, pid=PID, correlation_id=cid, stream=7)
    b.write(path)
    with sqlite3.connect(path) as db:
        db.execute(f"DELETE FROM {KERNEL_TABLE} WHERE rowid IN (5, 6)")
        db.execute(f"DELETE FROM {RUNTIME_TABLE} WHERE rowid IN (5, 6)")
        db.execute(
            f'UPDATE {KERNEL_TABLE} SET "end" = 0 WHERE rowid = (SELECT rowid FROM {KERNEL_TABLE} '
            "WHERE shortName = (SELECT id FROM StringIds WHERE value LIKE 'add%') "
            "ORDER BY start LIMIT 1 OFFSET 2)"
        )
    db.close()
    return path


@pytest.fixture
def trace_path(tmp_path):
    return _build(tmp_path / "parts.sqlite")


def test_the_parts_cover_every_rowid_once(trace_path):
    with tracelens.open(trace_path, cache=False) as trace:
        rowids = [r[0] for r in trace._sqlite_rows(f"SELECT rowid FROM {KERNEL_TABLE}")]
        for parts in (1, 2, 3, 7, 100):
            bounds = rowid_parts(trace, KERNEL_TABLE, parts)
            assert len(bounds) == min(parts, max(rowids) - min(rowids) + 1)
            assert bounds[0][0] == min(rowids) and bounds[-1][1] == max(rowids)
            assert all(low <= high for low, high in bounds)
            assert all(bounds[i][1] + 1 == bounds[i + 1][0] for i in range(len(bounds) - 1))
            lengths = [high - low + 1 for low, high in bounds]
            assert max(lengths) - min(lengths) <= 1


def test_an_empty_table_has_no_part(tmp_path):
    path = _build(tmp_path / "empty.sqlite", launches=2)
    with sqlite3.connect(path) as db:
        db.execute(f"DELETE FROM {KERNEL_TABLE}")
    db.close()
    with tracelens.open(path, cache=False) as trace:
        assert rowid_parts(trace, KERNEL_TABLE, 2) == []
        with sqlite_query_parts(trace, KERNEL_TABLE, _between, "rows") as rows:
            read = trace.db.execute(f"SELECT * FROM {rows}")
            assert read.fetchall() == [] and [d[0] for d in read.description] == ["start", "end"]


def _between(low: int, high: int) -> str:
    return f'SELECT start, "end" FROM {KERNEL_TABLE} WHERE rowid BETWEEN {low} AND {high}'


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_rows_are_those_of_one_read_in_rowid_order(trace_path, threads):
    whole = f'SELECT start, "end" FROM {KERNEL_TABLE} ORDER BY rowid'
    calls = (
        f"SELECT correlationId FROM {RUNTIME_TABLE} "
        "WHERE rowid BETWEEN $low_rowid AND $high_rowid AND correlationId % 3 = $rest"
    )
    with _engine.limits(threads=threads), tracelens.open(trace_path, cache=False) as trace:
        expected = trace._sqlite_rows(whole)
        with sqlite_query_parts(trace, KERNEL_TABLE, _between, "rows") as rows:
            read = trace.db.execute(f'SELECT start::BIGINT, "end"::BIGINT FROM {rows}')
            assert read.fetchall() == expected
        kept = sqlite_rows_parts(trace, RUNTIME_TABLE, calls, {"rest": 1})
        one = trace._sqlite_rows(
            f"SELECT correlationId FROM {RUNTIME_TABLE} WHERE correlationId % 3 = 1 ORDER BY rowid"
        )
        assert kept == one and len(one) > 5


def _stakeout_figures(path, threads: int):
    with _engine.limits(threads=threads), tracelens.open(path, cache=False) as trace:
        out = stakeout(trace, "add", limit=4)
        return out.launches, out.stats, trace.damaged_work(("kernel",))


def test_stakeout_reads_the_same_in_one_part_or_two_and_counts_the_damage(trace_path):
    launches1, stats1, damaged1 = _stakeout_figures(trace_path, 1)
    launches2, stats2, damaged2 = _stakeout_figures(trace_path, 2)
    assert launches1.equals(launches2) and stats1 == stats2
    assert damaged1 == damaged2 == {"kernel": 1}
    # 20 adds, rows 5 and 6 (a gemm and an add) deleted, the third cut off: 18 kept
    assert stats1.launches == 18
    assert launches1["api"].to_list() == ["cudaLaunchKernel"] * 4


def test_stakeout_counts_the_damage_in_its_own_scan(trace_path):
    """No second scan of the kernel table asks for the damaged kernels."""
    with tracelens.open(trace_path, cache=False) as trace:
        asked, read = [], trace._sqlite_rows
        trace._sqlite_rows = lambda sql, *a: asked.append(sql) or read(sql, *a)
        stakeout(trace, "gemm")
        assert trace.damaged_work(("kernel",)) == {"kernel": 1}
        assert not any('"end" < start' in sql for sql in asked)
