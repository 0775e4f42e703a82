"""util --nvtx over sparse ranges: busy and idle are counted inside the GPU projection of
the selected NVTX ranges (per device, from the first GPU operation launched inside a range
to the end of the last, as nsys's nvtx_gpu_proj), not over the whole span of the selected
work: the time between the ranges, where the GPU ran work the selection leaves out, is not
the selection's idle time. The output says how much of the window the projection covers."""

from __future__ import annotations

import json

import pytest

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
PID = 9
ROUNDS = 5
ROUND = 1_000 * US


def _kernel(b: TraceBuilder, name: str, at: int, start: int, end: int, device: int = 0) -> None:
    cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 2 * US, pid=PID)
    b.kernel(f"void {name}(float*)", start=start, end=end, pid=PID, correlation_id=cid,
             device=device)  # fmt: skip


def _sparse(path, nested: bool = False) -> None:
    """Five rounds of 1 ms: a range 'sel' (100 us) launches k1 (runs 20-50 us) and k2
    (launched at 60 us, runs 70-90 us) on device 0, and k3 (runs 30-60 us) on device 1;
    then a range 'other' launches u, which keeps device 0 busy from 210 to 900 us. The
    projection of 'sel': 70 us on device 0 (k2's launch comes after k1 ended: 20 us
    launch_bound), 30 us on device 1, per round. ``nested``: a second 'sel' inside the
    first, around k2's launch (the same projection)."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    b.gpu(1)
    for k in range(ROUNDS):
        t = 1_000 * US + k * ROUND
        b.nvtx_range("sel", start=t, end=t + 100 * US, pid=PID)
        if nested:
            b.nvtx_range("sel", start=t + 55 * US, end=t + 65 * US, pid=PID)
        _kernel(b, "k1", t + 10 * US, t + 20 * US, t + 50 * US)
        _kernel(b, "k3", t + 12 * US, t + 30 * US, t + 60 * US, device=1)
        _kernel(b, "k2", t + 60 * US, t + 70 * US, t + 90 * US)
        b.nvtx_range("other", start=t + 150 * US, end=t + 250 * US, pid=PID)
        _kernel(b, "u", t + 200 * US, t + 210 * US, t + 900 * US)
    b.write(path)


@pytest.mark.parametrize("nested", [False, True])
def test_idle_is_counted_inside_the_projection(tmp_path, nested):
    path = tmp_path / "sparse.sqlite"
    _sparse(path, nested)
    with tracelens.open(path, cache=False) as trace:
        u = trace.util(nvtx="sel")
    rows = {r["device"]: r for r in u.frame.iter_rows(named=True)}
    assert rows[0]["span_ns"] == ROUNDS * 70 * US
    assert (rows[0]["busy_ns"], rows[0]["idle_ns"]) == (ROUNDS * 50 * US, ROUNDS * 20 * US)
    assert rows[0]["utilization"] == pytest.approx(50 / 70)
    assert (rows[1]["span_ns"], rows[1]["idle_ns"]) == (ROUNDS * 30 * US, 0)
    causes = {(r["device"], r["cause"]): (r["count"], r["time_ns"])
              for r in u.idle_causes.iter_rows(named=True)}  # fmt: skip
    assert causes == {(0, "launch_bound"): (ROUNDS, ROUNDS * 20 * US)}
    # the window is still the selected work's span; the projection covers a part of it
    assert (u.start_ns, u.end_ns) == (1_020 * US, 1_090 * US + (ROUNDS - 1) * ROUND)
    assert u.covered_ns == ROUNDS * 70 * US  # device 1's 30 us lie inside device 0's 70
    assert any("GPU projection of the selected NVTX ranges" in n for n in u.notes)
    figures = u.figures()
    assert figures["idle_ms"] == pytest.approx(ROUNDS * 20 / 1_000)
    assert figures["util"] == pytest.approx(ROUNDS * 80 / (ROUNDS * 100))


def test_a_window_cuts_the_projection(tmp_path):
    """--start/--end inside the selection: the projection is cut to the window."""
    path = tmp_path / "sparse.sqlite"
    _sparse(path)
    with tracelens.open(path, cache=False) as trace:
        u = trace.util(nvtx="sel", start=1_040 * US, end=2_080 * US)
    rows = {r["device"]: r for r in u.frame.iter_rows(named=True)}
    # round 1: 40-90 us (k1 10 us, the 20 us gap, k2 20 us); round 2: 20-80 us
    assert rows[0]["span_ns"] == 50 * US + 60 * US
    assert rows[0]["idle_ns"] == 2 * 20 * US


def test_the_output_says_what_the_projection_covers(tmp_path, capsys):
    from tracelens.cli import main

    path = tmp_path / "sparse.sqlite"
    _sparse(path)
    for args, check in (
        (["util", str(path), "--nvtx", "sel", "--format", "json"], "json"),
        (["util", str(path), "--nvtx", "sel"], "table"),
        (["util", str(path), "--format", "json"], "whole"),
    ):
        try:
            main(args)
        except SystemExit as e:
            assert not e.code
        out = capsys.readouterr().out
        if check == "json":
            doc = json.loads(out)
            assert doc["window"]["covered_ns"] == ROUNDS * 70 * US
            assert any("covers 350.0 µs of the 4.07 ms window (8.6%)" in n for n in doc["notes"])
        elif check == "table":
            assert "GPU projection (350.0 µs of 4.07 ms)" in out
        else:  # without --nvtx: the window is the whole capture, no projection
            assert "covered_ns" not in json.loads(out)["window"]


def test_findings_launch_bound_follows_the_projection(tmp_path):
    """findings' launch_bound reads util's idle causes: the gaps inside the projection (5 x
    20 us on device 0), not the stretches between the ranges (3.82 ms, on both devices)."""
    from tracelens.filters import select_nvtx
    from tracelens.findings import find_issues

    path = tmp_path / "sparse.sqlite"
    _sparse(path)
    low = {("launch_bound", "min_ms"): 0.001, ("launch_bound", "min_share"): 0.0}
    with tracelens.open(path, cache=False) as trace:
        where, _ = select_nvtx(trace, "sel")
        found = find_issues(trace, where=where, thresholds=low)
    bound = next(r for r in found.results if r.rule == "launch_bound")
    rows = bound.frame.select("device", "gaps", "duration_ns", "span_ns").rows()
    assert rows == [(0, ROUNDS, ROUNDS * 20 * US, ROUNDS * 70 * US)]
