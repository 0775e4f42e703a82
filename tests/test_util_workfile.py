"""What util and findings keep in the cache entry of a trace (tracelens.util_workfile): the
whole trace's accounting, and the rows findings' GPU rules found, per rule and thresholds;
no GPU work rows. Read back by later runs with the direct read's results, never for a
filtered read, never at another version or other thresholds, and never when damaged. Each
test has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches the small demo
trace."""

from __future__ import annotations

import pytest

import tracelens
from tracelens import _resources, cache, util_workfile
from tracelens.filters import EventFilter


def _queries(trace: tracelens.Trace, monkeypatch) -> list[str]:
    """The names of the queries run from now on (``trace`` is the only one the tests use
    then). Spied where every query's text is read, not on ``Trace.query``: util reads its
    work through ``Trace._execute`` to get it in one batch (util._one_batch)."""
    ran: list[str] = []
    real = _resources.query
    monkeypatch.setattr(_resources, "query", lambda name: ran.append(name) or real(name))
    return ran


def _derived(trace: tracelens.Trace) -> list[str]:
    """The derived files the trace's cache entry lists."""
    manifest = cache._read_manifest(util_workfile._entry(trace)) or {}
    return sorted(manifest.get(cache.DERIVED, {}))


def _rows(findings) -> list:
    return [(r.rule, r.total, r.frame.rows(), r.skipped) for r in findings.results]


def test_findings_keep_gpu_rule_rows_per_thresholds(demo, cache_dir, monkeypatch):
    """findings through the cache keep each GPU rule's rows (and util's accounting), not the
    GPU work; a later run reads them back and no GPU work, with the direct read's findings;
    other thresholds or a filter compute them again; a damaged file is computed again."""
    from tracelens.findings import find_issues

    low = {("gpu_gaps", "gap_ms"): 0.001}
    with tracelens.open(demo, cache=False) as direct:
        expected = _rows(find_issues(direct))
        expected_low = _rows(find_issues(direct, thresholds=low))
        device0 = _rows(find_issues(direct, where=EventFilter(device=0)))
    assert any(r[1] for r in expected_low if r[0] == "gpu_gaps")  # found something
    with tracelens.open(demo) as first:
        assert _rows(find_issues(first)) == expected
        kept = [n for n in _derived(first) if n.startswith("tracelens_findings_")]
        assert len(kept) == 2 and not [n for n in _derived(first) if "util_work" in n]
    with tracelens.open(demo) as again:
        ran = _queries(again, monkeypatch)
        assert _rows(find_issues(again)) == expected
        assert not {"util_work", "util_calls", "util_call_figures"} & set(ran)
        assert _rows(find_issues(again, thresholds=low)) == expected_low
        assert ran.count("util_work") == 1  # other thresholds: computed, then kept
        assert _rows(find_issues(again, thresholds=low)) == expected_low
        assert _rows(find_issues(again, where=EventFilter(device=0))) == device0
        assert ran.count("util_work") == 2  # filtered: computed, not kept
        assert len([n for n in _derived(again) if n.startswith("tracelens_findings_")]) == 3
        entry, names = util_workfile._entry(again), _derived(again)
    for name in names:
        if name.startswith("tracelens_findings_gpu_gaps"):
            (entry / name).write_bytes(b"not parquet")
    with tracelens.open(demo) as damaged:
        ran = _queries(damaged, monkeypatch)
        assert _rows(find_issues(damaged)) == expected
        assert "util_work" in ran


def test_util_keeps_its_accounting_and_no_rows(demo, cache_dir, monkeypatch):
    """A cached util keeps its accounting, not the work; a later findings run takes it and
    reads the work for its GPU rules alone, with the direct read's findings."""
    from tracelens.findings import find_issues
    from tracelens.util import accounting_and_calls

    with tracelens.open(demo, cache=False) as direct:
        findings = _rows(find_issues(direct))
        assert util_workfile.kept_accounting(direct) is None  # no cache entry
    with tracelens.open(demo) as first:
        accounting_and_calls(first)
        assert [n for n in _derived(first) if n.startswith("tracelens_")] == [
            n for n in _derived(first) if n.startswith("tracelens_util_accounting_")
        ]
    with tracelens.open(demo) as again:
        ran = _queries(again, monkeypatch)
        assert _rows(find_issues(again)) == findings
        assert "util_work" in ran and not {"util_calls", "util_call_figures"} & set(ran)


def test_nothing_is_kept_of_a_direct_read(demo, cache_dir):
    from tracelens.findings import find_issues
    from tracelens.util import accounting_and_calls

    with tracelens.open(demo, cache=False) as direct:
        accounting_and_calls(direct)
        find_issues(direct)
    assert not (cache_dir / "traces").exists()


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
        ran = _queries(again, monkeypatch)
        util_again, calls_again = accounting_and_calls(again)
        assert not {"util_work", "util_calls", "util_call_figures"} & set(ran)
        assert _whole(util_again) == expected and calls_again == calls
        assert _whole(accounting_and_calls(again, EventFilter(device=0))[0]) == device0
        assert "util_work" in ran  # the filtered one read the work
        # findings take the kept accounting (no read of the calls)
        before = len(ran)
        assert find_issues(again).frame.rows() == findings
        assert "util_calls" not in ran[before:]
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


def _accounting_tables(util) -> list:
    return [util.frame.rows(), util.idle_causes.rows(), util.communication.rows(), util.notes]


def test_an_entry_holding_the_calls_reads_fewer_of_their_columns(demo, cache_dir, monkeypatch):
    """util through a cache entry that holds the API calls' columns reads the launching
    calls (util_launch_calls) and the figures of the calls (util_call_figures), not every
    column of every call (util_calls); an entry without them yet reads util_calls, which
    copies the calls into it once (two narrower reads would copy them twice). The same
    accounting as the direct read either way."""
    from tracelens.util import accounting_and_calls

    with tracelens.open(demo, cache=False) as direct:
        expected = accounting_and_calls(direct)
    with tracelens.open(demo) as first:
        ran = _queries(first, monkeypatch)
        util, calls = accounting_and_calls(first, keep=False)
        assert "util_calls" in ran and "util_launch_calls" not in ran
    assert (_accounting_tables(util), calls) == (_accounting_tables(expected[0]), expected[1])
    with tracelens.open(demo) as again:
        ran = _queries(again, monkeypatch)
        util, calls = accounting_and_calls(again, keep=False)
        assert {"util_launch_calls", "util_call_figures"} <= set(ran)
        assert "util_calls" not in ran
    assert (_accounting_tables(util), calls) == (_accounting_tables(expected[0]), expected[1])


def test_accounting_and_work_is_the_read_and_its_accounting(demo, cache_dir):
    """accounting_and_work gives read_work's rows in its order and the accounting of them,
    directly and cached, with a window too."""
    from tracelens.util import accounting_and_calls, accounting_and_work, read_work

    for cached in (False, True):
        for where in (None, EventFilter(start_ns=10_000_000, end_ns=60_000_000)):
            with tracelens.open(demo, cache=cached) as trace:
                util, calls, work = accounting_and_work(trace, where, keep=False)
                expected_work = read_work(trace, where)
                expected = accounting_and_calls(trace, where, expected_work, keep=False)
            assert work.equals(expected_work)
            assert _accounting_tables(util) == _accounting_tables(expected[0])
            assert calls == expected[1]
