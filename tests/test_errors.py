"""Bad input: one line on stderr naming the file and the fix, a non-zero exit, no
traceback, and the input's bytes unchanged."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TRACES, needs_shared, run_cli, sha256

import tracelens


def _sqlite_db(path: Path, ddl: str) -> Path:
    con = sqlite3.connect(path)
    con.executescript(ddl)
    con.commit()
    con.close()
    return path


def _real(name: str, tmp: Path) -> Path:
    src = TRACES / f"{name}.sqlite"
    if not src.exists():
        pytest.skip(f"{src} not found (../shared is absent)")
    dst = tmp / src.name
    shutil.copyfile(src, dst)
    return dst


def make_missing(tmp):
    return tmp / "nope.sqlite", "nope.sqlite: no such file", 2


def make_directory(tmp):
    d = tmp / "dir.sqlite"
    d.mkdir()
    return (
        d,
        "dir.sqlite: is a directory without nsys tables; pass an nsys export (.sqlite or parquetdir)",
        2,
    )


def make_empty(tmp):
    p = tmp / "empty.sqlite"
    p.write_bytes(b"")
    return (
        p,
        "empty.sqlite: is empty (0 bytes); export the trace again with `nsys export --type sqlite`",
        2,
    )


def make_not_sqlite(tmp):
    p = tmp / "notes.sqlite"
    p.write_text("Time (%),Total Time (ns)\n1,2\n")
    return (
        p,
        "notes.sqlite: is not a SQLite database; pass the file written by `nsys export --type sqlite`",
        2,
    )


def make_nsys_rep(tmp):
    p = tmp / "run.nsys-rep"
    p.write_bytes(b"\x00\x01QDSTRM" + bytes(range(256)) * 4)
    return (
        p,
        "run.nsys-rep: is an Nsight Systems report, not its SQLite export; run "
        "`nsys export --type sqlite -o run.sqlite run.nsys-rep` and pass the .sqlite file",
        2,
    )


def make_qdrep(tmp):
    p = tmp / "old.qdrep"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    return p, "old.qdrep: is an Nsight Systems report, not its SQLite export; run", 2


def make_truncated(tmp):
    src = _real("nsys2022.4_gaussian_7gpu", tmp)
    p = tmp / "cut.sqlite"
    p.write_bytes(src.read_bytes()[:1_500_000])
    return p, "cut.sqlite: is truncated (1500000 of 3547136 bytes); copy or export it again", 2


def make_corrupt(tmp):
    p = _real("nsys2022.4_gaussian_7gpu", tmp)
    p.rename(tmp / "corrupt.sqlite")
    p = tmp / "corrupt.sqlite"
    # Pages 619-638 hold kernel rows (found with dbstat): the header and schema are intact,
    # so the damage is only seen while scanning kernels.
    with p.open("r+b") as f:
        f.seek(619 * 4096)
        f.write(b"\xde\xad\xbe\xef" * (20 * 4096 // 4))
    return (
        p,
        "corrupt.sqlite: is corrupt (database disk image is malformed); copy or export it again",
        2,
    )


def make_garbage_schema(tmp):
    p = _real("nsys2022.4_gaussian_7gpu", tmp)
    data = bytearray(p.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # page 1 after the header: sqlite_master
    p = tmp / "schema.sqlite"
    p.write_bytes(bytes(data))
    return p, "schema.sqlite: is corrupt or not a database (sqlite: ", 2


def make_not_nsys(tmp):
    p = _sqlite_db(tmp / "shop.sqlite", "CREATE TABLE orders(id INTEGER, total REAL);")
    return (
        p,
        "shop.sqlite: is a SQLite database but not an nsys export (no StringIds or TARGET_INFO "
        "tables); pass the file written by `nsys export --type sqlite`",
        2,
    )


def make_no_kernels(tmp):
    p = _real("nsys2021.3_cpu_only_no_cuda", tmp)
    return (
        p,
        "nsys2021.3_cpu_only_no_cuda.sqlite: no CUDA kernel data: was it captured with -t cuda?",
        3,
    )


def make_old_schema(tmp):
    p = _sqlite_db(
        tmp / "ancient.sqlite",
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, name INTEGER);"
        "INSERT INTO StringIds VALUES (1, 'k');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 1);",
    )
    return (
        p,
        "ancient.sqlite: uses an nsys export schema tracelens does not support (kernel table "
        "lacks demangledName, shortName); export it again with nsys 2020.5 or newer",
        2,
    )


CASES = [
    make_missing,
    make_directory,
    make_empty,
    make_not_sqlite,
    make_nsys_rep,
    make_qdrep,
    make_truncated,
    make_corrupt,
    make_garbage_schema,
    make_not_nsys,
    make_no_kernels,
    make_old_schema,
]


@pytest.fixture(autouse=True)
def _no_nsys(monkeypatch):
    # The .nsys-rep case is the message for a machine without nsys (with it, the report is
    # exported: tests/test_inputs.py).
    from tracelens import inputs

    monkeypatch.setattr(inputs, "find_nsys", lambda: None)


@pytest.mark.parametrize("make", CASES, ids=[c.__name__[5:] for c in CASES])
def test_bad_input_one_line_nonzero_untouched(make, tmp_path, capsys):
    path, message, code = make(tmp_path)
    before = sha256(path) if path.is_file() else None
    listing = sorted(os.listdir(tmp_path))
    rc, out, err = run_cli(["census", path], capsys)
    assert rc == code
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("tracelens: ") and message in err, err
    assert "Traceback" not in err
    if before is not None:
        assert sha256(path) == before
    assert sorted(os.listdir(tmp_path)) == listing, "tracelens created files next to the input"


@pytest.mark.parametrize("make", CASES, ids=[c.__name__[5:] for c in CASES])
def test_library_raises_tracelens_errors(make, tmp_path):
    path, message, _code = make(tmp_path)
    with pytest.raises(tracelens.TracelensError) as info:
        with tracelens.open(path) as trace:
            trace.census()
    assert message.split(": ", 1)[1][:40] in str(info.value)


@pytest.mark.parametrize(
    "args",
    [["census"], ["diff", "{p}"], ["report"], ["decode", "--trace"], ["info"]],
    ids=["census", "diff", "report", "decode", "info"],
)
def test_unreadable_file(args, tmp_path, capsys, monkeypatch):
    """Our message, not click's `Invalid value for 'TRACE': Path ... is not readable`."""
    p = tmp_path / "secret.sqlite"
    p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    if os.geteuid() != 0:
        p.chmod(0)
    else:  # root reads everything: simulate what the OS says to any other user
        real_open, real_access = Path.open, os.access

        def deny(self, *a, **k):
            if self.name == "secret.sqlite":
                raise PermissionError(13, "Permission denied")
            return real_open(self, *a, **k)

        def no_access(path, mode, *a, **k):
            if os.fspath(path).endswith("secret.sqlite") and mode & os.R_OK:
                return False
            return real_access(path, mode, *a, **k)

        monkeypatch.setattr(Path, "open", deny)
        monkeypatch.setattr(os, "access", no_access)
    argv = [a.format(p=p) for a in args] + [p]
    rc, out, err = run_cli(argv, capsys)
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: {p}: cannot be read (permission denied); check its permissions\n",
    )


