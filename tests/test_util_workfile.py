"""util's GPU work kept, sorted, in the cache entry of a trace (tracelens.util_workfile):
written by the first whole read through the cache, read back by later ones with the same
rows as a direct read, never for a filtered read, never at another version, and never when
damaged. Each test has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches
the small demo trace."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracelens
from tracelens import cache, util_workfile
from tracelens.filters import EventFilter
from tracelens.util import gpu_time_accounting, read_work


def _kept_file(trace: tracelens.Trace) -> Path | None:
    return cache.derived_path(trace.parquet_dir, util_workfile._name(), util_workfile._version())


def _accounting(trace: tracelens.Trace):
    util = gpu_time_accounting(trace)
    return util.frame.rows(), util.idle_causes.rows(), util.communication.rows()


def test_whole_rows_are_kept_and_read_back(demo, cache_dir):
    with tracelens.open(demo, cache=False) as direct:
        expected = read_work(direct)
        device0 = read_work(direct, EventFilter(device=0))
        accounting = _accounting(direct)
    assert expected.height and "context" in expected.columns
    with tracelens.open(demo) as first:
        assert util_workfile.kept(first, context=True) is None  # nothing kept yet
        assert read_work(first, context=False).equals(expected.drop("context"))
        assert _kept_file(first) is not None  # kept with the context, for findings
    with tracelens.open(demo) as again:
        kept = util_workfile.kept(again, context=True)
        assert kept is not None and kept.drop("launch_start").equals(expected)
        assert read_work(again).equals(expected)
        assert read_work(again, context=False).equals(expected.drop("context"))
        assert _accounting(again) == accounting
        assert read_work(again, EventFilter(device=0)).equals(device0)  # read, not kept


def test_kept_rows_hold_each_launch_and_util_reads_no_call_by_call(demo, cache_dir, monkeypatch):
    """The kept rows hold the start of each operation's launching call (the LaunchIndex's
    answer); a later util reads only the calls' figures (util_call_figures.sql, not
    util_calls.sql) and gives the direct read's accounting and figures of the calls."""
    from tracelens.util import accounting_and_calls
    from tracelens.util_calls import read_calls
    from tracelens.util_ops import sync_api_regex

    with tracelens.open(demo, cache=False) as direct:
        util, calls = accounting_and_calls(direct)
        launches = read_calls(direct, sync_api_regex()).launches.launch_starts(read_work(direct))
        expected = (util.frame.rows(), util.idle_causes.rows(), util.communication.rows())
    with tracelens.open(demo) as first:
        read_work(first)
    with tracelens.open(demo) as again:
        kept = util_workfile.kept(again, context=False)
        assert kept is not None and kept["launch_start"].equals(launches)
        assert kept["launch_start"].null_count() < kept.height
        assert "launch_start" not in read_work(again).columns
        ran = []
        real = again.query
        monkeypatch.setattr(again, "query", lambda name, **p: ran.append(name) or real(name, **p))
        util_again, calls_again = accounting_and_calls(again)
    assert "util_call_figures" in ran and "util_calls" not in ran
    again_rows = (util_again.frame.rows(), util_again.idle_causes.rows())
    assert again_rows + (util_again.communication.rows(),) == expected
    assert calls_again == calls


def test_nothing_is_kept_of_a_direct_read(demo, cache_dir):
    with tracelens.open(demo, cache=False) as direct:
        read_work(direct)
        assert util_workfile.kept(direct, context=True) is None
    assert not (cache_dir / "traces").exists()


