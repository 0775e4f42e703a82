"""Kept frames are written on the writing thread (tracelens.keep_writer), not on the thread
that hands them over: the diff's first cached run went on only once its 5M-row work file
was written. In the order handed over; looked for only once written; written by the time
the trace closes; a cache that cannot be written keeps nothing, without an error, and a
bug in a write is raised, not lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest
from conftest import run_cli

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


# -- adversarial: a run killed, a trace never closed, one file twice, a full or read-only
# cache. A kept file is written under a partial name, renamed into place and only then
# listed (cache.add_derived): whatever happens to the run, a later run reads a whole file
# or none, and its output is a direct read's.


def _listed(cache_dir: Path) -> dict[Path, str]:
    """Every file the entries' manifests list (tables and kept files): path -> what it is."""
    listed = {}
    for manifest in (cache_dir / "traces").glob("*/manifest.json"):
        data = json.loads(manifest.read_text(encoding="utf-8"))
        for table in data.get("tables", {}):
            listed[manifest.parent / f"{table}.parquet"] = "table"
        for name in data.get("derived", {}):
            listed[manifest.parent / name] = "kept"
    return listed


def _all_whole(cache_dir: Path) -> int:
    """How many kept files the entries list, each checked whole (read completely)."""
    kept = 0
    for path, what in _listed(cache_dir).items():
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        else:
            pl.read_parquet(path)
        kept += what == "kept"
    return kept


def _partials(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in (cache_dir / "traces").glob(f"*/*{cache.PARTIAL}"))