def _demo_copy(tmp: Path, name: str = "bs1") -> Path:
    from tracelens.demo import demo_path

    dst = tmp / f"{name}.sqlite"
    shutil.copyfile(demo_path(name), dst)
    return dst


def test_wal_mode_trace_is_refused_and_left_alone(tmp_path, capsys):
    """DuckDB's scanner would open a WAL database read-write and create -wal/-shm files
    beside it (and crash in a read-only directory): refuse it before DuckDB sees it."""
    p = _demo_copy(tmp_path)
    con = sqlite3.connect(p)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    assert sorted(os.listdir(tmp_path)) == ["bs1.sqlite"]
    before = sha256(p)
    message = (
        f"{p}: is in SQLite WAL mode, which cannot be read without writing beside it; convert "
        "it (or a copy) with `sqlite3 bs1.sqlite 'PRAGMA journal_mode=DELETE'`"
    )
    rc, out, err = run_cli(["census", p], capsys)
    assert (rc, out, err) == (2, "", f"tracelens: {message}\n")
    with pytest.raises(tracelens.TraceError) as info:
        tracelens.open(p)
    assert str(info.value) == message
    assert sha256(p) == before
    assert sorted(os.listdir(tmp_path)) == ["bs1.sqlite"], "files appeared beside the trace"


