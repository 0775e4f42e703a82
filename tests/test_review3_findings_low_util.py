"""gpu_low_util on a CUDA-graph workload traced at graph level: nsys analyze counts no
replay as GPU work, so a stretch of replays is "in use for 0%" (the A100 cudagraph export:
one stretch of 7.03 s, 0.0% in use, while util says 99.9% busy) and `--fail-on gpu_low_util`
failed that export although gpu_gaps' same stretches were already not counted. The rows stay, as nsys
lists them, with replay_ns (how much of the stretch replays ran); a stretch that the
replays bring to the rule's threshold_pct in use is not counted by --fail-on."""

from __future__ import annotations

import json

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces
from fixtures.graph_replay import MS, write_replay_trace

import tracelens
from tracelens.findings import find_issues


def _build(path, replay_end_ms: int):
    """Kernels at 0-1 ms and 1000-1001 ms and one replay at 1.5 ms to ``replay_end_ms`` in
    between: every chunk of the 1001 ms is under 50% in use as nsys counts, so nsys
    lists one stretch of 1001 ms in use for 0.2% (2 ms of kernels)."""
    return write_replay_trace(path, (1, 1001), [(2_500_000, replay_end_ms * MS)])


def test_a_stretch_replays_keep_busy_is_listed_and_not_counted(tmp_path, capsys):
    """Fails on the old code: no replay_ns, the stretch counted, --fail-on exited 1."""
    path = _build(tmp_path / "g.sqlite", 901)
    with tracelens.open(path) as trace:
        result = find_issues(trace, only=("gpu_low_util",)).result("gpu_low_util")
    assert result.frame.select("in_use_pct", "duration_ns", "start_ns", "replay_ns").rows() == [
        (0.2, 1001 * MS, 1 * MS, 898_500_000)
    ]
    assert (result.total, result.excused, result.fired) == (1, 1, False)
    args = ["findings", path, "--rule", "gpu_low_util", "--fail-on", "any"]
    rc, out, err = run_cli(args, capsys)
    words = " ".join(out.split())
    assert rc == 0 and err == ""
    assert "1 found; 1 in use for at least 50% with the CUDA graph replays" in words
    doc = json.loads(run_cli([*args[:4], "-f", "json"], capsys)[1])
    assert (doc[0]["total"], doc[0]["not_counted"]) == (1, 1)
    assert doc[0]["rows"][0]["replay_ns"] == 898_500_000


@pytest.mark.parametrize("threshold", [None, 95], ids=["short_replay", "strict_threshold"])
def test_a_stretch_still_under_the_threshold_counts(tmp_path, capsys, threshold):
    """A replay of 300 ms keeps the stretch at 30% in use, under 50%: it counts; so does
    the 901 ms replay (90%) under a threshold of 95%."""
    path = _build(tmp_path / "g.sqlite", 901 if threshold else 301)
    args = ["findings", path, "--rule", "gpu_low_util", "--fail-on", "gpu_low_util"]
    if threshold:
        args += ["--threshold", f"gpu_low_util.threshold_pct={threshold}"]
    rc, out, err = run_cli(args, capsys)
    assert rc == 1 and "1 found" in out and "CUDA graph replays that ran" not in out
    assert err == "tracelens: findings: gpu_low_util found something\n"


@needs_shared
def test_the_cudagraph_export_passes_fail_on_gpu_low_util(trace_copies, capsys):
    """Fails on the old code: gpu_low_util's one row (0.0% for 7.03 s) counted, exit 1 (its
    one sync_api row, a real one, is what is left: 1 of 8 rules, not 2)."""
    (path,) = [p for p in shared_traces() if p.stem == "nsys2024.6_a100_2.7B_cudagraph"]
    copy = trace_copies[path.stem]
    with tracelens.open(copy) as trace:
        result = find_issues(trace, only=("gpu_low_util",)).result("gpu_low_util")
    reference = (REFERENCE / f"{path.stem}_analyze_gpu-low-util.csv").read_text().splitlines()
    assert result.total == len(reference) - 1 == 1
    (replay_ns,) = result.frame["replay_ns"].to_list()
    assert replay_ns > 0.99 * result.frame["duration_ns"][0]
    assert result.excused == 1 and not result.fired
    rc, out, _ = run_cli(["findings", copy, "--fail-on", "gpu_low_util"], capsys)
    assert rc == 0 and "1 of 8 rules found something" in out, out
