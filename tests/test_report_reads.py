"""What the report reads from a trace: each analysis once, shared between the sections that
show it (the report of a 5M-launch trace cost ~30 CPU s when each section read its own)."""

from __future__ import annotations

from collections import Counter

import pytest

import tracelens
from tracelens.demo import demo_path
from tracelens.report import build_report, stakeoutview
from tracelens.stakeout import kernel_profiles
from tracelens.trace import Trace


@pytest.fixture
def queries_run(monkeypatch) -> Counter:
    """The name of every query file a Trace runs, counted."""
    runs: Counter = Counter()
    query, query_rows = Trace.query, Trace.query_rows

    def counted(self, name, **params):
        runs[name] += 1
        return query(self, name, **params)

    def counted_rows(self, name, **params):
        runs[name] += 1
        return query_rows(self, name, **params)

    monkeypatch.setattr(Trace, "query", counted)
    monkeypatch.setattr(Trace, "query_rows", counted_rows)
    return runs


def test_single_report_reads_the_gpu_work_once(queries_run):
    """One sorted read of the GPU work serves the busy time, util and the step search; the
    stakeout of the top kernels is one read, not three; census and lineup run once."""
    with tracelens.open(demo_path("bs16")) as t:
        build_report(t)
    assert queries_run["work_in_order"] == 1
    assert queries_run["steps_launches"] == 0  # the step search takes work_in_order's kernels
    assert queries_run["trace_totals"] == 0  # the page shows only the busy time
    assert queries_run["stakeout_profiles"] == 1
    stakeout_parts = ("stakeout_spread", "stakeout_log_histogram", "stakeout_configs")
    assert not any(queries_run[q] for q in stakeout_parts)
    assert queries_run["kernel_summary"] == 1
    assert queries_run["lineup_activities"] == 1


@pytest.mark.parametrize("trace", ["bs1", "bs16"])
def test_one_read_profiles_are_kernel_profiles(trace, monkeypatch):
    """The stakeout from one read (queries/stakeout_profiles.sql) is kernel_profiles's, and
    above HELD_LAUNCHES the page takes kernel_profiles's three reads instead."""
    with tracelens.open(demo_path(trace)) as t:
        census = t.census()
        names = census["name"].head(8).to_list() + ["not launched"]
        launches = int(census["instances"].head(8).sum())
        expected = kernel_profiles(t, names, per_octave=stakeoutview.PER_OCTAVE)
        one = stakeoutview.profiles(t, names, "demangled", launches)
        assert one.configs.height > len(names) - 1  # some kernel has several configurations
        for part in ("spread", "histogram", "configs"):
            assert getattr(one, part).equals(getattr(expected, part)), part
        monkeypatch.setattr(stakeoutview, "HELD_LAUNCHES", launches - 1)
        calls = []
        monkeypatch.setattr(Trace, "query", _recording(Trace.query, calls))
        stakeoutview.profiles(t, names, "demangled", launches)
        assert "stakeout_profiles" not in calls and "stakeout_spread" in calls


def _recording(query, calls: list[str]):
    def recorded(self, name, **params):
        calls.append(name)
        return query(self, name, **params)

    return recorded


def test_short_names_one_read(monkeypatch):
    """Short names group several demangled ones: the one read groups them the same way."""
    with tracelens.open(demo_path("bs16")) as t:
        census = t.census(name="short")
        names = census["name"].head(5).to_list()
        expected = kernel_profiles(t, names, name="short", per_octave=stakeoutview.PER_OCTAVE)
        one = stakeoutview.profiles(t, names, "short", int(census["instances"].head(5).sum()))
    for part in ("spread", "histogram", "configs"):
        got, want = getattr(one, part), getattr(expected, part)
        assert got.equals(want), part