def test_fifo_is_refused_without_blocking(tmp_path):
    """Opening a FIFO blocks until a writer comes: the check is made before any open (in
    a child process, so that a regression fails on the timeout instead of hanging)."""
    fifo = tmp_path / "f.sqlite"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [sys.executable, "-m", "tracelens", "census", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    message = (
        f"{fifo}: is not a regular file (a pipe or device); pass the .sqlite file exported by nsys"
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"tracelens: {message}\n")
    with pytest.raises(tracelens.TraceError) as info:
        tracelens.open(fifo)
    assert str(info.value) == message


def test_device_is_refused():
    rc = subprocess.run(
        [sys.executable, "-m", "tracelens", "info", "/dev/null"], capture_output=True, text=True
    )
    assert (rc.returncode, rc.stdout, rc.stderr) == (
        2,
        "",
        "tracelens: /dev/null: is not a regular file (a pipe or device); "
        "pass the .sqlite file exported by nsys\n",
    )


@pytest.mark.parametrize(
    "args, target",
    [
        (["census", "{a}", "-o", "{a}"], "a"),
        (["census", "{a}", "--format", "csv", "--output", "{a_other_spelling}"], "a"),
        (["census", "{a}", "-o", "{link}"], "a"),
        (["info", "{a}", "-o", "{a}"], "a"),
        (["decode", "--trace", "{a}", "-o", "{a}"], "a"),
        (["diff", "{a}", "{b}", "-o", "{b}"], "b"),
        (["report", "{a}", "-o", "{a}"], "a"),
        (["report", "{a}", "{b}", "-f", "markdown", "-o", "{b}"], "b"),
    ],
    ids=["census", "other-spelling", "symlink", "info", "decode", "diff", "report", "report-ab"],
)
def test_output_onto_an_input_trace_is_refused(args, target, tmp_path, capsys, monkeypatch):
    a, b = _demo_copy(tmp_path, "bs1"), _demo_copy(tmp_path, "bs16")
    (tmp_path / "sub").mkdir()
    link = tmp_path / "link.sqlite"
    link.symlink_to(a)
    monkeypatch.chdir(tmp_path)
    names = {
        "a": "bs1.sqlite",
        "b": "bs16.sqlite",
        "a_other_spelling": "sub/../bs1.sqlite",
        "link": "link.sqlite",
    }
    argv = [x.format(**names) for x in args]
    digests = {a: sha256(a), b: sha256(b)}
    listing = sorted(os.listdir(tmp_path))
    rc, out, err = run_cli(argv, capsys)
    shown = argv[argv.index("-o" if "-o" in argv else "--output") + 1]
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: -o {shown} is one of the input traces; choose another file\n",
    )
    assert {p: sha256(p) for p in digests} == digests
    assert sorted(os.listdir(tmp_path)) == listing


def test_output_beside_the_inputs_is_still_written(tmp_path, capsys, monkeypatch):
    a = _demo_copy(tmp_path, "bs1")
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(["census", a.name, "--top", "1", "-f", "csv", "-o", "out.csv"], capsys)
    assert (rc, out, err) == (0, "", "")
    assert (tmp_path / "out.csv").read_text().startswith("time_pct,")
    # The same file written twice in a row: the second run does not remember the first's
    # inputs (in-process runs share the module).
    rc, out, err = run_cli(["census", a.name, "--top", "1", "-f", "csv", "-o", "out.csv"], capsys)
    assert (rc, out, err) == (0, "", "")


