"""A bad per-side window is one line naming the flag the user typed (advnew's review): diff
named --start/--end for --a-start, --a-end, --b-start and --b-end (it has neither), and
report A B named --a-end for a --end of both sides that ends before --a-start (and --a-start
for a --start of both before --a-end)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_report_filters import two_phases


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return two_phases(tmp_path_factory.mktemp("advnew") / "t.sqlite")


NOT_A_TIME = "is not a time; use a number with an optional unit ns, us, ms or s (e.g. 1.5ms)"


@pytest.mark.parametrize("command", ["diff", "report"])
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--a-start", "5ms", "--a-end", "1ms"], "--a-end (1000000 ns) is before --a-start (5000000 ns)"),
        (["--b-start", "5ms", "--b-end", "1ms"], "--b-end (1000000 ns) is before --b-start (5000000 ns)"),
        (["--a-start", "soon"], f"--a-start 'soon' {NOT_A_TIME}"),
        (["--a-end", "-5"], f"--a-end '-5' {NOT_A_TIME}"),
        (["--b-start", "x"], f"--b-start 'x' {NOT_A_TIME}"),
        (["--b-end", "later"], f"--b-end 'later' {NOT_A_TIME}"),
    ],
)  # fmt: skip
def test_a_bad_side_window_names_its_flag(pair, capsys, command, args, said):
    code, out, err = run_cli([command, pair, pair, *args, "-f", "markdown"], capsys)
    assert (code, out, err) == (2, "", f"tracelens: {said}\n")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--a-start", "5ms", "--end", "1ms"], "--end (1000000 ns) is before --a-start (5000000 ns)"),
        (["--start", "5ms", "--b-end", "1ms"], "--b-end (1000000 ns) is before --start (5000000 ns)"),
    ],
)  # fmt: skip
def test_report_names_the_window_flag_of_both_sides_as_typed(pair, capsys, args, said):
    code, out, err = run_cli(["report", pair, pair, *args, "-f", "markdown"], capsys)
    assert (code, out, err) == (2, "", f"tracelens: {said}\n")


@pytest.mark.parametrize("command", ["diff", "report"])
@pytest.mark.parametrize("flag", ["--nvtx", "--a-nvtx", "--b-nvtx"])
def test_an_empty_nvtx_label_is_refused_not_ignored(pair, capsys, command, flag):
    # an empty label (a shell variable unset: --a-nvtx "$PHASE") compared the whole trace
    # in silence; census --nvtx '' and report --nvtx '' say no range is labelled so
    code, out, err = run_cli([command, pair, pair, flag, "", "-f", "markdown"], capsys)
    assert (code, out) == (2, "")
    assert err == f"tracelens: {pair}: no NVTX range labelled ''; closest: 'decode', 'prefill'\n"
