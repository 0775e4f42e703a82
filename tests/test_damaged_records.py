"""GPU records that end before they start (a damaged export: a record cut off with end 0, a
wild timestamp) are left out of every figure, and every command that reads GPU work says so
once (``note: …``: the last line of a table, a ``tracelens: note:`` line on stderr for csv
and json, a row of the report's header)."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from conftest import run_cli

import tracelens
from tracelens.census import kernel_summary
from tracelens.synth import TraceBuilder

PID = 4242
GEMM, ADD = "gemm_kernel", "void add<float>(float *, int)"
STEPS, STEP_NS, GEMM_NS, ADD_NS = 6, 1_000_000, 300_000, 100_000
NOTE = "2 kernel records and 1 memcpy record end before they start (damaged export): left out"


def _build(path, *, damaged: bool = True):
    """Six steps of a gemm, an add and a 1 MiB copy; ``damaged``: then, as a damaged export
    holds them, the last add cut off (end 0), the third gemm's start pushed 10^12 ns past its
    end, the second copy's end before its start (synth writes sound rows only: SQLite
    damages them after)."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    for step in range(STEPS):
        t0 = 1_000_000 + step * STEP_NS
        b.nvtx_range(f"step {step}", start=t0 - 50_000, end=t0 + 600_000, pid=PID)
        for i, (name, dur) in enumerate(((GEMM, GEMM_NS), (ADD, ADD_NS))):
            start = t0 + i * 400_000
            cid = b.runtime("cudaLaunchKernel_v7000", start=start - 40_000, end=start - 35_000)
            b.kernel(name, start=start, end=start + dur, pid=PID, correlation_id=cid, stream=7)
        cid = b.runtime("cudaMemcpyAsync_v3020", start=t0 + 500_000, end=t0 + 505_000)
        b.memcpy("HtoD", 1 << 20, start=t0 + 510_000, end=t0 + 520_000, pid=PID, correlation_id=cid)
    b.write(path)
    if damaged:
        with sqlite3.connect(path) as db:
            kernels = [
                r[0]
                for r in db.execute("SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")
            ]
            db.execute(
                'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = 0 WHERE rowid = ?', (kernels[-1],)
            )
            db.execute(
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1000000000000 "
                "WHERE rowid = ?",
                (kernels[4],),
            )
            db.execute(
                'UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET "end" = start - 1 WHERE rowid = '
                "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start LIMIT 1 OFFSET 1)"
            )
        db.close()
    return path


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("damaged") / "damaged.sqlite")


def test_census_leaves_them_out_and_counts_them(damaged):
    with tracelens.open(damaged, cache=False) as tr:
        df = kernel_summary(tr)
        by_name = {r["name"]: r for r in df.iter_rows(named=True)}
        assert by_name[GEMM]["instances"] == STEPS - 1
        assert by_name[GEMM]["total_ns"] == (STEPS - 1) * GEMM_NS
        assert by_name[ADD]["total_ns"] == (STEPS - 1) * ADD_NS
        assert min(df["min_ns"]) > 0 and abs(sum(df["time_pct"]) - 100) < 0.2
        assert tr.damaged_work() == {"kernel": 2, "memcpy": 1, "memset": 0}
        assert tr.damage_note() == NOTE


def test_rowid_shortcut_still_counts(damaged, tmp_path):
    """Told how many kernels its scan kept, the count skips its scan only when the table
    has no other rows."""
    with tracelens.open(damaged, cache=False) as tr:
        tr.kept_whole({"kernel": 2 * STEPS - 2, "memcpy": STEPS - 1})
        assert tr.damaged_work(("kernel", "memcpy")) == {"kernel": 2, "memcpy": 1}
    clean = _build(tmp_path / "clean.sqlite", damaged=False)
    with tracelens.open(clean, cache=False) as tr:
        tr.kept_whole({"kernel": 2 * STEPS})
        asked, read = [], tr._sqlite_rows
        tr._sqlite_rows = lambda sql, *a: asked.append(sql) or read(sql, *a)
        assert tr.damaged_work(("kernel",)) == {"kernel": 0}
        assert asked and not any("start" in sql for sql in asked)  # no scan: rowids only


