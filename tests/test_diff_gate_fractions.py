"""--fail-if on a fraction figure (util, util_min, comparability, launch_overlap,
time_overlap; a diff's A side too): the figures are 0..1, so a number outside 0..1 (a
percent, 'util<90') would always or never trip, silently. It is a usage error instead:
exit 2 before any output, one line saying the figure is a fraction."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_util_gates import build

from tracelens.compare.gates import check_gates
from tracelens.errors import UsageError


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    return build(tmp_path_factory.mktemp("fractions") / "gates.sqlite")


@pytest.mark.parametrize(
    ("gate", "line"),
    [
        ("util<90", "util is a fraction 0-1, not a percent (e.g. util<0.9)"),
        ("util_min>=95", "util_min is a fraction 0-1, not a percent (e.g. util_min>=0.95)"),
        ("util<-1", "util is a fraction 0-1, not a percent (e.g. util<0)"),
    ],
)
def test_util_gate_in_percent_is_a_usage_error(traced, capsys, gate, line):
    rc, out, err = run_cli(["util", str(traced), "--fail-if", gate], capsys)
    assert (rc, out) == (2, "")
    assert err == f"tracelens: --fail-if {gate!r}: {line}\n"


def test_diff_gate_in_percent_is_a_usage_error(traced, capsys):
    for gate in ("util<90", "util_a<90", "comparability>50"):
        rc, out, err = run_cli(["diff", str(traced), str(traced), "--fail-if", gate], capsys)
        figure = gate.split("<")[0].split(">")[0]
        assert (rc, out) == (2, "")
        assert err.startswith(f"tracelens: --fail-if {gate!r}: {figure} is a fraction 0-1")
        assert err.count("\n") == 1


def test_fraction_bounds_are_gates():
    figures = {"util": 0.75, "util_a": 1.0, "busy_ms": 90.0}
    results = check_gates(figures, ["util<1", "util_a>=0", "util>0.8", "busy_ms<100"])
    assert [g.tripped for g in results] == [True, True, False, True]
    with pytest.raises(UsageError, match="util is a fraction 0-1"):
        check_gates(figures, ["util<1.5"])
