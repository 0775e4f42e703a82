"""gpu_gaps on a CUDA-graph workload traced at graph level: nsys analyze does not count the
replays as GPU work, so each long replay is a "gap" (the A100 cudagraph export: 9 gaps of
781 ms while util says 99.9% busy). The rows stay, as nsys lists them, with replay_ns (how
much of the gap replays ran), and a gap replays fill is not counted by --fail-on."""

from __future__ import annotations

import json

from conftest import REFERENCE, needs_shared, run_cli, shared_traces
from fixtures.graph_replay import MS, write_replay_trace

import tracelens
from tracelens.findings import find_issues


def _build(path, *, unfilled: bool = True):
    """Kernels at 1-2 ms, 1001-1002 ms, 2600-2601 ms; a replay at 1.5-1000.5 ms fills the
    first gap (2-1001 ms: 998.5 of its 999 ms); nothing fills the second (1002-2600 ms),
    left out when not ``unfilled``."""
    kernels = (1, 1001, 2600) if unfilled else (1, 1001)
    return write_replay_trace(path, kernels, [(1_500_000, 1_000_500_000)])


def test_gaps_replays_fill_are_listed_with_replay_ns_and_not_counted(tmp_path, capsys):
    path = _build(tmp_path / "g.sqlite")
    with tracelens.open(path) as trace:
        result = find_issues(trace, only=("gpu_gaps",)).result("gpu_gaps")
    assert result.frame.select("duration_ns", "start_ns", "replay_ns").rows() == [
        (1_598 * MS, 1_002 * MS, 0),
        (999 * MS, 2 * MS, 998_500_000),
    ]
    assert (result.total, result.excused, result.fired) == (2, 1, True)
    rc, out, err = run_cli(["findings", path, "--rule", "gpu_gaps", "--fail-on", "any"], capsys)
    assert rc == 1 and "2 found; 1 filled by CUDA graph replays" in " ".join(out.split())
    doc = json.loads(run_cli(["findings", path, "--rule", "gpu_gaps", "-f", "json"], capsys)[1])
    assert (doc[0]["total"], doc[0]["not_counted"]) == (2, 1)
    assert doc[0]["thresholds"] == {"gap_ms": 500, "replay_filled_pct": 90}


def test_only_filled_gaps_do_not_trip_the_gate(tmp_path, capsys):
    path = _build(tmp_path / "g.sqlite", unfilled=False)
    args = ["findings", path, "--rule", "gpu_gaps", "--fail-on", "gpu_gaps"]
    rc, out, _ = run_cli(args, capsys)
    assert rc == 0 and "1 found; 1 filled by CUDA graph replays" in " ".join(out.split())
    # 998.5 of 999 ms is under 99.99%: then the gap counts
    strict = ["--threshold", "gpu_gaps.replay_filled_pct=99.99"]
    rc, out, err = run_cli([*args, *strict], capsys)
    assert rc == 1 and "1 found" in out and "filled" not in out
    assert err == "tracelens: findings: gpu_gaps found something\n"


@needs_shared
def test_the_cudagraph_export_lists_nsys_rows_and_counts_none(trace_copies, capsys):
    (path,) = [p for p in shared_traces() if p.stem == "nsys2024.6_a100_2.7B_cudagraph"]
    copy = trace_copies[path.stem]
    with tracelens.open(copy) as trace:
        result = find_issues(trace, only=("gpu_gaps",)).result("gpu_gaps")
    reference = (REFERENCE / f"{path.stem}_analyze_gpu-starv.csv").read_text().splitlines()
    assert result.total == len(reference) - 1 == 9
    assert result.excused == 9 and not result.fired
    rc, out, _ = run_cli(["findings", copy, "--fail-on", "gpu_gaps"], capsys)
    assert rc == 0 and "9 found; 9 filled by CUDA graph replays" in " ".join(out.split())
