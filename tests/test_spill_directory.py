"""A query that outgrows DuckDB's memory spills into tracelens' spill directory in the
system's temporary directory, never into the working directory (an in-memory database's
default, '.tmp' there: often the trace's own directory)."""

from __future__ import annotations

import os

from tracelens import _engine


def test_spills_into_the_spill_directory_not_the_working_directory(tmp_path, monkeypatch):
    work = tmp_path / "beside_the_trace"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    spill = _engine.spill_directory()
    assert spill.parent == tmp_path / "tmp"
    with _engine.limits(threads=1, memory_limit=64 << 20):
        con = _engine.connect(sqlite=False)
    try:
        setting = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
        assert setting == str(spill)
        # a sort of ~0.5 GB under a 64 MB limit: it must spill
        (count,) = con.execute(
            "SELECT count(*) FROM (SELECT range AS r, random() AS x FROM range(30000000) "
            "ORDER BY x)"
        ).fetchone()
        assert count == 30_000_000
        assert os.listdir(work) == []  # no '.tmp' beside the trace
        assert spill.is_dir()  # where it spilled (its files go when the connection closes)
    finally:
        con.close()
    assert os.listdir(work) == []
