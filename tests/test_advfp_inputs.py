"""An export without StringIds (the table of names; a parquetdir export missing
StringIds.parquet, or a SQLite export without the table): no kernel has a name, so no
launch is on the path; fingerprint said "internal error: InvalidOperationError" (found by
advfp)."""

from __future__ import annotations

import sqlite3

from conftest import run_cli
from fixtures.fingerprint_runs import build_run


def test_sqlite_export_without_stringids_fingerprints(tmp_path, capsys):
    trace = build_run(tmp_path / "base.sqlite")
    con = sqlite3.connect(trace)
    con.execute("DROP TABLE StringIds")
    con.commit()
    con.close()
    code, out, err = run_cli(["fingerprint", trace], capsys)
    assert '"launches": 0,' in out and '"paths": []' in out
    # no longer silent: the launches whose names it could not read are said left out
    # (tests/test_fingerprint_unnamed.py)
    assert (code, err) == (
        0,
        "tracelens: note: 21 kernel launches name a string the export does not hold "
        "(StringIds lacks their ids: a damaged export): left out of the path\n",
    )