def test_a_timeline_page_counts_the_kept_records_in_its_own_pass(damaged, tmp_path):
    """timeline_page_rows.sql counts the kept records of each kind beside the page's bins:
    a page of a sound trace needs no damage scan, a damaged one still counts them."""
    from tracelens.timeline import timeline

    clean = _build(tmp_path / "clean.sqlite", damaged=False)
    for path, expected in ((clean, None), (damaged, NOTE)):
        with tracelens.open(path, cache=False) as tr:
            timeline(tr, limit=5)
            asked, read = [], tr._sqlite_rows
            tr._sqlite_rows = lambda sql, *a, asked=asked, read=read: (
                asked.append(sql) or read(sql, *a)
            )
            assert tr.damage_note() == expected
            assert any('"end" < start' in sql for sql in asked) == (expected is not None)


def test_util_steps_lineup_figures_are_those_of_the_sound_records(damaged):
    from tracelens.lineup import category_summary
    from tracelens.util import gpu_time_accounting

    kept_kernel_ns = (STEPS - 1) * (GEMM_NS + ADD_NS)
    with tracelens.open(damaged, cache=False) as tr:
        lineup_df = category_summary(tr)
        assert min(lineup_df["total_ns"]) > 0
        assert sum(lineup_df.filter(lineup_df["subfamily"].is_null())["total_ns"]) == (
            kept_kernel_ns + (STEPS - 1) * 10_000
        )
        util = gpu_time_accounting(tr)
        device = util.frame.row(0, named=True)
        assert device["compute_ns"] == kept_kernel_ns


@pytest.mark.parametrize(
    "command", ["census", "lineup", "danger", "steps", "util", "findings", "timeline"]
)
def test_each_command_says_so_once(damaged, command, capsys):
    code, out, err = run_cli([command, damaged, "--format", "csv", "--no-cache"], capsys)
    assert code == 0, err
    kinds = "2 kernel records" if command in ("census", "danger") else NOTE
    assert err.count("before they start") == 1 and kinds in err
    assert not re.search(r"(^|,)-[0-9]", out, re.MULTILINE)  # no negative figure
    code, out, err = run_cli([command, damaged, "--no-cache"], capsys)
    assert code == 0 and out.count("before they start") == 1 and "before" not in err


def test_json_and_cached_runs_say_so_too(damaged, capsys, monkeypatch):
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    for _ in range(2):  # the run that builds the cache, then one that reads it
        code, out, err = run_cli(["census", damaged, "--format", "json"], capsys)
        assert code == 0, err
        assert "2 kernel records end before they start" in err
        assert all(r["total_ns"] > 0 for r in json.loads(out))


def test_a_parquetdir_counts_them_too(damaged, tmp_path):
    from test_inputs import write_parquetdir

    with tracelens.open(write_parquetdir(damaged, tmp_path / "pq")) as tr:
        assert tr.damaged_work() == {"kernel": 2, "memcpy": 1, "memset": 0}
        assert kernel_summary(tr)["total_ns"].sum() == (STEPS - 1) * (GEMM_NS + ADD_NS)


def test_util_json_says_so_in_its_notes(damaged, capsys):
    code, out, err = run_cli(["util", damaged, "--format", "json", "--no-cache"], capsys)
    assert code == 0 and "before they start" not in err
    assert json.loads(out)["notes"] == [NOTE]


def test_report_header_says_so(damaged, tmp_path, capsys):
    html = tmp_path / "r.html"
    code, _out, err = run_cli(["report", damaged, "-o", html, "--no-cache"], capsys)
    assert code == 0, err
    assert NOTE in html.read_text()
