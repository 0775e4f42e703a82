"""A `.nsys-rep` whose `nsys export` exits 0 but writes a file that is not a readable nsys
export (garbage, a file cut short, a SQLite database without nsys tables): one line
against the report, exit 2, nothing kept in the cache; the next run with a working nsys
exports it again and succeeds. An unreadable export already in the cache (kept by an older
version) is exported again, not served. A stub nsys here (CI has none)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from conftest import run_cli
from test_inputs import _report  # the same .nsys-rep in a work directory

STUB = """#!/bin/sh
# `nsys export --type sqlite --force-overwrite true -o DEST REPORT`, writing $STUB_WRITES.
echo "$@" >> "{log}"
while [ $# -gt 2 ]; do [ "$1" = "-o" ] && dest="$2"; shift; done
case "$STUB_WRITES" in
  garbage) echo "this is not a database" > "$dest" ;;
  cut) head -c 20000 "{export}" > "$dest" ;;
  plain) cp "{plain}" "$dest" ;;
  *) cp "{export}" "$dest" ;;
esac
exit 0
"""


@pytest.fixture
def nsys_log(tmp_path, monkeypatch):
    from tracelens.demo import demo_path

    plain = tmp_path / "plain.sqlite"
    with sqlite3.connect(plain) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
        con.execute("INSERT INTO t VALUES (1)")
    con.close()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "nsys.log"
    script = bin_dir / "nsys"
    script.write_text(STUB.format(log=log, export=demo_path("bs16"), plain=plain))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _kept_files() -> list[Path]:
    traces = Path(os.environ["TRACELENS_CACHE_DIR"]) / "traces"
    return [p for p in traces.rglob("*") if p.is_file() and not p.name.startswith(".")]


@pytest.mark.parametrize(
    ("writes", "problem"),
    [
        ("garbage", "is not a SQLite database"),
        ("cut", "is truncated (20000 of "),
        ("plain", "a SQLite database without nsys tables"),
    ],
)
def test_unreadable_export_is_one_line_and_not_kept(
    tmp_path, nsys_log, capsys, monkeypatch, writes, problem
):
    report = _report(tmp_path)
    argv = ["census", str(report), "--top", "2", "-f", "csv"]
    monkeypatch.setenv("STUB_WRITES", writes)
    rc, out, err = run_cli(argv, capsys)
    assert (rc, out) == (2, "")
    started, failed = err.splitlines()
    assert started.startswith("tracelens: exporting run.nsys-rep to SQLite with nsys into ")
    assert failed.startswith(
        f"tracelens: {report}: nsys export wrote a file that is not a readable nsys export "
        f"({problem}"
    )
    assert failed.endswith(f"-o {report.with_suffix('.sqlite')} {report}` to see why")
    assert not [p for p in _kept_files() if p.suffix in (".sqlite", ".json")]
    # A working nsys next: exported again, and read.
    monkeypatch.delenv("STUB_WRITES")
    rc, out, err = run_cli(argv, capsys)
    assert rc == 0 and out.startswith("time_pct,total_ns,") and len(out.splitlines()) == 3
    assert len(nsys_log.read_text().splitlines()) == 2


def test_unreadable_export_in_the_cache_is_exported_again(tmp_path, nsys_log, capsys):
    report = _report(tmp_path)
    argv = ["census", str(report), "--top", "2", "-f", "csv"]
    rc, out, _ = run_cli(argv, capsys)
    assert rc == 0
    (export,) = [p for p in _kept_files() if p.name == "export.sqlite"]
    export.write_bytes(export.read_bytes()[:20000])  # what an older version could keep
    assert run_cli(argv, capsys)[:2] == (0, out)
    assert len(nsys_log.read_text().splitlines()) == 2
    # and read from the cache again after that
    assert run_cli(argv, capsys) == (0, out, "")
    assert len(nsys_log.read_text().splitlines()) == 2
