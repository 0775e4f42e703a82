"""What util and findings keep in the cache entry of a trace (tracelens.util_workfile): the
GPU work of findings' GPU rules, written by findings' first whole read through the cache
(util keeps no rows), read back by later ones with the same rows as a direct read, never
for a filtered read, never at another version, and never when damaged; and the whole
trace's accounting. Each test has its own cache directory (conftest);
TRACELENS_CACHE_MIN_MB=0 caches the small demo trace."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracelens
from tracelens import cache, util_workfile
from tracelens.filters import EventFilter
from tracelens.util import read_work

COLUMNS = util_workfile.COLUMNS


def _kept_file(trace: tracelens.Trace) -> Path | None:
    return cache.derived_path(trace.parquet_dir, util_workfile._name(), util_workfile._version())


def _queries(trace: tracelens.Trace, monkeypatch) -> list[str]:
    """The names of the queries ``trace`` runs from now on."""
    ran: list[str] = []
    real = trace.query
    monkeypatch.setattr(trace, "query", lambda name, **p: ran.append(name) or real(name, **p))
    return ran


def test_gpu_rule_columns_are_kept_and_read_back(demo, cache_dir, monkeypatch):
    with tracelens.open(demo, cache=False) as direct:
        whole = read_work(direct)
        device0 = read_work(direct, EventFilter(device=0), columns=COLUMNS, keep=True)
    expected = whole.select(COLUMNS)
    assert expected.height and "context" in whole.columns
    with tracelens.open(demo) as first:
        assert util_workfile.kept(first) is None  # nothing kept yet
        assert read_work(first, context=False).equals(whole.drop("context"))
        assert _kept_file(first) is None  # not without keep
        assert read_work(first, columns=COLUMNS, keep=True).equals(expected)
        written = _kept_file(first).stat().st_mtime_ns
    with tracelens.open(demo) as again:
        assert util_workfile.kept(again).equals(expected)
        ran = _queries(again, monkeypatch)
        assert read_work(again, columns=COLUMNS, keep=True).equals(expected)
        assert read_work(again, columns=("device", "end_ns")).equals(
            expected.select("device", "end_ns")
        )
        assert "util_work" not in ran  # read back
        assert read_work(again, keep=True).equals(whole)  # the other columns: read again
        assert read_work(again, EventFilter(device=0), columns=COLUMNS).equals(device0)
        assert ran.count("util_work") == 2  # the filtered one is read, not kept
    assert _kept_file(again).stat().st_mtime_ns == written  # kept once: not written again


def test_util_keeps_its_accounting_and_no_rows(demo, cache_dir, monkeypatch):
    """A cached util keeps its accounting, not the work (no later util reads it); findings
    keep their GPU rules' columns, and a later findings run reads those and the accounting
    back, not the work or the calls, with the direct read's findings."""
    from tracelens.findings import find_issues
    from tracelens.util import accounting_and_calls

    with tracelens.open(demo, cache=False) as direct:
        findings = find_issues(direct).frame.rows()
    with tracelens.open(demo) as first:
        accounting_and_calls(first)
        assert _kept_file(first) is None
        assert util_workfile.kept_accounting(first) is not None
        assert find_issues(first).frame.rows() == findings
        assert _kept_file(first) is not None
    with tracelens.open(demo) as again:
        ran = _queries(again, monkeypatch)
        assert find_issues(again).frame.rows() == findings
        assert not {"util_work", "util_calls", "util_call_figures"} & set(ran)


def test_nothing_is_kept_of_a_direct_read(demo, cache_dir):
    with tracelens.open(demo, cache=False) as direct:
        read_work(direct, keep=True)
        assert util_workfile.kept(direct) is None
    assert not (cache_dir / "traces").exists()


def test_another_version_or_a_damaged_file_is_not_read(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as first:
        expected = read_work(first, columns=COLUMNS, keep=True)
    with monkeypatch.context() as patched, tracelens.open(demo) as other:
        patched.setattr(util_workfile, "_version", lambda: "made-otherwise")
        assert util_workfile.kept(other) is None
        # read again, and kept at this version
        assert read_work(other, columns=COLUMNS, keep=True).equals(expected)
        assert _kept_file(other) is not None
        other_file = _kept_file(other)
    with tracelens.open(demo) as again:  # this version's file is still there, beside the other
        assert util_workfile.kept(again) is not None
        assert read_work(again, columns=COLUMNS).equals(expected)
        path = _kept_file(again)
    assert path is not None and other_file.is_file() and path != other_file
    path.write_bytes(b"not parquet")
    with tracelens.open(demo) as damaged:
        assert util_workfile.kept(damaged) is None
        assert read_work(damaged, columns=COLUMNS, keep=True).equals(expected)
    with tracelens.open(demo) as repaired:  # the damaged file was written again
        assert util_workfile.kept(repaired).equals(expected)


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
