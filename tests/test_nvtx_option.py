"""--nvtx GLOB on every command over GPU work: only the work launched inside the matching
ranges, and a note saying how many ranges matched (stderr for csv/json, so stdout stays
data)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_nvtx_selection import build_selection_trace


@pytest.fixture(scope="module")
def sel(tmp_path_factory):
    return str(build_selection_trace(tmp_path_factory.mktemp("opt") / "sel.sqlite"))


NOTE_INNER = "only the GPU work launched inside the 3 NVTX ranges matching 'inner'"


def test_census_keeps_only_the_work_inside(sel, capsys):
    rc, out, err = run_cli(["census", sel, "--nvtx", "inner", "-f", "json"], capsys)
    assert rc == 0
    assert sorted(r["name"] for r in json.loads(out)) == ["k_b", "k_e"]
    assert err == f"tracelens: note: {NOTE_INNER}\n"
    rc, out, err = run_cli(["census", sel, "--nvtx", "outer"], capsys)
    assert rc == 0 and err == ""
    assert out.rstrip().endswith(
        "note: only the GPU work launched inside the 1 NVTX range matching 'outer'"
    )
    assert "k_d" not in out and "k_g" in out


@pytest.mark.parametrize(
    ("command", "inside", "outside"),
    [
        (["lineup"], "k_b", "k_a"),
        (["danger"], None, None),
        (["stakeout", "k_"], "k_b", "k_a"),
        (["timeline"], "k_e", "k_a"),
    ],
)
def test_every_command_takes_nvtx(sel, capsys, command, inside, outside):
    rc, out, err = run_cli([*command[:1], sel, *command[1:], "--nvtx", "inner"], capsys)
    assert rc == 0, err
    assert f"note: {NOTE_INNER}" in out
    if inside:
        assert inside in out and outside not in out


def test_memory_takes_nvtx(sel, capsys):
    rc, out, _ = run_cli(["memory", sel, "--nvtx", "inner", "-f", "csv"], capsys)
    assert rc == 0 and out.count("\n") == 2  # header + the one memcpy inside 'inner'
    rc, out, err = run_cli(["memory", sel, "--nvtx", "open", "-f", "csv"], capsys)
    assert (rc, out.count("\n")) == (0, 1), err


def test_a_pattern_that_matches_nothing_is_one_line(sel, capsys):
    rc, out, err = run_cli(["lineup", sel, "--nvtx", "iner"], capsys)
    assert (rc, out) == (2, "")
    assert "no NVTX range labelled 'iner'; closest: 'inner'" in err and err.count("\n") == 1
