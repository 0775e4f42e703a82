"""``-o FILE`` onto an input of a path comparison: ``diff TRACE BASELINE.json -o TRACE``
wrote the board over the trace (exit 0), and ``fingerprint --check BASELINE -o BASELINE``
over the baseline; refused before any work, as -o onto a trace is on every other command
(found by advfp)."""

from __future__ import annotations

import hashlib

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run


@pytest.fixture
def runs(tmp_path, capsys):
    base = build_run(tmp_path / "base.sqlite")
    run = build_run(tmp_path / "run.sqlite", Run(gemm={(2, 1): GEMM_SPLITK}))
    baseline = tmp_path / "base.json"
    assert run_cli(["fingerprint", base, "-o", baseline], capsys)[0] == 0
    return run, baseline


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("args", "onto"),
    [
        (lambda run, baseline: ["diff", run, baseline], "run"),
        (lambda run, baseline: ["diff", baseline, run], "run"),
        (lambda run, baseline: ["diff", baseline, run], "baseline"),
        (lambda run, baseline: ["fingerprint", run, "--check", baseline], "baseline"),
    ],
    ids=["diff-trace-A", "diff-trace-B", "diff-baseline-A", "check-baseline"],
)
def test_output_onto_an_input_is_refused(runs, capsys, args, onto):
    run, baseline = runs
    target = run if onto == "run" else baseline
    before = {p: _digest(p) for p in (run, baseline)}
    code, out, err = run_cli([*args(run, baseline), "-o", target], capsys)
    assert (code, out) == (2, "")
    assert err == f"tracelens: -o {target} is one of the inputs; choose another file\n"
    assert {p: _digest(p) for p in (run, baseline)} == before
