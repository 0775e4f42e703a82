"""A column name of the export's schema damaged into bytes that are not UTF-8 (a random
page damage of a shared export hit sqlite_master's text: TARGET_INFO_GPU's 'maxBlockDimX'
became b'maxBloc\\xddDimX') is a corrupt file in one line: `info` and `report` said
'internal error: UnicodeDecodeError ... please report it' (Python decodes the names of a
result's columns as UTF-8 whatever the connection's text factory)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder


@pytest.fixture
def damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python train.py")
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=100, tid=100)
    b.kernel("void k(float*)", start=3_000, end=8_000, pid=100, correlation_id=cid)
    path = b.write(tmp_path / "t.sqlite")
    con = sqlite3.connect(path)
    # the GPU table as nsys 2024 writes it (its first columns), which `info` reads whole
    con.execute(
        "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, maxBlockDimX INTEGER)"
    )
    con.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100', 1024)")
    column = "maxBlockDimX"
    con.execute("PRAGMA writable_schema = ON")
    con.execute(
        "UPDATE sqlite_master SET sql = replace(sql, ?, ? || CAST(X'DD' AS TEXT) || ?) "
        "WHERE name = 'TARGET_INFO_GPU'",
        (column, column[:3], column[4:]),
    )
    con.commit()
    con.close()
    return path, f"{column[:3]}\\xdd{column[4:]}"


@pytest.mark.parametrize("args", [["info"], ["report", "-o", "{tmp}/r.html"]], ids=str)
def test_it_is_a_corrupt_file(damaged, args, capsys):
    path, shown = damaged
    args = [a.replace("{tmp}", str(path.parent)) for a in args]
    code, out, err = run_cli([args[0], path, *args[1:]], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {path}: is corrupt (a name in its schema is not UTF-8: '{shown}'); copy "
        "or export it again\n"
    )
