"""Damaged or odd exports (issue 16's adversarial sweep): each case is a fixture built here
from a copy of the demo trace, and every command gives one line naming the table and column
and the fix, with exit 2 (never an internal error), and nothing is written beside the file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, sha256

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
COMMANDS = [
    ["census"],
    ["stakeout", "{p}", "kernel"],
    ["timeline"],
    ["lineup"],
    ["report", "-o", "{o}"],
]


def _copy(tmp_path: Path, name: str = "run.sqlite") -> Path:
    from tracelens.demo import demo_path

    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Path(shutil.copyfile(demo_path("bs1"), work / name))


def _edit(path: Path, *statements: str, nullable: bool = False) -> Path:
    con = sqlite3.connect(path)
    if nullable:  # let the kernel table take NULLs, as a damaged file can
        con.execute("PRAGMA writable_schema = ON")
        con.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = ?", (KERNEL,)
        )
        con.commit()
        con.close()
        con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()
    return path


def _run(args: list[str], path: Path, capsys, tmp_path: Path):
    argv = [a.format(p=path, o=tmp_path / "out.html") for a in args]
    if "{p}" not in args:
        argv.insert(1, str(path))
    return run_cli(argv, capsys)


def _assert_one_line(path: Path, problem: str, capsys, tmp_path):
    before = sha256(path)
    listing = sorted(os.listdir(path.parent))
    for args in COMMANDS:
        rc, out, err = _run(args, path, capsys, tmp_path)
        assert (rc, out, err) == (2, "", f"tracelens: {path}: {problem}\n"), args
    assert sha256(path) == before
    assert sorted(os.listdir(path.parent)) == listing, "files were created beside the trace"


DAMAGE = {
    "text": (
        [f"UPDATE {KERNEL} SET start = 'abc' WHERE rowid = 3"],
        False,
        f"is damaged: {KERNEL}.start holds text ('abc') where nsys writes integers; export it again",
    ),
    "real": (
        [f'UPDATE {KERNEL} SET "end" = "end" + 0.5 WHERE rowid = 3'],
        False,
        f"is damaged: {KERNEL}.end holds float ('2000424456.5') where nsys writes integers; "
        "export it again",
    ),
    "blob": (
        [f"UPDATE {KERNEL} SET \"end\" = x'00ff' WHERE rowid = 3"],
        False,
        f"is damaged: {KERNEL}.end holds blob ('') where nsys writes integers; export it again",
    ),
    "null": (
        [f"UPDATE {KERNEL} SET start = NULL WHERE rowid = 3"],
        True,
        f"is damaged: {KERNEL}.start is NULL in a row (nsys always writes it); export it again",
    ),
    "int64_extremes": (
        [
            f'UPDATE {KERNEL} SET start = -9223372036854775808, "end" = 9223372036854775807 '
            "WHERE rowid = 3"
        ],
        False,
        f"is damaged: {KERNEL}.start holds a time beyond 2^61 ns (73 years) from the session "
        "start; export it again",
    ),
    "no_string_values": (
        ["ALTER TABLE StringIds DROP COLUMN value"],
        False,
        "is damaged: StringIds (the table of names) has no value column; export it again",
    ),
}


@pytest.mark.parametrize("case", DAMAGE, ids=list(DAMAGE))
def test_damaged_values_are_one_line(case, tmp_path, capsys):
    statements, nullable, problem = DAMAGE[case]
    path = _edit(_copy(tmp_path), *statements, nullable=nullable)
    _assert_one_line(path, problem, capsys, tmp_path)


def test_damage_is_found_when_the_cache_is_built(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    path = _edit(_copy(tmp_path), f"UPDATE {KERNEL} SET start = 'abc' WHERE rowid = 3")
    rc, out, err = run_cli(["census", str(path)], capsys)
    assert (rc, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"tracelens: {path}: is damaged: {KERNEL}.start holds text ('abc') where nsys writes "
        "integers; export it again"
    )
    cache_dir = Path(os.environ["TRACELENS_CACHE_DIR"]) / "traces"
    assert [p for p in cache_dir.iterdir()] == []  # no entry, no leftover build


def test_invalid_utf8_after_valid_non_ascii(tmp_path, capsys):
    path = _edit(
        _copy(tmp_path),
        # a valid 'é' first, then a name with a byte that is not UTF-8 on two kernels
        "UPDATE StringIds SET value = CAST(X'C3A9' || CAST(value AS BLOB) AS TEXT) "
        f"WHERE id = (SELECT demangledName FROM {KERNEL} LIMIT 1)",
        "INSERT INTO StringIds (id, value) VALUES (99991, CAST(X'626164FF5F6B65726E656C' AS TEXT))",
        f"UPDATE {KERNEL} SET demangledName = 99991, shortName = 99991 WHERE rowid IN (5, 6)",
    )
    rc, out, err = run_cli(["census", str(path), "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert [line.rsplit(",", 1)[1] for line in out.splitlines() if "bad" in line] == [
        "bad\\xff_kernel"
    ]
    assert any(line.split(",", 8)[8].startswith('"évoid') for line in out.splitlines()[1:])
    for args in (["stakeout", str(path), "bad"], ["timeline", str(path)]):
        rc, out, err = run_cli(args, capsys)
        assert (rc, err) == (0, ""), args
        assert "bad\\xff_kernel" in out


def test_stray_wal_leaves_the_directory_alone(tmp_path, capsys):
    path = _copy(tmp_path)
    src = sqlite3.connect(tmp_path / "other.sqlite")
    src.execute("PRAGMA journal_mode = WAL")
    src.execute("CREATE TABLE t (x)")
    src.execute("INSERT INTO t VALUES (1)")
    src.commit()
    shutil.copyfile(tmp_path / "other.sqlite-wal", f"{path}-wal")
    src.close()
    listing = sorted(os.listdir(path.parent))
    cache_root = Path(os.environ["TRACELENS_CACHE_DIR"])
    for args in (["census"], ["timeline"], ["stakeout", "{p}", "kernel"]):
        rc, out, err = _run(args, path, capsys, tmp_path)
        assert rc == 0 and out
        assert err == (
            f"tracelens: run.sqlite-wal beside run.sqlite left alone; reading a private copy in "
            f"{cache_root}\n"
        )
    assert sorted(os.listdir(path.parent)) == listing  # no -shm, nothing rewritten
    assert not list(cache_root.glob(".copy-*"))  # the private copy is removed on close


def test_a_path_that_is_not_utf8(tmp_path, capsys):
    # os.fsdecode gives the \xff byte as a surrogate escape; DuckDB cannot take such text
    path = _copy(tmp_path, os.fsdecode(b"run\xff.sqlite"))
    before = sha256(path)
    listing = sorted(os.listdir(path.parent))
    cache_root = Path(os.environ["TRACELENS_CACHE_DIR"])
    for args in COMMANDS:
        rc, out, err = _run(args, path, capsys, tmp_path)
        assert rc == 0, (args, err)
        assert err == (
            "tracelens: run\\xff.sqlite: its path is not UTF-8; reading a private copy in "
            f"{cache_root}\n"
        )
        if args[0] != "report":
            assert "run\\xff.sqlite" in out.splitlines()[0]  # the byte shown, not written raw
    rc, out, err = run_cli(
        ["census", str(tmp_path / "work" / os.fsdecode(b"no\xff.sqlite"))], capsys
    )
    assert (rc, out) == (2, "") and err.endswith("no\\xff.sqlite: no such file\n")
    assert sorted(os.listdir(path.parent)) == listing and sha256(path) == before
    assert not list(cache_root.glob(".copy-*"))


def test_hot_journal(tmp_path, capsys):
    path = _copy(tmp_path)
    # A writer that dies mid-transaction leaves a hot journal (and maybe half-written pages).
    code = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA cache_size = 1')\n"
        "c.execute('BEGIN'); c.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    assert Path(f"{path}-journal").stat().st_size > 0
    _assert_one_line(
        path,
        "has an interrupted write (run.sqlite-journal beside it is a hot journal: the file may "
        "be half-written); run `sqlite3 run.sqlite 'PRAGMA integrity_check'` on it (or a copy "
        "with its journal) to roll the write back, or export it again",
        capsys,
        tmp_path,
    )


def test_a_writers_lock(tmp_path, capsys):
    path = _copy(tmp_path)
    code = (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True); time.sleep(120)\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline() == "locked\n"
        rc, out, err = run_cli(["census", str(path)], capsys)
        assert (rc, out) == (2, "")
        assert err == (
            f"tracelens: {path}: is locked by a process writing to it; wait for it to finish, "
            "or pass a copy\n"
        )
    finally:
        writer.kill()
        writer.wait()


@pytest.mark.parametrize("offset", [100_000, 200_000, 300_000])
def test_byte_flips_are_one_line(offset, tmp_path, capsys):
    path = _copy(tmp_path)
    with path.open("r+b") as f:
        for i in range(0, 4096, 7):
            f.seek(offset + i)
            byte = f.read(1)[0]
            f.seek(offset + i)
            f.write(bytes([byte ^ 0xFF]))
    for args in COMMANDS:
        rc, out, err = _run(args, path, capsys, tmp_path)
        assert rc in (0, 2), (args, err)
        assert "internal error" not in err and "Traceback" not in err
        if rc == 2:
            assert err.count("\n") == 1, err
            assert (
                err.startswith(f"tracelens: {path}: is corrupt (")
                or err.startswith(f"tracelens: {path}: is damaged: ")
                or "no kernel in run.sqlite" in err
            ), err
