"""findings --fail-on RULE when --rule left RULE out: the gate looked at nothing, and it
passed (exit 0) on a trace where RULE finds something (adversarial review, advutil)."""

from __future__ import annotations

from typer.testing import CliRunner

from tracelens.cli import app
from tracelens.synth import TraceBuilder

PID = 100


def _with_sync(path):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python")
    cid = b.runtime("cudaLaunchKernel", start=1_000, end=2_000, pid=PID, tid=PID)
    b.kernel("void k(float*)", start=3_000, end=50_000, correlation_id=cid, pid=PID)
    b.runtime("cudaDeviceSynchronize", start=2_500, end=51_000, pid=PID, tid=PID)
    return b.write(path)


def test_a_gate_on_a_rule_not_run_does_not_pass(tmp_path):
    trace = str(_with_sync(tmp_path / "t.sqlite"))
    gated = ["findings", trace, "--fail-on", "sync_api"]
    assert CliRunner().invoke(app, gated).exit_code == 1  # the rule finds the sync
    r = CliRunner().invoke(app, [*gated, "--rule", "gpu_gaps"])
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines()[-1] == (
        "tracelens: findings: --fail-on sync_api could not look: it was not run (the rules "
        "run: gpu_gaps)"
    )
    # 'any' gates the rules that ran
    assert (
        CliRunner()
        .invoke(app, ["findings", trace, "--fail-on", "any", "--rule", "gpu_gaps"])
        .exit_code
        == 0
    )


def test_a_gate_whose_filters_select_no_gpu_work_does_not_pass(tmp_path):
    """--device 7 on a one-GPU trace, or a window past the capture: no GPU rule looked at
    anything, and the gate passed (exit 0; the hint, when there was one, on stderr only)."""
    trace = str(_with_sync(tmp_path / "t.sqlite"))
    for flags, why in (
        (["--device", "7"], "no GPU work on device 7; devices present: 0"),
        (
            ["--start", "1s"],
            "window from 1.00 s is outside the trace's span 1.00 µs–51.00 µs from session start",
        ),
    ):
        r = CliRunner().invoke(app, ["findings", trace, "--fail-on", "gpu_gaps", *flags])
        assert r.exit_code == 3, flags
        # one line: the hint is not said twice
        assert r.stderr.strip().splitlines() == [
            f"tracelens: findings: --fail-on gpu_gaps could not look: {why}"
        ]
    # what the host rules find still fails the gate: a finding is a finding
    r = CliRunner().invoke(app, ["findings", trace, "--fail-on", "sync_api", "--device", "7"])
    assert r.exit_code == 1
    # the filters select work: the gate passes on what it saw
    r = CliRunner().invoke(app, ["findings", trace, "--fail-on", "gpu_gaps", "--device", "0"])
    assert r.exit_code == 0


def test_a_threshold_of_a_rule_not_run_is_refused(tmp_path, capsys):
    """--threshold gpu_gaps.gap_ms=1 with --rule sync_api: the threshold applied to nothing,
    silently; the library's thresholds= alike."""
    import pytest

    import tracelens
    from tracelens.cli import main
    from tracelens.errors import UsageError

    trace = _with_sync(tmp_path / "t.sqlite")
    flags = ["--rule", "sync_api", "--threshold", "gpu_gaps.gap_ms=1"]
    with pytest.raises(SystemExit) as exit_info:
        main(["findings", str(trace), *flags])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "tracelens: threshold gpu_gaps.gap_ms is of rule gpu_gaps, which is not run (the rules "
        "run: sync_api)"
    ]
    with tracelens.open(trace) as t, pytest.raises(UsageError, match="which is not run"):
        t.findings(only=("sync_api",), thresholds={("gpu_gaps", "gap_ms"): 1.0})
    # with its rule run, it applies
    with pytest.raises(SystemExit) as exit_info:
        main(["findings", str(trace), *flags, "--rule", "gpu_gaps"])
    assert exit_info.value.code == 0