def test_another_version_or_a_damaged_file_is_not_read(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as first:
        expected = read_work(first)
    with monkeypatch.context() as patched, tracelens.open(demo) as other:
        patched.setattr(util_workfile, "_version", lambda: "made-otherwise")
        assert util_workfile.kept(other, context=True) is None
        assert read_work(other).equals(expected)  # read again, and kept at this version
        assert _kept_file(other) is not None
        other_file = _kept_file(other)
    with tracelens.open(demo) as again:  # this version's file is still there, beside the other
        assert util_workfile.kept(again, context=True) is not None
        assert read_work(again).equals(expected)
        path = _kept_file(again)
    assert path is not None and other_file.is_file() and path != other_file
    path.write_bytes(b"not parquet")
    with tracelens.open(demo) as damaged:
        assert util_workfile.kept(damaged, context=True) is None
        assert read_work(damaged).equals(expected)


def _whole(util) -> tuple:
    sizes = util.message_sizes
    tables = (util.frame, util.idle_causes, util.communication)
    return (
        *(t.rows() for t in tables),
        *(t.schema for t in tables),
        None if sizes is None else sizes.rows(),
        util.notes,
        util.start_ns,
        util.end_ns,
    )


@pytest.mark.parametrize("which", ["demo", "nccl"])
def test_whole_accounting_is_kept_and_read_back(which, demo, tmp_path, cache_dir, monkeypatch):
    """The first whole util through the cache keeps its accounting; a later one reads it
    back (no read of the work or the calls) with the direct read's tables, notes, window
    and figures of the calls; a filtered one, another version or a damaged file computes
    it again. Findings take it too, with the direct read's findings. On the demo, and on
    NCCL kernels with message sizes from NVTX payloads (communication, sizes and notes)."""
    from test_nccl_sizes import build

    from tracelens import findings_gpu
    from tracelens.findings import find_issues
    from tracelens.util import accounting_and_calls

    if which == "nccl":
        demo = build(tmp_path / "nccl.sqlite")

    with tracelens.open(demo, cache=False) as direct:
        util, calls = accounting_and_calls(direct)
        device0 = _whole(accounting_and_calls(direct, EventFilter(device=0))[0])
        findings = find_issues(direct).frame.rows()
        assert util_workfile.kept_accounting(direct) is None  # no cache entry
    expected = _whole(util)
    if which == "nccl":
        assert util.communication.height and util.message_sizes is not None and util.notes
    with tracelens.open(demo) as first:
        assert util_workfile.kept_accounting(first) is None
        assert accounting_and_calls(first)[1] == calls
    with tracelens.open(demo) as again:
        ran = []
        real = again.query
        monkeypatch.setattr(again, "query", lambda name, **p: ran.append(name) or real(name, **p))
        util_again, calls_again = accounting_and_calls(again)
        assert not {"util_work", "util_calls", "util_call_figures"} & set(ran)
        assert _whole(util_again) == expected and calls_again == calls
        assert _whole(accounting_and_calls(again, EventFilter(device=0))[0]) == device0
        assert "util_work" in ran  # the filtered one read the work
        # findings take the kept accounting, and read only the GPU rules' columns
        asked = []
        real_kept = util_workfile.kept
        monkeypatch.setattr(
            util_workfile, "kept", lambda t, **k: asked.append(k["columns"]) or real_kept(t, **k)
        )
        assert find_issues(again).frame.rows() == findings
        assert asked == [findings_gpu.WORK_COLUMNS]
        monkeypatch.setattr(util_workfile, "kept", real_kept)
    with monkeypatch.context() as patched, tracelens.open(demo) as other:
        patched.setattr(util_workfile, "code_version", lambda: "made-otherwise")
        assert util_workfile.kept_accounting(other) is None
        assert _whole(accounting_and_calls(other)[0]) == expected
    with tracelens.open(demo) as damaged:
        figures = util_workfile.bundle_name(util_workfile._ACCOUNTING, "figures")
        entry = util_workfile._entry(damaged)
        path = cache.derived_path(entry, figures, util_workfile.code_version())
        assert path is not None
        path.write_bytes(b"not parquet")
        assert util_workfile.kept_accounting(damaged) is None
        assert _whole(accounting_and_calls(damaged)[0]) == expected
