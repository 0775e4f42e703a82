"""Inputs besides a SQLite export: a `nsys export --type parquetdir` directory gives the same
answers as the SQLite export it came from (every shared trace), and an `.nsys-rep` is
exported with the `nsys` on PATH into the cache directory (a stub nsys here; CI has none)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from conftest import needs_shared, run_cli, sha256, shared_traces

import tracelens
from tracelens._sqlite import decode_text


def write_parquetdir(export: Path, dest: Path) -> Path:
    """One ``<table>.parquet`` per table of ``export``, as nsys's parquetdir names them, with
    every column (text that is not UTF-8 as \\xNN, the way tracelens shows it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dest.mkdir()
    con = sqlite3.connect(f"file:{export}?mode=ro&immutable=1", uri=True)
    con.text_factory = bytes
    names = [
        decode_text(r[0]) for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
    ]
    for name in names:
        cur = con.execute(f'SELECT * FROM "{name}"')
        columns = [d[0] for d in cur.description]
        rows = cur.fetchall()
        arrays = {}
        for i, column in enumerate(columns):
            values = [r[i] for r in rows]
            if any(isinstance(v, bytes) for v in values):
                values = [decode_text(v) if v is not None else None for v in values]
            try:
                arrays[column] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: as text
                arrays[column] = pa.array([None if v is None else str(v) for v in values])
        if not columns:
            continue
        pq.write_table(pa.table(arrays), dest / f"{name}.parquet")
    con.close()
    return dest


def _answers(trace: tracelens.Trace) -> dict:
    def answer(compute):
        try:
            return compute()
        except tracelens.TracelensError as exc:
            return type(exc).__name__, exc.problem if hasattr(exc, "problem") else str(exc)

    out = {
        f"census_{n}": answer(lambda n=n: trace.census(name=n).rows())
        for n in ("demangled", "short", "mangled")
    }
    out["census_lc"] = answer(lambda: trace.census(by_launch_config=True).rows())
    out["memory"] = answer(lambda: (trace.memory_time().rows(), trace.memory_size().rows()))
    out["lineup"] = answer(lambda: trace.lineup().rows())
    out["timeline"] = answer(lambda: trace.timeline(api=True, limit=200).events.rows())
    # nsys's parquetdir has no rowid: the NVTX range ids come from the row order.
    out["nvtx"] = answer(lambda: trace.nvtx().rows())
    out["nvtx_gpu"] = answer(lambda: trace.nvtx(gpu=True, each=True).rows())
    info = trace.info
    out["info"] = (
        info.nsys_version,
        info.schema_version,
        info.start_ns,
        info.end_ns,
        info.gpus,
        info.processes,
        info.events,
    )
    return out


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.name)
def test_parquetdir_equals_sqlite(path, tmp_path):
    directory = write_parquetdir(path, tmp_path / (path.stem + "_pqtdir"))
    with tracelens.open(path, cache=False) as sqlite_trace, tracelens.open(directory) as pq_trace:
        assert pq_trace.parquet_dir == directory.resolve()
        assert _answers(pq_trace) == _answers(sqlite_trace)


def test_parquetdir_census_cli(tmp_path, capsys):
    from tracelens.demo import demo_path

    directory = write_parquetdir(demo_path("bs1"), tmp_path / "bs1_pqtdir")
    rc, out, err = run_cli(["census", str(directory), "--top", "3", "-f", "csv"], capsys)
    rc2, out2, _ = run_cli(["census", str(demo_path("bs1")), "--top", "3", "-f", "csv"], capsys)
    assert (rc, err, rc2) == (0, "", 0) and out == out2


def test_parquetdir_size_is_its_files(tmp_path, capsys):
    """info and the report header give a parquetdir's size as its files' sum, not the 4 kB
    of the directory entry."""
    import json

    from tracelens.demo import demo_path

    directory = write_parquetdir(demo_path("bs1"), tmp_path / "bs1_pqtdir")
    files = sum(f.stat().st_size for f in directory.glob("*.parquet"))
    rc, out, err = run_cli(["info", str(directory), "-f", "json"], capsys)
    assert (rc, err) == (0, "") and json.loads(out)["size_bytes"] == files > 8192


def test_a_directory_without_parquet_files(tmp_path, capsys):
    rc, out, err = run_cli(["census", str(tmp_path)], capsys)
    assert (rc, out) == (2, "")
    assert (
        err
        == f"tracelens: {tmp_path}: is a directory without nsys tables; pass an nsys export (.sqlite or parquetdir)\n"
    )


