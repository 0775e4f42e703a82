"""--top 0 means every row in census and lineup, as timeline's and stakeout's --limit 0."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

import tracelens
from tracelens.demo import demo_path
from tracelens.lineup import category_summary, unclassified_kernels


@pytest.mark.parametrize("command", ["census", "lineup"])
def test_top_zero_is_every_row(command, capsys):
    rc, every, err = run_cli([command, "--demo", "bs16", "-f", "json"], capsys)
    assert (rc, err) == (0, "")
    for flag in ("--top", "-n"):
        rc, out, err = run_cli([command, "--demo", "bs16", "-f", "json", flag, "0"], capsys)
        assert (rc, err) == (0, "")
        assert json.loads(out) == json.loads(every) and len(json.loads(out)) > 1


def test_census_table_with_top_zero_says_no_top(capsys):
    rc, out, _ = run_cli(["census", "--demo", "bs16", "--top", "0"], capsys)
    assert rc == 0 and "24 kernel rows\n" in out and "(top" not in out


@pytest.mark.parametrize("command", ["census", "lineup"])
def test_negative_top_is_refused(command, capsys):
    rc, out, err = run_cli([command, "--demo", "bs16", "--top", "-2"], capsys)
    assert (rc, out, err) == (2, "", "tracelens: --top must be 0 (every row) or more (got -2)\n")


def test_library_top_zero_is_every_row():
    with tracelens.open(demo_path("bs16")) as trace:
        assert trace.census(top=0).equals(trace.census())
        assert trace.census(top=0, per_step=True).equals(trace.census(per_step=True))
        assert category_summary(trace, top=0).equals(category_summary(trace))
        assert unclassified_kernels(trace, top=0).equals(unclassified_kernels(trace))
        assert trace.census(top=3).height == 3