class _FullStdout:
    """stdout on a full disk."""

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        raise OSError(28, "No space left on device")


def test_stdout_write_failure_is_one_line(capsys, monkeypatch):
    from tracelens.demo import demo_path

    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", _FullStdout())
    rc, out, err = run_cli(["census", demo_path("bs16")], capsys)
    assert (rc, err) == (1, "tracelens: cannot write output (No space left on device)\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["census", "--demo", "bs16"], ["report", "--demo"]])
def test_stdout_to_dev_full_from_a_real_process(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "tracelens", *args], stdout=full, stderr=subprocess.PIPE
        )
    assert (proc.returncode, proc.stderr.decode()) == (
        1,
        "tracelens: cannot write output (No space left on device)\n",
    )


def test_broken_pipe_stays_quiet():
    proc = subprocess.run(
        f"{sys.executable} -m tracelens report --demo | head -c 1 >/dev/null",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stderr) == (0, "")


@pytest.mark.parametrize(
    "use",
    [
        lambda t: t.census(),
        lambda t: t.info,
        lambda t: t.timeline(),
        lambda t: t.lineup(),
        lambda t: t.sql("SELECT 1"),
        lambda t: t.query("_first_event"),
        lambda t: t.origin_ns,
        lambda t: t.db,
    ],
    ids=["census", "info", "timeline", "lineup", "sql", "query", "origin", "db"],
)
def test_a_closed_trace_says_so(use):
    from tracelens.demo import demo_path

    with tracelens.open(demo_path("bs1")) as trace:
        trace.census(top=1)  # DuckDB open
        trace.info  # noqa: B018 - read (and kept) before closing
    assert trace.closed
    with pytest.raises(tracelens.TraceError) as info:
        use(trace)
    assert str(info.value) == f"{demo_path('bs1')}: is closed; open it again with tracelens.open()"
    assert info.value.exit_code == 2
    trace.close()  # closing twice is fine


def test_sql_errors_are_query_errors():
    from tracelens.demo import demo_path

    path = demo_path("bs1")
    with tracelens.open(path) as trace:
        with pytest.raises(tracelens.QueryError) as info:
            trace.sql("SELECT * FROM nope")
        assert str(info.value) == (
            f"{path}: query failed: Catalog Error: Table with name nope does not exist!"
        )
        assert isinstance(info.value, tracelens.TracelensError)
        assert info.value.exit_code == 2
        with pytest.raises(tracelens.QueryError, match="query failed: .*Parser Error"):
            trace.sql("SELEC 1")
        with pytest.raises(tracelens.QueryError) as info:
            trace.sql("SELECT count(*) FROM kernels WHERE deviceId = $d")
        assert "\n" not in str(info.value)
        # The connection is still usable afterwards.
        assert trace.sql("SELECT count(*) AS n FROM kernels WHERE deviceId = $d", d=0)["n"][0]


def test_internal_query_errors_are_not_translated(monkeypatch):
    """A DuckDB error in tracelens's own queries is a bug: it stays a DuckDB error (the CLI
    reports it as an internal error) rather than passing for the user's mistake."""
    import duckdb

    from tracelens import _resources
    from tracelens.demo import demo_path

    monkeypatch.setattr(_resources, "query", lambda name: "SELECT * FROM nope")
    with tracelens.open(demo_path("bs1")) as trace:
        with pytest.raises(duckdb.CatalogException):
            trace.query("anything")


def test_report_top_names_the_parameter():
    """The library names its parameter; the CLI says --top (below)."""
    from tracelens.errors import UsageError
    from tracelens.report.page import check_top

    with pytest.raises(UsageError) as exc:
        check_top(-1)
    assert str(exc.value) == "top must be 0 (every row) or more (got -1)"
    assert exc.value.naming("--top") == "--top must be 0 (every row) or more (got -1)"


