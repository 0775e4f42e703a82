"""The columnar cache: same answers as direct reads on every real trace, never stale, never a
half-written entry, concurrent runs, an unwritable cache directory, LRU eviction, and the
`cache` command. Each test has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0
caches even the small shared traces."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import needs_shared, run_cli, shared_traces

import tracelens
from tracelens import cache, cache_evict
from tracelens._schema import VIEWS, VIEWS_BY_TABLE

REPO = Path(__file__).resolve().parents[1]


def _entries(cache_dir: Path) -> list[Path]:
    base = cache_dir / "traces"
    return sorted(p for p in base.iterdir() if not p.name.startswith(".")) if base.is_dir() else []


def _answer(compute):
    try:
        return compute()
    except tracelens.TracelensError as exc:  # the same error either way is parity too
        return type(exc).__name__, str(exc)


def _stakeout_top(trace: tracelens.Trace):
    top = trace.census(name="short", top=1)["name"][0]
    s = trace.stakeout(top, match="exact", name="short", limit=50)
    return s.stats, s.configs.rows(), s.histogram.rows(), s.launches.rows()


def _answers(trace: tracelens.Trace) -> dict:
    """Every analysis whose result must not depend on where the rows come from."""
    info = trace.info.to_dict()
    info.pop("tables"), info.pop("path")
    out: dict = {"info": info}
    for name in ("demangled", "short", "mangled"):
        out[f"census_{name}"] = _answer(lambda n=name: trace.census(name=n).rows())
    out["census_lc"] = _answer(lambda: trace.census(by_launch_config=True).rows())
    out["lineup"] = _answer(lambda: trace.lineup().rows())
    out["stakeout"] = _answer(lambda: _stakeout_top(trace))
    out["memory"] = _answer(lambda: (trace.memory_time().rows(), trace.memory_size().rows()))
    out["timeline"] = _answer(
        lambda: (lambda t: (t.total, t.events.rows()))(trace.timeline(api=True, limit=300))
    )
    return out


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.name)
def test_cached_answers_equal_direct_reads(path, cache_dir):
    with tracelens.open(path, cache=False) as direct:
        expected = _answers(direct)
        assert direct.parquet_dir is None
    with tracelens.open(path) as built:  # builds the entry as the analyses read tables
        assert _answers(built) == expected
        # nothing is cached of a trace with none of the tables the views read
        has_tables = bool(set(VIEWS_BY_TABLE) & set(built.tables))
        assert (built.parquet_dir is not None) == has_tables
    with tracelens.open(path) as cached:  # reads it
        assert _answers(cached) == expected
        assert cached.parquet_dir == built.parquet_dir
    assert _entries(cache_dir) == ([built.parquet_dir] if has_tables else [])


def _copy(src: Path, dest: Path) -> Path:
    shutil.copyfile(src, dest)
    return dest


def _demo_copy(tmp_path: Path) -> Path:
    from tracelens.demo import demo_path

    return _copy(demo_path("bs1"), tmp_path / "run.sqlite")


def test_small_traces_and_no_cache_are_read_directly(tmp_path, cache_dir, monkeypatch):
    path = _demo_copy(tmp_path)
    with tracelens.open(path, cache=False) as t:
        t.census()
        assert t.parquet_dir is None
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    with tracelens.open(path) as t:
        t.census()
        assert t.parquet_dir is None
    monkeypatch.delenv("TRACELENS_NO_CACHE")
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "1")  # the demo trace is 0.4 MB
    with tracelens.open(path) as t:
        t.census()
        assert t.parquet_dir is None
    assert _entries(cache_dir) == []
    assert sorted(os.listdir(tmp_path)) == ["run.sqlite"]  # nothing beside the trace


def test_rewritten_trace_is_never_served_stale(tmp_path, cache_dir):
    path = _demo_copy(tmp_path)
    with tracelens.open(path) as t:
        before = t.census(top=1).rows()
    # Rewrite the file in place with other content of the same size: one kernel 1 ms longer.
    changed = _copy(path, tmp_path / "changed.sqlite")
    con = sqlite3.connect(changed)
    con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + 1000000 WHERE rowid = 1')
    con.commit()
    con.close()
    assert changed.stat().st_size == path.stat().st_size
    stat = path.stat()
    shutil.copyfile(changed, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with tracelens.open(path) as t, tracelens.open(changed, cache=False) as direct:
        after = t.census().rows()
        assert after == direct.census().rows()
    assert after[:1] != before
    # Same size and the old mtime put back: the header's change counter still tells them apart.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with tracelens.open(path) as t:
        assert t.census().rows() == after
    assert len(_entries(cache_dir)) == 3  # old content, new content at two mtimes


def _kernels_of(dur_ns: int, dest: Path) -> Path:
    """An export of 3000 kernels of ``dur_ns`` each: two of them differ only in the middle
    of the file (size, first and last 4 KiB the same, SQLite's change counter included)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(200, "python a.py")
    b.gpu(0)
    t = 1_000_000
    for i in range(3000):
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2_000)
        b.kernel(f"k{i % 7}(float*)", start=t + 5_000, end=t + 5_000 + dur_ns, correlation_id=cid)
        t += 50_000
    b.write(dest)
    return dest


