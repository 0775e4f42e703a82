"""Input paths as a user hands them over: a parquetdir directory with other Parquet files
beside the export's tables (a notebook's saved results, a copy of a cache entry) reads as
the export alone, instead of stopping on an internal error."""

from __future__ import annotations

from conftest import run_cli
from test_inputs import write_parquetdir

import tracelens
from tracelens.demo import demo_path


def _with_extra_files(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = write_parquetdir(demo_path("bs1"), tmp_path / "bs1 pqt dir")
    plain = {f.name for f in directory.iterdir()}
    extra = pa.table({"x": [1, 2, 3]})
    for name in ("results-2.parquet", "tracelens_fingerprint-7919a98ac20d5207.parquet"):
        pq.write_table(extra, directory / name)
    return directory, plain


def test_parquet_files_that_are_not_tables_are_left_alone(tmp_path, capsys):
    # A file name that is not an identifier was an internal error (exit 70):
    # "ValueError: not a plain identifier: 'results-2'".
    directory, _plain = _with_extra_files(tmp_path)
    argv = ["census", "--top", "3", "-f", "csv"]
    rc, out, err = run_cli([argv[0], str(directory), *argv[1:]], capsys)
    rc2, out2, err2 = run_cli([argv[0], "--no-cache", str(demo_path("bs1")), *argv[1:]], capsys)
    assert (rc, err) == (0, "") and (rc2, err2) == (0, "") and out == out2


def test_their_size_is_not_the_exports(tmp_path, capsys):
    import json

    directory, plain = _with_extra_files(tmp_path)
    tables = sum((directory / n).stat().st_size for n in plain if n.endswith(".parquet"))
    rc, out, err = run_cli(["info", str(directory), "-f", "json"], capsys)
    assert (rc, err) == (0, "") and json.loads(out)["size_bytes"] == tables


def test_a_directory_of_other_parquet_files_only_is_not_an_export(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "results-2.parquet")
    rc, out, err = run_cli(["census", str(tmp_path)], capsys)
    assert (rc, out) == (2, "")
    assert (
        err
        == f"tracelens: {tmp_path}: is a directory without nsys tables; pass an nsys export (.sqlite or parquetdir)\n"
    )
    with tracelens.open(write_parquetdir(demo_path("bs1"), tmp_path / "pq")) as trace:
        assert trace.census(top=1)["instances"].to_list() == [112]


def test_no_private_copy_in_a_cache_path_that_is_a_file_says_why(tmp_path, capsys, monkeypatch):
    # A trace whose path is not UTF-8 is read through a private copy in the cache directory;
    # when that "directory" is a file, the line said "(File exists)", mkdir's word for it.
    import os
    import shutil

    trace = tmp_path / os.fsdecode(b"run\xff.sqlite")
    shutil.copyfile(demo_path("bs1"), trace)
    not_a_dir = tmp_path / "cache-file"
    not_a_dir.write_text("")
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(not_a_dir))
    rc, out, err = run_cli(["--no-cache", "census", str(trace), "--top", "1"], capsys)
    assert (rc, out) == (2, "") and err.count("\n") == 1
    assert f"no private copy can be made in {not_a_dir} (Not a directory); copy the" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["cache-file", trace.name])


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    # XDG_CACHE_HOME=relcache made the cache in the working directory (the trace's own, run
    # from there): the XDG spec says a relative path is invalid and to ignore it.
    from tracelens.cache import default_root

    monkeypatch.delenv("TRACELENS_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relcache")
    assert default_root() == tmp_path / "home" / ".cache" / "tracelens"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == tmp_path / "xdg" / "tracelens"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert default_root() == tmp_path / "home" / ".cache" / "tracelens"


def test_an_empty_trace_path_is_refused_not_read_as_the_working_directory(
    tmp_path, capsys, monkeypatch
):
    # Path("") is ".": `tracelens census "$TRACE"` with TRACE unset said ".: is a
    # directory", and `tracelens ranks "$RUNS"` analysed every export under the working
    # directory as a rank.
    import shutil

    import pytest

    shutil.copyfile(demo_path("bs1"), tmp_path / "stray.sqlite")
    monkeypatch.chdir(tmp_path)
    line = "tracelens: the trace path is empty (an unset variable?); pass the export\n"
    both = [["diff", "", "stray.sqlite"], ["diff", "stray.sqlite", ""], ["report", ""]]
    for argv in (["census", ""], ["ranks", ""], ["ranks", "stray.sqlite", ""], *both):
        assert run_cli(argv, capsys) == (2, "", line)
    with pytest.raises(tracelens.TraceError, match=r"^'': no trace given \(the path is empty\)$"):
        tracelens.open("")


def test_a_parquetdir_whose_path_is_not_utf8_is_read(tmp_path, capsys, monkeypatch):
    # DuckDB takes paths as UTF-8 text: it was "internal error: RuntimeError: Unable to cast
    # Python instance of type <class 'str'>" (exit 70). A SQLite export there was already
    # read through a private copy; a parquetdir is read through a link, removed on close.
    import os

    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(cache))
    directory = tmp_path / os.fsdecode(b"pq\xffdir")
    write_parquetdir(demo_path("bs1"), tmp_path / "pq").rename(directory)  # pyarrow needs UTF-8
    argv = ["census", "--top", "3", "-f", "csv"]
    rc, out, err = run_cli([argv[0], str(directory), *argv[1:]], capsys)
    rc2, out2, _ = run_cli([argv[0], "--no-cache", str(demo_path("bs1")), *argv[1:]], capsys)
    assert (rc, err, rc2) == (0, "", 0) and out == out2
    assert list(cache.iterdir()) == []  # the link is gone
    with tracelens.open(directory) as trace:
        assert trace.census(top=1)["instances"].to_list() == [112]