def test_a_broken_parquet_file(tmp_path, capsys):
    (tmp_path / "StringIds.parquet").write_bytes(b"not parquet at all")
    rc, out, err = run_cli(["census", str(tmp_path)], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(
        f"tracelens: {tmp_path / 'StringIds.parquet'}: is not a readable Parquet file ("
    )
    assert err.endswith("); export the directory again\n") and err.count("\n") == 1


# -- .nsys-rep through nsys on PATH -----------------------------------------------------------
STUB = """#!/bin/sh
# A stand-in for `nsys export --type sqlite --force-overwrite true -o DEST REPORT`.
echo "$@" >> "{log}"
[ -n "$STUB_FAIL" ] && {{ echo "Exportation error: $STUB_FAIL" >&2; exit 1; }}
[ -n "$STUB_DURING" ] && sh -c "$STUB_DURING"  # another command, while the export is written
while [ $# -gt 2 ]; do [ "$1" = "-o" ] && dest="$2"; shift; done
echo "Processing events..." >&2
cp "{export}" "$dest"
"""


@pytest.fixture
def stub_nsys(tmp_path, monkeypatch):
    from tracelens.demo import demo_path

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "nsys.log"
    script = bin_dir / "nsys"
    script.write_text(STUB.format(log=log, export=demo_path("bs16")))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _report(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    report = work / "run.nsys-rep"
    report.write_bytes(b"\x00NSYS report (not SQLite)" * 100)
    return report


def test_nsys_rep_is_exported_into_the_cache(tmp_path, stub_nsys, capsys):
    from tracelens.demo import demo_path

    report = _report(tmp_path)
    before = sha256(report)
    rc, out, err = run_cli(["census", str(report), "--top", "2", "-f", "csv"], capsys)
    cache_dir = Path(os.environ["TRACELENS_CACHE_DIR"])
    exports = list((cache_dir / "traces").glob("report-*/export.sqlite"))
    assert rc == 0 and len(exports) == 1
    assert (
        err
        == f"tracelens: exporting run.nsys-rep to SQLite with nsys into {exports[0].parent} (once)\n"
    )
    with tracelens.open(demo_path("bs16")) as demo:
        assert out == demo.census(top=2).write_csv()
    assert os.listdir(report.parent) == ["run.nsys-rep"] and sha256(report) == before
    calls = stub_nsys.read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith(
        "export --type sqlite --force-overwrite true -o "
    )
    # The second run reads the export it made: nsys is not run again, nothing is printed.
    rc, out2, err = run_cli(["census", str(report), "--top", "2", "-f", "csv"], capsys)
    assert (rc, out2, err) == (0, out, "")
    assert len(stub_nsys.read_text().splitlines()) == 1


def test_nsys_rep_export_is_cached_as_parquet_once(tmp_path, stub_nsys, capsys, monkeypatch):
    # The export in the cache is a trace like any other: with caching from 0 MB the second
    # run reads the Parquet the first wrote (reading the export must not change its identity).
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    report = _report(tmp_path)
    argv = ["census", str(report), "--top", "2", "-f", "csv"]
    rc, out, err = run_cli(argv, capsys)
    traces = Path(os.environ["TRACELENS_CACHE_DIR"]) / "traces"
    (entry,) = [p for p in traces.iterdir() if not p.name.startswith("report-")]
    assert rc == 0 and err.splitlines()[1].startswith(
        "tracelens: caching run.nsys-rep's SQLite export ("
    )
    assert run_cli(argv, capsys) == (0, out, "")
    assert [p for p in traces.iterdir() if not p.name.startswith("report-")] == [entry]
    assert len(stub_nsys.read_text().splitlines()) == 1


def test_nsys_export_failure_is_one_line(tmp_path, stub_nsys, capsys, monkeypatch):
    monkeypatch.setenv("STUB_FAIL", "Version number is invalid")
    report = _report(tmp_path)
    rc, out, err = run_cli(["census", str(report)], capsys)
    assert (rc, out) == (2, "")
    started, failed = err.splitlines()  # what was being done, then why it failed
    assert started.startswith("tracelens: exporting run.nsys-rep to SQLite with nsys into ")
    assert failed.startswith(
        f"tracelens: {report}: nsys export failed (exit 1: Exportation error: Version number is "
        "invalid); run `"
    )
    assert not list(Path(os.environ["TRACELENS_CACHE_DIR"]).rglob("*.sqlite"))  # no half export


def _release_exports() -> None:
    """What the end of a process does: drop its leases on the exports it read."""
    from tracelens import inputs

    for lease in inputs._HELD.values():
        lease.close()
    inputs._HELD.clear()


def test_nsys_rep_exports_are_cache_entries(tmp_path, stub_nsys, capsys, monkeypatch):
    # Before: report-<key>/ had no manifest, so `cache info` and the cap never saw it and
    # `cache clear` removed it without counting it ("removed 0 cached traces (0.0 MB)").
    from tracelens import cache_evict

    report = _report(tmp_path)
    assert run_cli(["census", str(report), "--top", "1"], capsys)[0] == 0
    cache_dir = Path(os.environ["TRACELENS_CACHE_DIR"])
    (export,) = cache_evict.entries(cache_dir)
    size = (export.path / "export.sqlite").stat().st_size
    assert export.export and export.source == str(report) and export.size_bytes >= size
    rc, out, _err = run_cli(["cache", "info"], capsys)
    lines = out.splitlines()
    assert rc == 0 and lines[2].startswith("holds      1 trace, ")
    # this process read it: in use until it ends
    assert lines[3].endswith(
        f"  {report}  (its SQLite export)  (in use: kept by eviction and clear)"
    )
    _release_exports()
    assert run_cli(["cache", "info"], capsys)[1].splitlines()[3].endswith("(its SQLite export)")
    rc, out, _err = run_cli(["cache", "clear"], capsys)
    assert rc == 0 and out.startswith(f"removed 1 cached trace ({size / 1e6:,.1f} MB)")
    assert list((cache_dir / "traces").iterdir()) == []


def test_nsys_rep_exports_are_evicted_least_recently_used(tmp_path, stub_nsys, capsys, monkeypatch):
    from tracelens import cache_evict

    cache_dir = Path(os.environ["TRACELENS_CACHE_DIR"])
    first = _report(tmp_path)
    second = first.with_name("other.nsys-rep")
    second.write_bytes(b"\x00NSYS another report" * 100)
    assert run_cli(["census", str(first), "--top", "1"], capsys)[0] == 0
    (old,) = cache_evict.entries(cache_dir)
    # Over the cap while this process still reads the first export: it stays (with the
    # Parquet entry of the second export, which the reading run builds: MIN_MB 0).
    monkeypatch.setenv("TRACELENS_CACHE_MAX_MB", "0")
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    rc, _out, err = run_cli(["census", str(second), "--top", "1"], capsys)
    assert rc == 0 and old.path.is_dir()
    assert (
        "tracelens: the cache stays over its 0 MB cap: 1 cached trace "
        f"({old.size_bytes / 1e6:,.1f} MB) that running commands read were kept (a later build "
        "evicts them once no command reads them)\n"
    ) in err
    assert sum(e.export for e in cache_evict.entries(cache_dir)) == 2
    # Once no run reads it, the next export past the cap evicts it, least recently used.
    _release_exports()
    third = first.with_name("third.nsys-rep")
    third.write_bytes(b"\x00NSYS a third report" * 100)
    assert run_cli(["census", str(third), "--top", "1"], capsys)[0] == 0
    assert not old.path.exists()
    assert sorted(Path(e.source).name for e in cache_evict.entries(cache_dir) if e.export) == [
        "third.nsys-rep"
    ]


def test_cache_clear_keeps_the_export_a_run_reads(tmp_path, stub_nsys, capsys):
    # Before: `cache clear` removed a .nsys-rep's export while a run read it (the run reads
    # it by its path: it has no other copy, where a Parquet entry's run reads its trace).
    from tracelens import cache_evict

    report = _report(tmp_path)
    cache_dir = Path(os.environ["TRACELENS_CACHE_DIR"])
    with tracelens.open(report) as trace:  # a run reading the export
        census = trace.census().rows()
        (export,) = cache_evict.entries(cache_dir)
        rc, out, err = run_cli(["cache", "clear"], capsys)
        assert (rc, err) == (0, "")
        assert out == (
            f"removed 0 cached traces (0.0 MB) from {cache_dir}; kept 1 that running commands "
            f"read ({export.size_bytes / 1e6:,.1f} MB)\n"
        )
        assert (export.path / "export.sqlite").is_file()
        assert trace.api().height and trace.census().rows() == census
    _release_exports()  # the run ends
    rc, out, _err = run_cli(["cache", "clear"], capsys)
    assert out.startswith("removed 1 cached trace (") and "kept" not in out
    assert list((cache_dir / "traces").iterdir()) == []
    assert len(stub_nsys.read_text().splitlines()) == 1


def test_cache_clear_keeps_an_export_being_written(tmp_path, stub_nsys, capsys, monkeypatch):
    # Another command clears the cache while nsys writes the export into it: before, the
    # entry went from under nsys (cp: cannot create ...: the export failed).
    import sys

    cleared = tmp_path / "cleared.txt"
    monkeypatch.setenv("STUB_DURING", f"{sys.executable} -m tracelens cache clear > {cleared}")
    report = _report(tmp_path)
    rc, out, err = run_cli(["census", str(report), "--top", "1", "-f", "csv"], capsys)
    assert rc == 0, err
    assert cleared.read_text().startswith("removed 0 cached traces (0.0 MB) from ")
    assert "; kept 1 that running commands read (" in cleared.read_text()
    _release_exports()
