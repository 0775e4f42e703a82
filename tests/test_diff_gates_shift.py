"""The diff's gates see a level shift in step time: ``step_median_ms`` is the median of all
steady steps, a time few steps took when the run slowed down or sped up part-way, so each
side also has ``level_shift`` (the step its time changed at, 0 without a shift) and
``level_shift_ratio`` (the median from that step over the median before it, 1 without), A's
with ``_a`` after them. Each step is kernels a, b, c, d (40, 30, 20, 10 us) with 5 us
between launches and 50 us after the step: it lasts 115 us, or 215 us when every kernel
lasts twice as long (tests/test_steps_pacing.py's generator)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_diff_pairs import build_stepless
from test_steps_pacing import write_steps

import tracelens
from tracelens.compare import check_gates, diff
from tracelens.errors import UsageError


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def test_a_slowdown_part_way_is_a_gate_figure(tmp_path):
    """B: 12 steps of 115 us, then 12 of 215 us; A: 24 of 115 us. B's median of all (165 us)
    is no step's time; the shift figures say where it changed and by how much."""
    a = write_steps(tmp_path / "a.sqlite", [1] * 24)
    b = write_steps(tmp_path / "b.sqlite", [1] * 12 + [2] * 12)
    d = pair(a, b)
    assert d.figures["step_median_ms"] == 0.165  # unchanged: the median of all steady steps
    assert d.figures["level_shift"] == 13.0
    assert d.figures["level_shift_ratio"] == pytest.approx(215 / 115)
    assert (d.figures["level_shift_a"], d.figures["level_shift_ratio_a"]) == (0.0, 1.0)
    gates = check_gates(d, ["level_shift>0", "level_shift_ratio>1.1", "level_shift_a>0"])
    assert [g.tripped for g in gates] == [True, True, False]
    # a speed-up part-way: the ratio under 1
    d = pair(b, write_steps(tmp_path / "c.sqlite", [2] * 12 + [1] * 12))
    assert d.figures["level_shift"] == 13.0
    assert d.figures["level_shift_ratio"] == pytest.approx(115 / 215)


def test_the_cli_gate_trips_on_the_shift(tmp_path, capsys):
    a = write_steps(tmp_path / "a.sqlite", [1] * 24)
    b = write_steps(tmp_path / "b.sqlite", [1] * 12 + [2] * 12)
    gates = ["--fail-if", "level_shift_ratio>1.5", "--fail-if", "level_shift_ratio_a>1.5"]
    rc, _, err = run_cli(["diff", a, b, "-f", "json", *gates], capsys)
    assert rc == 1
    assert err.splitlines() == [
        "tracelens: gate tripped: level_shift_ratio>1.5 (level_shift_ratio = 1.87)"
    ]


def test_without_steps_the_shift_is_not_measured(tmp_path):
    a = build_stepless(tmp_path, "a", 200)
    b = build_stepless(tmp_path, "b", 200, seed=8)
    d = pair(a, b)
    assert "level_shift" not in d.figures
    with pytest.raises(UsageError, match="level_shift was not measured: no steps found"):
        check_gates(d, ["level_shift>0"])
