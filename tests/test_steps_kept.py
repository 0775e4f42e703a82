"""The steps of a whole cached trace, kept in its cache entry (tracelens.steps_kept): the
first search through the cache keeps them, a later one reads them back without reading a
launch, with the direct search's steps (frame, ranges, method, detail, source, motif); a
--range search, another version or a damaged file searches again; a filtered search
restricts the kept steps (a device: their rows, read back; a process: recounted). Each test
has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches small traces."""

from __future__ import annotations

import pytest
from test_steps_period_work import build

import tracelens
from tracelens import cache, steps_kept, util_workfile
from tracelens.filters import EventFilter
from tracelens.steps import find_steps


def _whole(steps) -> tuple:
    ranges = None if steps.ranges is None else (steps.ranges.rows(), steps.ranges.schema)
    frame = (steps.frame.rows(), steps.frame.schema)
    # the summary's floats to the last digit (std_ns, mean_ns: sums over the steps)
    return steps.method, steps.detail, steps.source, steps.motif, frame, ranges, steps.summary()


def _recorded(trace, monkeypatch) -> list[str]:
    ran: list[str] = []
    real = trace.query
    monkeypatch.setattr(trace, "query", lambda name, **p: ran.append(name) or real(name, **p))
    return ran


@pytest.mark.parametrize("nvtx", [False, True], ids=["period", "nvtx"])
def test_whole_steps_are_kept_and_read_back(nvtx, tmp_path, cache_dir, monkeypatch):
    path = build(tmp_path / "run.sqlite", nvtx=nvtx)
    with tracelens.open(path, cache=False) as direct:
        expected = _whole(find_steps(direct))
        device0 = _whole(find_steps(direct, where=EventFilter(device=0)))
        ranged = _whole(find_steps(direct, range="train_step_*")) if nvtx else None
        assert steps_kept.kept_steps(direct) is None  # no cache entry
    assert expected[0] == ("marker" if nvtx else "period") and expected[4][0]
    assert (expected[5] is not None) == nvtx and (expected[3] != {}) != nvtx
    with tracelens.open(path) as first:
        assert steps_kept.kept_steps(first) is None
        assert _whole(find_steps(first)) == expected
    with tracelens.open(path) as again:
        ran = _recorded(again, monkeypatch)
        assert _whole(find_steps(again)) == expected
        assert ran == []  # read back: no launch, range or name read
        # a device's steps are the kept steps' rows of it: still nothing read
        assert _whole(find_steps(again, where=EventFilter(device=0))) == device0
        assert ran == []
        find_steps(again, where=EventFilter(pid=100))
        assert ran  # a process's steps are recounted from its work
        if nvtx:
            assert _whole(find_steps(again, range="train_step_*")) == ranged
    with monkeypatch.context() as patched, tracelens.open(path) as other:
        patched.setattr(util_workfile, "code_version", lambda: "made-otherwise")
        assert steps_kept.kept_steps(other) is None
        assert _whole(find_steps(other)) == expected
    with tracelens.open(path) as damaged:
        figures = util_workfile.bundle_name(steps_kept._STEPS, "figures")
        entry = util_workfile._entry(damaged)
        kept = cache.derived_path(entry, figures, util_workfile.code_version())
        assert kept is not None
        kept.write_bytes(b"not parquet")
        assert steps_kept.kept_steps(damaged) is None
        assert _whole(find_steps(damaged)) == expected


