"""The diff's (and the report's) GPU busy time is `tracelens util`'s busy time summed over
devices: the union of each device's kernels, copies and memsets, not of its kernels alone."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import build_mixed

import tracelens
from tracelens.filters import EventFilter


def _union(intervals) -> int:
    """Time covered by at least one of (start, end), counted independently of tracelens."""
    covered, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            covered, reach = covered + end - start, end
        elif end > reach:
            covered, reach = covered + end - reach, end
    return covered


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    # Two devices; copies and memsets before and after the kernels, none under one.
    return build_mixed(tmp_path_factory.mktemp("busy"), "3.25.0")


def _util_busy(path, capsys, *window: str) -> int:
    rc, out, err = run_cli(["util", path, "-f", "json", "--no-cache", *window], capsys)
    assert rc == 0, err
    return sum(d["busy_ns"] for d in json.loads(out)["devices"])


def _diff_busy(path, capsys, *options: str) -> tuple[int, int]:
    rc, out, err = run_cli(["diff", path, path, "-f", "json", "--no-cache", *options], capsys)
    assert rc == 0, err
    (row,) = [r for r in json.loads(out)["totals"] if r["metric"] == "GPU busy (ns)"]
    return row["a"], row["b"]


def test_diff_gpu_busy_is_utils_busy_with_copies_outside_kernels(mixed, capsys):
    x = mixed.expected
    work = [(k.device, k.start, k.end) for k in x.kernels]
    ops = work + [(c.device, c.start, c.end) for c in (*x.memcpys, *x.memsets)]
    devices = {d for d, _, _ in ops}
    kernels_only = sum(_union((s, e) for d, s, e in work if d == dev) for dev in devices)
    every_op = sum(_union((s, e) for d, s, e in ops if d == dev) for dev in devices)
    assert every_op > kernels_only  # the fixture tells the two meanings apart
    util_busy = _util_busy(mixed.path, capsys)
    assert util_busy == every_op
    assert _diff_busy(mixed.path, capsys) == (util_busy, util_busy)


def test_diff_gpu_busy_is_utils_busy_in_a_window(mixed, capsys):
    # From inside the first host-to-device copy to inside the kernels: clipped as util clips
    start, end = "1.5ms", "2.2ms"
    util_busy = _util_busy(mixed.path, capsys, "--start", start, "--end", end)
    window = ("--a-start", start, "--a-end", end, "--b-start", start, "--b-end", end)
    assert _diff_busy(mixed.path, capsys, *window) == (util_busy, util_busy)


def test_busy_without_util_is_utils_busy(mixed):
    """Above util_max_launches the diff leaves util out and sweeps the work for the busy
    time itself: the same figure."""
    from tracelens.compare.collect import collect, trace_totals

    where = EventFilter(start_ns=1_500_000, end_ns=2_200_000)
    with tracelens.open(mixed.path, cache=False) as t:
        for w in (EventFilter(), where):
            expected = int(t.util(where=w).frame["busy_ns"].sum())
            limited = collect(t, "demangled", w, util_limit=0, nvtx_limit=0)
            assert limited.util is None
            assert limited.totals["gpu_busy_ns"] == expected
            assert trace_totals(t, w)["gpu_busy_ns"] == expected


def test_report_gpu_busy_is_utils_busy(mixed):
    from tracelens.report.header import header_rows
    from tracelens.report.timekeeping import timekeeping
    from tracelens.units import fmt_ns

    with tracelens.open(mixed.path, cache=False) as t:
        kept = timekeeping(t, "A", [])
        busy = int(t.util().frame["busy_ns"].sum())
        assert kept.busy_ns == busy
        (span,) = [v for label, v in header_rows(t, kept.busy_ns) if label == "span"]
    assert span.endswith(f"(GPU busy {fmt_ns(busy)})")