def test_a_trace_rewritten_in_place_with_its_mtime_put_back_is_never_served_stale(
    tmp_path, cache_dir
):
    # `cat new.sqlite > run.sqlite; touch -d ... run.sqlite`: same inode, size, mtime, first
    # and last 4 KiB; only the status change time (which no user call sets) tells them apart.
    old, new = (
        _kernels_of(5000, tmp_path / "old.sqlite"),
        _kernels_of(6000, tmp_path / "new.sqlite"),
    )
    old_bytes, new_bytes = old.read_bytes(), new.read_bytes()
    assert len(old_bytes) == len(new_bytes) and old_bytes != new_bytes
    assert old_bytes[:4096] == new_bytes[:4096] and old_bytes[-4096:] == new_bytes[-4096:]
    path = _copy(old, tmp_path / "run.sqlite")
    mtime = path.stat().st_mtime_ns - 3600 * 10**9
    os.utime(path, ns=(mtime, mtime))
    with tracelens.open(path) as t:
        before = t.census().rows()
        assert t.parquet_dir is not None
    was = path.stat()
    with path.open("r+b") as f:
        f.write(new_bytes)
    os.utime(path, ns=(mtime, mtime))
    now = path.stat()
    assert (now.st_ino, now.st_size, now.st_mtime_ns) == (was.st_ino, was.st_size, was.st_mtime_ns)
    assert now.st_ctime_ns != was.st_ctime_ns
    with tracelens.open(path) as t, tracelens.open(new, cache=False) as direct:
        after = t.census().rows()
        assert after == direct.census().rows() != before
        assert t.parquet_dir is not None
    assert len(_entries(cache_dir)) == 2


def _whole(trace: tracelens.Trace) -> dict:
    return {view: trace.sql(f"SELECT * FROM {view} ORDER BY ALL").rows() for view in VIEWS}


def test_a_run_reads_the_tables_other_runs_cached_meanwhile(tmp_path, cache_dir):
    # Two runs on one trace, in turns (what runs at the same time do, made deterministic):
    # the first caches the API calls only; the second then caches every table whole; the
    # first finds that in the manifest when it next writes, and from then on must read those
    # tables (its views of them were planned over 3-row placeholders: read as the table,
    # census named kernels `<unknown string id -9223372036...>` and nvtx --gpu had no rows).
    path = _demo_copy(tmp_path)
    with tracelens.open(path, cache=False) as direct:
        expected = (_answers(direct), direct.api().rows(), direct.nvtx().rows(), _whole(direct))
    with tracelens.open(path) as first:
        first.api()
        (entry,) = _entries(cache_dir)
        assert set(cache.cached_columns(entry)) == {"CUPTI_ACTIVITY_KIND_RUNTIME", "StringIds"}
        with tracelens.open(path) as second:
            assert _whole(second) == expected[3]
        held = cache.cached_columns(entry)
        for table in set(VIEWS_BY_TABLE) & set(first.tables):
            assert set(held[table]) >= {c for c, _ in VIEWS_BY_TABLE[table][1]} & set(
                first.tables[table]
            ), table
        census = first.census().rows()  # reads the kernels only (then finds the others)
        answers = (_answers(first), first.api().rows(), first.nvtx().rows(), _whole(first))
    assert census == expected[0]["census_demangled"]
    assert answers == expected


