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
