"""`tracelens cache info` says when the cache directory cannot be used, and why (commands
then read directly, with one note on stderr: tests/test_cache.py)."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import run_cli

from tracelens.demo import demo_path

ON = (
    "state      on; traces of 0 MB or more are cached, up to 5,000 MB in all "
    "(least recently used go first)"
)


@pytest.fixture
def small_traces_cached(monkeypatch):
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    monkeypatch.delenv("TRACELENS_NO_CACHE", raising=False)


def _info(capsys) -> list[str]:
    rc, out, err = run_cli(["cache", "info"], capsys)
    assert (rc, err) == (0, "")
    return out.splitlines()


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch, small_traces_cached, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(blocker))
    assert _info(capsys) == [
        f"cache      {blocker}",
        f"state      unusable: {blocker} is not a directory; commands read traces directly "
        "and cache nothing",
        "holds      0 traces, 0.0 MB",
    ]
    # and a command says so once on stderr, runs, and exits 0
    trace = tmp_path / "run.sqlite"
    shutil.copy(demo_path("bs1"), trace)
    rc, _, err = run_cli(["census", str(trace), "-n", "1", "-f", "csv"], capsys)
    assert (rc, err) == (
        0,
        f"tracelens: cannot cache run.sqlite in {blocker} (Not a directory); "
        "reading the trace directly\n",
    )


def test_cache_dir_under_a_file(tmp_path, monkeypatch, small_traces_cached, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    root = blocker / "cache" / "tracelens"
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(root))
    assert _info(capsys)[1] == (
        f"state      unusable: {root} cannot be created: {blocker} is not a directory; "
        "commands read traces directly and cache nothing"
    )


def test_cache_dir_whose_traces_is_a_file(tmp_path, monkeypatch, small_traces_cached, capsys):
    (tmp_path / "traces").write_text("")
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path))
    assert _info(capsys)[1] == (
        f"state      unusable: {tmp_path / 'traces'} is not a directory; commands read "
        "traces directly and cache nothing"
    )


def test_usable_cache_dirs_say_on(tmp_path, monkeypatch, small_traces_cached, capsys):
    from tracelens.cache_evict import unwritable

    for root in (tmp_path, tmp_path / "not" / "yet"):
        monkeypatch.setenv("TRACELENS_CACHE_DIR", str(root))
        assert _info(capsys)[1] == ON
        assert unwritable(root) is None


def test_unwritable_cache_dir(tmp_path, monkeypatch):
    """Root writes anywhere: the permission check is faked for the directory."""
    from tracelens.cache_evict import unwritable

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: str(p) != str(tmp_path) and real(p, mode))
    assert unwritable(tmp_path) == f"{tmp_path} is not writable"
    assert (
        unwritable(tmp_path / "c")
        == f"{tmp_path / 'c'} cannot be created: {tmp_path} is not writable"
    )


def test_read_only_cache_dir_still_serves_what_it_holds(
    tmp_path, monkeypatch, small_traces_cached, capsys
):
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    trace = tmp_path / "run.sqlite"
    shutil.copy(demo_path("bs1"), trace)
    assert run_cli(["census", str(trace), "-n", "1"], capsys)[0] == 0
    real = os.access
    traces = str(tmp_path / "cache" / "traces")
    monkeypatch.setattr(os, "access", lambda p, mode: str(p) != traces and real(p, mode))
    lines = _info(capsys)
    assert lines[1] == (
        f"state      unusable: {traces} is not writable; commands read traces directly and "
        "cache nothing; the traces it holds are still read"
    )
    assert lines[2].startswith("holds      1 trace, ")