def test_a_run_that_cannot_write_reads_the_export_or_whole_cached_tables(
    tmp_path, cache_dir, monkeypatch
):
    # As above, but the first run's write fails (a full disk) after it found what the other
    # run cached: from then on every view reads the export or a table it already read whole.
    path = _demo_copy(tmp_path)
    memsets = VIEWS_BY_TABLE["CUPTI_ACTIVITY_KIND_MEMSET"][0]
    with tracelens.open(path, cache=False) as direct:
        expected = (_answers(direct), _whole(direct))
    with tracelens.open(path) as first:
        first.api()
        with tracelens.open(path) as second:  # every table whole, but the memsets
            for view in VIEWS:
                if view != memsets:
                    second.sql(f"SELECT * FROM {view}")

        def disk_full(*_args, **_kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(cache, "add", disk_full)
        memory = first.memory_time().rows()  # memcpys (cached meanwhile) and memsets (not)
        assert first.notices == [
            f"cannot cache run.sqlite in {cache_dir} (No space left on device); "
            "reading the trace directly"
        ]
        answers = (_answers(first), _whole(first))
    assert memory == expected[0]["memory"][0]
    assert answers == expected


CHILD = textwrap.dedent(
    """
    import sys, time
    import tracelens

    def progress(message, fraction):
        if message and message.startswith("caching"):
            print("building", flush=True)
            time.sleep(float(sys.argv[2]))  # stay inside the build

    with tracelens.open(sys.argv[1], progress=progress) as trace:
        print(trace.census().write_csv(), end="")
    """
)


def _child(path: Path, pause_s: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(pause_s)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_killed_build_is_never_read(tmp_path, cache_dir):
    path = _demo_copy(tmp_path)
    child = _child(path, 600)
    assert child.stdout.readline() == "building\n"
    child.kill()
    child.wait()
    (entry,) = _entries(cache_dir)
    assert cache.cached_columns(entry) == {}  # killed before any table was complete
    # What a killed writer can leave: a half-written table under its temporary name, and a
    # complete file it renamed but did not list yet. Neither must be read: poison both.
    kernels = entry / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    (entry / f"{kernels.name}.999.partial").write_bytes(b"PAR1 half a file")
    kernels.write_bytes(b"PAR1 not listed")
    with tracelens.open(path) as t, tracelens.open(path, cache=False) as direct:
        assert t.census().rows() == direct.census().rows()
        assert t.parquet_dir == entry
    assert "CUPTI_ACTIVITY_KIND_KERNEL" in cache.cached_columns(entry)
    assert list(entry.glob("*.partial")) == []  # the next writer removed it


def test_two_concurrent_builds_both_succeed(tmp_path, cache_dir):
    path = _demo_copy(tmp_path)
    children = [_child(path, 1.0), _child(path, 1.0)]
    results = [c.communicate(timeout=300) for c in children]
    assert [c.returncode for c in children] == [0, 0], results
    with tracelens.open(path, cache=False) as direct:
        expected = direct.census().write_csv()
    assert [out.replace("building\n", "") for out, _err in results] == [expected, expected]
    assert len(_entries(cache_dir)) == 1
    assert list((cache_dir / "traces").glob("*/*.partial")) == []


def test_unwritable_cache_dir_reads_directly_with_one_line(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    path = _demo_copy(tmp_path)
    rc, out, err = run_cli(["census", str(path), "--top", "1", "-f", "csv"], capsys)
    assert rc == 0
    assert err == (
        f"tracelens: cannot cache run.sqlite in {blocker / 'cache'} (Not a directory); "
        "reading the trace directly\n"
    )
    with tracelens.open(path, cache=False) as direct:
        assert out == direct.census(top=1).write_csv()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_cache_dir(tmp_path, cache_dir):
    cache_dir.chmod(0o555)
    try:
        with tracelens.open(_demo_copy(tmp_path)) as t:
            t.census()
            assert t.parquet_dir is None
            assert t.notices and "Permission denied" in t.notices[0]
    finally:
        cache_dir.chmod(0o755)


def test_least_recently_used_entries_are_evicted(tmp_path, cache_dir, monkeypatch):
    paths = [_copy(_demo_copy(tmp_path), tmp_path / f"t{i}.sqlite") for i in range(3)]
    for i, p in enumerate(paths):  # make each copy a different trace (content and mtime)
        con = sqlite3.connect(p)
        con.execute(f'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + {i} WHERE rowid = 1')
        con.commit()
        con.close()
    sizes = []
    for p in paths[:2]:
        with tracelens.open(p) as t:
            t.census()
            sizes.append(cache_evict._dir_bytes(t.parquet_dir))
    time.sleep(0.05)
    with tracelens.open(paths[0]) as t:  # t0 is now the most recently used
        t.census()
    # Room for two entries: caching t2 must drop t1, the least recently used.
    monkeypatch.setenv("TRACELENS_CACHE_MAX_MB", str((max(sizes) * 2.5) / 1e6))
    with tracelens.open(paths[2]) as t:
        t.census()
    sources = sorted(Path(e.source).name for e in cache_evict.entries(cache_dir))
    assert sources == ["t0.sqlite", "t2.sqlite"]


def test_entries_of_an_older_cache_format_are_evicted_first(tmp_path, cache_dir, monkeypatch):
    # An entry an older version wrote (its key hashes another format, so this version never
    # reads it) still holds disk: it counts against the cap and goes before any current one.
    old = cache_dir / "traces" / "0123456789abcdef0123456789abcdef"
    old.mkdir(parents=True)
    manifest = {"format": cache.CACHE_FORMAT - 1, "source": "/old/run.sqlite", "identity": {}}
    (old / "manifest.json").write_text(json.dumps(manifest))
    (old / "CUPTI_ACTIVITY_KIND_KERNEL.parquet").write_bytes(b"x" * 200_000)
    first, second = (_copy(_demo_copy(tmp_path), tmp_path / f"t{i}.sqlite") for i in range(2))
    con = sqlite3.connect(second)  # a different trace from the first
    con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + 1 WHERE rowid = 1')
    con.commit()
    con.close()
    with tracelens.open(first) as t:
        t.census()
        size = cache_evict._dir_bytes(t.parquet_dir)
    time.sleep(0.05)
    os.utime(old / "manifest.json")  # the old entry is now the most recently touched
    (stale,) = [e for e in cache_evict.entries(cache_dir) if e.stale]
    assert stale.path == old and stale.size_bytes >= 200_000
    # Room for the two current entries only: the old one goes, though t0 is used less lately.
    monkeypatch.setenv("TRACELENS_CACHE_MAX_MB", str((size * 2.5) / 1e6))
    with tracelens.open(second) as t:
        t.census()
    assert not old.exists()
    sources = sorted(Path(e.source).name for e in cache_evict.entries(cache_dir))
    assert sources == ["t0.sqlite", "t1.sqlite"]


def test_cache_info_and_clear(tmp_path, cache_dir, capsys):
    path = _demo_copy(tmp_path)
    rc, _out, err = run_cli(["census", str(path), "--top", "1"], capsys)
    entry = _entries(cache_dir)[0]
    assert rc == 0 and err == (
        f"tracelens: caching run.sqlite (0.4 MB) as Parquet in {entry} (once; later runs read it)\n"
    )
    rc, out, err = run_cli(["cache", "info"], capsys)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"cache      {cache_dir}"
    assert lines[2].startswith("holds      1 trace, ")
    assert lines[3].endswith(f"  {path}")
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["identity"]["size"] == path.stat().st_size
    rc, out, err = run_cli(["cache", "clear"], capsys)
    assert rc == 0 and out.startswith("removed 1 cached trace (") and err == ""
    assert _entries(cache_dir) == []
    assert path.exists()


@pytest.mark.parametrize("where", [["--no-cache", "census"], ["census", "--no-cache"]])
def test_no_cache_flag_anywhere(tmp_path, cache_dir, capsys, where):
    path = _demo_copy(tmp_path)
    rc, out, err = run_cli([*where, str(path), "--top", "1"], capsys)
    assert (rc, err) == (0, "") and out.startswith("census of run.sqlite")
    assert _entries(cache_dir) == []


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_progress_bar_only_on_a_terminal(tmp_path, cache_dir, tty):
    from tracelens.cli._progress import StderrProgress

    stream = _Stream(tty)
    with tracelens.open(_demo_copy(tmp_path), progress=StderrProgress(stream)) as t:
        t.census()
    first, *rest = stream.text.split("\n")
    assert first.startswith("tracelens: caching run.sqlite (0.4 MB) as Parquet in ")
    if tty:
        assert rest[0].startswith("\r  ") and rest[0].endswith("█ 100%") and rest[1:] == [""]
    else:
        assert rest == [""]


def test_the_cache_holds_what_commands_read(tmp_path, cache_dir, capsys):
    # census copies only what it reads of the kernels (and the names), nothing of the other
    # tables; a command that needs more of a table copies all of its columns, once.
    path = _demo_copy(tmp_path)
    rc, _out, err = run_cli(["census", str(path), "-f", "csv"], capsys)
    (entry,) = _entries(cache_dir)
    assert rc == 0 and err.startswith("tracelens: caching run.sqlite (0.4 MB)")
    held = cache.cached_columns(entry)
    assert set(held) == {"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"}
    assert {"start", "end", "demangledName"} <= set(held["CUPTI_ACTIVITY_KIND_KERNEL"])
    assert "gridX" not in held["CUPTI_ACTIVITY_KIND_KERNEL"]
    rc, _out, err = run_cli(["census", str(path), "-f", "csv"], capsys)
    assert (rc, err) == (0, "") and cache.cached_columns(entry) == held  # read, not copied
    rc, _out, err = run_cli(["stakeout", str(path), "nvjet", "-f", "csv"], capsys)
    assert rc == 0 and err.startswith("tracelens: adding ")
    kernels = VIEWS_BY_TABLE["CUPTI_ACTIVITY_KIND_KERNEL"][1]
    assert cache.cached_columns(entry)["CUPTI_ACTIVITY_KIND_KERNEL"] == tuple(c for c, _ in kernels)
    assert "CUPTI_ACTIVITY_KIND_RUNTIME" in cache.cached_columns(entry)


def _sqlite_extension_loaded(trace: tracelens.Trace) -> bool:
    sql = "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'sqlite_scanner'"
    return bool(trace.sql(sql).item())


def test_what_the_cache_holds_is_read_without_the_sqlite_extension(tmp_path, cache_dir):
    # Statements are planned over probes, not over the export's views: a run the entry
    # answers never loads DuckDB's sqlite extension; one that needs more loads it then.
    path = _demo_copy(tmp_path)
    with tracelens.open(path) as t:
        t.census()
        assert _sqlite_extension_loaded(t)  # it built the entry
    with tracelens.open(path) as t, tracelens.open(path, cache=False) as direct:
        assert t.census().rows() == direct.census().rows()
        assert not _sqlite_extension_loaded(t)
        # a table the entry lacks, read for no column, still counts the export's rows
        for view in ("runtime_calls", "memcpys", "kernels"):
            count = f"SELECT count(*) AS n FROM {view}"
            assert t.sql(count).item() == direct.sql(count).item() > 0, view
        assert _sqlite_extension_loaded(t)
        held = cache.cached_columns(t.parquet_dir)
        assert {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY"} <= set(held)
        # a filter on a column the entry lacks is a column the statement reads
        where = "SELECT count(*) FROM kernels WHERE gridX > 1 AND registersPerThread >= 0"
        assert t.sql(where).item() == direct.sql(where).item()
        assert "gridX" in cache.cached_columns(t.parquet_dir)["CUPTI_ACTIVITY_KIND_KERNEL"]


class _SettingsAtCopy:
    """A DuckDB connection that notes its threads and insertion-order setting when a COPY
    starts (what cache._copy runs it with)."""

    def __init__(self, con):
        self.con, self.seen = con, []

    def execute(self, sql, params=None):
        if sql.startswith("COPY"):
            setting = (
                "SELECT current_setting('threads'), current_setting('preserve_insertion_order')"
            )
            self.seen.append(self.con.execute(setting).fetchone())
        return self.con.execute(sql, params)


def test_copies_from_the_export_run_on_every_thread_unordered(tmp_path, cache_dir):
    # An ordered COPY from the sqlite scanner (no batch indexes) runs on one thread whatever
    # the setting: the cache copies the export's tables with insertion order off, on every
    # thread, and sets it back after (also when the copy fails); a copy DuckDB writes in
    # order in parallel anyway (from a temporary table) keeps its order.
    from tracelens import _engine

    path = _demo_copy(tmp_path)
    con = _engine.connect()
    con.execute("SET VARIABLE trace_path = $p", {"p": str(path)})
    con.execute("SET threads = 3")
    export = (
        "SELECT start, \"end\" FROM sqlite_scan(getvariable('trace_path'), "
        "'CUPTI_ACTIVITY_KIND_KERNEL')"
    )
    con.execute(f"CREATE TEMP TABLE held AS {export}")
    watched = _SettingsAtCopy(con)
    for n, select in enumerate((export, "SELECT * FROM held")):
        table = cache.Table(f"t{n}.parquet", select, ("start", "end"))
        cache._copy(watched, table, tmp_path / table.file)
    assert watched.seen == [(3, False), (3, True)]
    order = "SELECT current_setting('preserve_insertion_order')"
    assert con.execute(order).fetchone()[0] is True
    copy = f"COPY ({export}) TO '{tmp_path / 'x.parquet'}' (FORMAT parquet)"
    with pytest.raises(RuntimeError), cache._parallel_unless_batched(con, copy):
        assert con.execute(order).fetchone()[0] is False
        raise RuntimeError  # the setting is put back when the copy fails too
    assert con.execute(order).fetchone()[0] is True
    # the cached kernels are the export's rows (one range of rowids: in its order too)
    with tracelens.open(path) as t:
        t.census()
        cached = t.parquet_dir / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    with sqlite3.connect(path) as db:
        rows = db.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid')
        expected = rows.fetchall()
    got = con.execute('SELECT start, "end" FROM read_parquet($f)', {"f": str(cached)}).fetchall()
    assert got == expected and len(set(expected)) > 1


def _repeated(src: Path, dest: Path, times: int) -> Path:
    """``src``'s GPU work and CUDA calls ``times`` times over, each copy later in time (by
    the trace's span) and with its own correlation ids: a kernel table of several ranges of
    rowids, which DuckDB's scanner reads on several threads."""
    _copy(src, dest)
    with sqlite3.connect(dest) as db:
        span = db.execute('SELECT max("end") - min(start) + 1000 FROM CUPTI_ACTIVITY_KIND_KERNEL')
        shift_ns = span.fetchone()[0]
        shift_ids = db.execute("SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME")
        shift_ids = shift_ids.fetchone()[0]
        for table in (
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
        ):
            names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            rows = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
            shifted = {
                "start": "start + ?1",
                "end": '"end" + ?1',
                "correlationId": "correlationId + ?2",
            }
            select = ", ".join(shifted.get(n, f'"{n}"') for n in names)
            quoted = ", ".join(f'"{n}"' for n in names)
            for k in range(1, times):
                db.execute(
                    f"INSERT INTO {table} ({quoted}) SELECT {select} FROM {table} WHERE rowid <= ?3",
                    (k * shift_ns, k * shift_ids, rows),
                )
    return dest


def test_cached_answers_equal_direct_reads_of_a_table_read_on_several_threads(tmp_path, cache_dir):
    # The cache copies such a table on every thread with its ranges in any order (fast),
    # not in the export's row order: no answer may depend on that order.
    path = _repeated(_demo_copy(tmp_path), tmp_path / "long.sqlite", 130)
    with sqlite3.connect(path) as db:
        kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert kernels > 2 * 122_880  # three ranges of the scanner or more
    with tracelens.open(path, cache=False) as direct:
        expected = _answers(direct), direct.steps().frame.rows()
    with tracelens.open(path) as built:
        assert (_answers(built), built.steps().frame.rows()) == expected
        assert built.parquet_dir is not None
    with tracelens.open(path) as cached:
        assert (_answers(cached), cached.steps().frame.rows()) == expected