@pytest.mark.parametrize("top", ["-1", "-20"])
def test_report_top_must_not_be_negative(top, capsys):
    rc, out, err = run_cli(["report", "--demo", "--top", top], capsys)
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: --top must be 0 (every row) or more (got {top})\n",
    )


@pytest.mark.parametrize("top", ["-1", "-20"])
def test_diff_top_must_not_be_negative(top, capsys):
    rc, out, err = run_cli(["diff", "--demo", "--top", top], capsys)
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: --top must be 0 (every row) or more (got {top})\n",
    )


@needs_shared
@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--name", "pretty"],
            "tracelens: unknown --name 'pretty'; use one of: demangled, short, mangled\n",
        ),
        (
            ["--format", "xml"],
            "tracelens: unknown --format 'xml'; use one of: table, csv, json, markdown\n",
        ),
        (["--timeunit", "min"], "tracelens: unknown --timeunit 'min'; use one of: ns, us, ms, s\n"),
        (
            ["--start", "soon"],
            "tracelens: --start 'soon' is not a time; use a number with an optional unit ns, us, ms or s (e.g. 1.5ms)\n",
        ),
        (
            ["--start", "2s", "--end", "1s"],
            "tracelens: --end (1000000000 ns) is before --start (2000000000 ns)\n",
        ),
        (["--top", "-1"], "tracelens: --top must be 0 (every row) or more (got -1)\n"),
        (["--demo", "bs1"], "tracelens: give either a TRACE file or --demo NAME, not both\n"),
    ],
)
def test_bad_options(args, message, trace_copies, capsys):
    rc, out, err = run_cli(["census", trace_copies["nsys2026.1_mock_2k"], *args], capsys)
    assert (rc, out, err) == (2, "", message)


def test_unknown_option_is_one_line(capsys, tmp_path):
    rc, out, err = run_cli(["census", tmp_path / "x.sqlite", "--bogus"], capsys)
    assert rc == 2 and out == ""
    assert err == "tracelens: No such option: --bogus (see `tracelens census --help`)\n"


def test_missing_trace_argument(capsys):
    rc, out, err = run_cli(["census"], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: missing TRACE: pass an nsys SQLite export, or --demo bs1|bs16\n"


def test_no_traceback_from_a_real_process(tmp_path):
    """The installed entry point, as a user runs it."""
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database")
    proc = subprocess.run(
        [sys.executable, "-m", "tracelens", "census", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "tracelens: " + str(bad) + ": is not a SQLite database; pass the file written by "
        "`nsys export --type sqlite`\n"
    )


def test_extension_missing_is_one_line_with_the_fix(tmp_path, monkeypatch, capsys):
    from tracelens.demo import demo_path

    monkeypatch.setenv("TRACELENS_SQLITE_EXTENSION", str(tmp_path / "nope.duckdb_extension"))
    rc, out, err = run_cli(["census", demo_path("bs1")], capsys)
    assert (rc, out) == (4, "")
    assert err == (
        f"tracelens: TRACELENS_SQLITE_EXTENSION={tmp_path / 'nope.duckdb_extension'}: no such file; "
        "point it at a sqlite_scanner.duckdb_extension\n"
    )


def test_extension_that_does_not_load_is_one_line_with_the_fix(tmp_path, monkeypatch, capsys):
    from tracelens.demo import demo_path

    fake = tmp_path / "sqlite_scanner.duckdb_extension"
    fake.write_bytes(b"\x7fELF" + b"\x00" * 4096)  # not a signed DuckDB extension
    monkeypatch.setenv("TRACELENS_SQLITE_EXTENSION", str(fake))
    rc, out, err = run_cli(["census", demo_path("bs1")], capsys)
    assert (rc, out) == (4, "")
    assert err.startswith("tracelens: cannot load DuckDB's sqlite extension (")
    assert "fix: pip install 'duckdb-extension-sqlite-scanner==" in err
    assert err.count("\n") == 1