def test_no_steps_are_kept_too(tmp_path, cache_dir, monkeypatch):
    """A trace without step structure: 'none' and its reason, read back."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(100, "python p.py")
    b.gpu(0)
    for i, name in enumerate(("a(int)", "b(int)", "c(int)")):
        b.kernel(name, start=1_000_000 + 10_000 * i, end=1_005_000 + 10_000 * i)
    path = b.write(tmp_path / "few.sqlite") or tmp_path / "few.sqlite"
    with tracelens.open(path, cache=False) as direct:
        expected = _whole(find_steps(direct))
    assert expected[0] == "none"
    with tracelens.open(path) as first:
        assert _whole(find_steps(first)) == expected
    with tracelens.open(path) as again:
        ran = _recorded(again, monkeypatch)
        assert _whole(find_steps(again)) == expected and ran == []


def test_the_kernel_totals_of_nvtx_steps_are_kept(demo, cache_dir, monkeypatch):
    """NVTX steps keep the kernel totals their search counted, and a later run ranks its top
    kernels from them, as the first did, without a pass over the calls and kernels (the
    demo's decode_step_N ranges do not overlap: the totals are counted)."""
    from tracelens.stepwork import step_report

    path = demo
    with tracelens.open(path, cache=False) as direct:
        expected = step_report(direct, top_kernels=2)
        assert find_steps(direct).kernel_totals is None  # counted only when asked for
    assert expected.kernel_totals is not None and expected.top_kernels.height
    with tracelens.open(path) as first:
        assert step_report(first, top_kernels=2).top_kernels.equals(expected.top_kernels)
    with tracelens.open(path) as again:
        ran = _recorded(again, monkeypatch)
        found = step_report(again, top_kernels=2)
        assert found.kernel_totals is not None
        assert found.kernel_totals.sort(["step", "device", "name_id"]).equals(
            expected.kernel_totals.sort(["step", "device", "name_id"])
        )
        assert found.top_kernels.equals(expected.top_kernels)
        assert ran == ["steps_range_kernel_ranks"]


def test_steps_kept_without_kernel_totals_rank_by_the_query(demo, cache_dir, monkeypatch):
    """Steps a search kept without counting their kernel totals (find_steps: a diff, util
    --steps) still give the top kernels, by steps_range_top_kernels."""
    from tracelens.stepwork import step_report

    with tracelens.open(demo, cache=False) as direct:
        expected = step_report(direct, top_kernels=2).top_kernels
    with tracelens.open(demo) as first:
        assert find_steps(first).kernel_totals is None
    with tracelens.open(demo) as again:
        ran = _recorded(again, monkeypatch)
        assert step_report(again, top_kernels=2).top_kernels.equals(expected)
        assert ran == ["steps_range_top_kernels"]


def _launch_sequence(trace):
    # the whole trace's kernels in launch order, as the report and the fingerprint hand
    # them over (queries/steps_launches.sql, ordered by device and correlation id)
    import polars as pl

    rows = trace.db.execute(
        'SELECT deviceId AS device, start AS start_ns, "end" AS end_ns, demangledName AS '
        "name_id FROM kernels ORDER BY deviceId, globalPid, correlationId"
    ).pl()
    return rows.with_columns(pl.col("device").cast(pl.Int64))


def test_steps_of_handed_over_launches_are_kept_and_read_back(tmp_path, cache_dir, monkeypatch):
    """Fails on the old code: a search handed the whole trace's launches (the report, the
    fingerprint) neither read the kept steps back nor kept its own."""
    path = build(tmp_path / "run.sqlite", nvtx=False)
    with tracelens.open(path, cache=False) as direct:
        expected = _whole(find_steps(direct))
    with tracelens.open(path) as first:
        assert _whole(find_steps(first, launches=_launch_sequence(first))) == expected
        assert _whole(steps_kept.kept_steps(first)) == expected
    with tracelens.open(path) as again:
        sequence = _launch_sequence(again)
        ran = _recorded(again, monkeypatch)
        assert _whole(find_steps(again, launches=sequence.head(0))) == expected
        assert ran == []  # read back: the (here empty) launches handed over are not searched


def test_top_kernels_of_the_whole_trace_steps_are_kept(tmp_path, cache_dir, monkeypatch):
    """`tracelens steps` ranks each step's top kernels with a pass over every operation of
    the steps (1.3 of a repeat's 2.0 s on a 2.5M-launch loop): kept by the first run, per
    count of kernels, and read back with the direct run's rows (a device's too: its rows of
    them); another count, or a process's, ranks them again."""
    from tracelens.stepwork import step_report

    path = build(tmp_path / "run.sqlite", nvtx=False)
    with tracelens.open(path, cache=False) as direct:
        expected = step_report(direct, top_kernels=3).top_kernels
        two = step_report(direct, top_kernels=2).top_kernels
        device0 = step_report(direct, where=EventFilter(device=0), top_kernels=3).top_kernels
        process = step_report(direct, where=EventFilter(pid=100), top_kernels=3).top_kernels
    assert expected.height and not expected.equals(two)
    with tracelens.open(path) as first:
        assert step_report(first, top_kernels=3).top_kernels.equals(expected)
    with tracelens.open(path) as again:
        ran = _recorded(again, monkeypatch)
        assert step_report(again, top_kernels=3).top_kernels.equals(expected)
        assert ran == []  # the steps and their top kernels read back
        assert step_report(again, top_kernels=2).top_kernels.equals(two)
        assert ran == ["steps_top_kernels"]  # another count: ranked, then kept
        ran.clear()
        # a device's are its rows of the whole trace's (steps_within): read back too
        assert step_report(again, where=EventFilter(device=0), top_kernels=3).top_kernels.equals(
            device0
        )
        assert ran == []
        # a process's are ranked over its own work
        assert step_report(again, where=EventFilter(pid=100), top_kernels=3).top_kernels.equals(
            process
        )
        assert ran
    with tracelens.open(path) as third:
        ran = _recorded(third, monkeypatch)
        assert step_report(third, top_kernels=2).top_kernels.equals(two)
        assert ran == []