def _child(script: str, *args: object) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter importing this tracelens, with this environment
    (the test's cache directory and thresholds)."""
    src = str(Path(tracelens.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


# The tracelens CLI, killed (SIGKILL) while its writing thread writes its Nth kept Parquet
# file: half of the file written, as a disk write cut short.
_KILLED_WHILE_KEEPING = """
import os, signal, sys, threading
from pathlib import Path
import polars as pl
real, at, seen = pl.DataFrame.write_parquet, int(sys.argv[1]), []
def write_parquet(frame, path, *args, **kwargs):
    real(frame, path, *args, **kwargs)
    if threading.current_thread().name.startswith("tracelens-keep"):
        seen.append(path)
        if len(seen) == at:
            data = Path(path).read_bytes()
            Path(path).write_bytes(data[: len(data) // 2])
            print(Path(path).name, file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
pl.DataFrame.write_parquet = write_parquet
from tracelens.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("at", [1, 3, 6])
def test_a_run_killed_while_it_keeps_a_file_leaves_nothing_read(demo, cache_dir, capsys, at):
    """A diff's first cached run SIGKILLed while its writing thread writes its 1st (the
    diff's work), 3rd (util's accounting, a bundle's first part) or 6th (that bundle's
    figures) kept file: the half-written file is never listed, the next run's output is a
    direct read's, and that run removes the partial file and keeps whole files only."""
    direct = run_cli(["diff", demo, demo, "--no-cache"], capsys)
    assert direct[0] == 0
    killed = _child(_KILLED_WHILE_KEEPING, at, "diff", demo, demo)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    cut = killed.stderr.strip().splitlines()[-1]
    assert _partials(cache_dir) == [cut] and cut.endswith(cache.PARTIAL)
    kept_before = _all_whole(cache_dir)  # what was written before the kill: whole, listed
    assert kept_before == at - 1
    assert run_cli(["diff", demo, demo], capsys)[:2] == direct[:2]
    assert _partials(cache_dir) == []
    assert _all_whole(cache_dir) > kept_before
    assert run_cli(["diff", demo, demo], capsys)[:2] == direct[:2]  # read back


# A library user who never closes the trace: the interpreter exits with the kept writes
# handed over and not yet written (each held 0.2 s).
_NEVER_CLOSED = """
import sys, time
import polars as pl
import tracelens
real = pl.DataFrame.write_parquet
def write_parquet(frame, path, *args, **kwargs):
    time.sleep(0.2)
    real(frame, path, *args, **kwargs)
pl.DataFrame.write_parquet = write_parquet
t = tracelens.open(sys.argv[1])
tracelens.diff(t, t)
from tracelens import keep_writer
print(len(keep_writer._pending), file=sys.stderr)
"""


def test_a_trace_never_closed_still_writes_what_it_kept(demo, cache_dir, capsys):
    """``t = tracelens.open(p); tracelens.diff(t, t)`` and exit, the writes pending: the
    writing thread is not a daemon, so the interpreter waits for it; every kept file is
    listed whole and a later diff reads them back, with a direct read's output."""
    ran = _child(_NEVER_CLOSED, demo)
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stderr.strip().splitlines()[-1]) >= 2  # exited with writes pending
    assert _partials(cache_dir) == []
    kept = _all_whole(cache_dir)
    assert kept >= 2
    direct = run_cli(["diff", demo, demo, "--no-cache"], capsys)
    assert run_cli(["diff", demo, demo], capsys)[:2] == direct[:2]
    assert _all_whole(cache_dir) >= kept


def test_one_file_twice_in_one_process_as_a_direct_read(demo, cache_dir, capsys, monkeypatch):
    """``diff A A`` and ``report A A``, first runs through the cache: two Traces of one file
    keep the same names in one entry, each looking for what the other keeps while its
    writes wait (each held 0.05 s on the writing thread); the output is a direct read's,
    first run and repeat."""
    import time

    real = pl.DataFrame.write_parquet

    def slow(frame, path, *args, **kwargs):
        if threading.current_thread().name.startswith("tracelens-keep"):
            time.sleep(0.05)
        real(frame, path, *args, **kwargs)

    page = demo.parent / "page.html"
    commands = (["diff", demo, demo], ["report", demo, demo, "-o", page])
    direct = []
    for args in commands:
        page.unlink(missing_ok=True)
        direct.append((run_cli([*args, "--no-cache"], capsys)[:2], _read(page)))
    monkeypatch.setattr(pl.DataFrame, "write_parquet", slow)
    for _round in range(2):
        for args, expected in zip(commands, direct, strict=True):
            page.unlink(missing_ok=True)
            assert (run_cli(args, capsys)[:2], _read(page)) == expected
    assert _partials(cache_dir) == [] and _all_whole(cache_dir) > 0


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def test_a_full_cache_on_the_writing_thread_keeps_nothing(demo, cache_dir, capsys, monkeypatch):
    """A disk that fills while the writing thread writes: polars reports it as a
    ComputeError "... (os error 28)" (as it does writing to /dev/full), which is an OSError
    there (cache._as_os_error): the diff's first cached run exits 0 with a direct read's
    output, keeps nothing and leaves no partial file; the next run the same."""
    direct = run_cli(["diff", demo, demo, "--no-cache"], capsys)

    def full(frame, path, *args, **kwargs):
        Path(path).write_bytes(b"PAR1")  # a start, cut short
        raise pl.exceptions.ComputeError(
            "parquet: File out of specification: underlying IO error: "
            "No space left on device (os error 28)"
        )

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    for _round in range(2):
        code, out, err = run_cli(["diff", demo, demo], capsys)
        assert (code, out) == direct[:2] and _notices_only(err)
        assert _all_whole(cache_dir) == 0 and _partials(cache_dir) == []


def _notices_only(err: str) -> bool:
    """Whether ``err`` holds only the notices of a trace being cached."""
    return all(
        line.startswith(("tracelens: caching run.sqlite ", "tracelens: adding "))
        for line in err.splitlines()
    )


def _read_only(monkeypatch, root: Path) -> None:
    """``root`` as a directory this user cannot write (EACCES; the tests may run as root,
    for whom a chmod changes nothing): opening a file there to write, making a directory,
    replacing or removing a file fails, as it does there."""
    import errno

    def denied(path) -> PermissionError:
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    def inside(path) -> bool:
        return Path(path).resolve().is_relative_to(root.resolve())

    real_open, real_mkdir = Path.open, Path.mkdir
    real_replace, real_unlink = os.replace, Path.unlink

    def open_(self, mode="r", *args, **kwargs):
        if inside(self) and set(mode) & set("wax+"):
            raise denied(self)
        return real_open(self, mode, *args, **kwargs)

    def mkdir(self, *args, **kwargs):
        if inside(self) and not self.is_dir():
            raise denied(self)
        return real_mkdir(self, *args, **kwargs)

    def replace(src, dst, *args, **kwargs):
        if inside(src) or inside(dst):
            raise denied(dst)
        return real_replace(src, dst, *args, **kwargs)

    def unlink(self, *args, **kwargs):
        if inside(self):
            raise denied(self)
        return real_unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(Path, "unlink", unlink)


def test_a_read_only_cache_keeps_nothing_and_reads_what_it_holds(
    demo, cache_dir, capsys, monkeypatch
):
    """An entry whose tables runs of a selection cached (a selection keeps none of the
    diff's files), then the cache made read-only: the diff of the whole trace reads the
    tables, and the files its writing thread fails to write are not kept, without a notice
    or an error; the output is a direct read's."""
    direct = run_cli(["diff", demo, demo, "--no-cache"], capsys)
    selected = (["diff", demo, demo, "--a-start", "1ms", "--b-start", "1ms"],
                ["util", demo, "--start", "1ms"])  # fmt: skip
    for args in selected:
        assert run_cli(args, capsys)[0] == 0
    listed = _listed(cache_dir)  # the tables, and the whole trace's steps
    assert not [p for p in listed if p.name.startswith("tracelens_diff")]
    _read_only(monkeypatch, cache_dir)
    assert run_cli(["diff", demo, demo], capsys) == direct
    assert _listed(cache_dir) == listed
