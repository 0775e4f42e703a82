"""stakeout quotes the pattern and kernel names as the user typed or sees them: a Python
repr doubled every backslash ('zz\\\\xff' for zz\\xff) and switched to double quotes around
a pattern holding a single quote."""

from __future__ import annotations

import pytest
from conftest import run_cli

NAMES = "it has 39 kernel names (demangled and short), see `tracelens census --name short`"


@pytest.mark.parametrize(
    ("pattern", "shown"),
    [("zz\\xff", "'zz\\xff'"), ("it's", "'it's'"), ("a\\b\\c", "'a\\b\\c'")],
)
def test_no_match_message_quotes_the_pattern_as_typed(pattern, shown, capsys):
    rc, out, err = run_cli(["stakeout", "--demo", "bs16", pattern], capsys)
    assert (rc, out) == (2, "")
    assert err == f"tracelens: no kernel in bs16.sqlite has a name containing {shown}; {NAMES}\n"


def test_bad_regex_message_quotes_the_pattern_as_typed(capsys):
    rc, out, err = run_cli(["stakeout", "--demo", "bs16", "gemm\\", "--match", "regex"], capsys)
    assert (rc, out) == (2, "")
    assert err == (
        "tracelens: --match regex: 'gemm\\' is not a valid regular expression: trailing \\\n"
    )


def test_title_quotes_the_pattern_as_typed(capsys):
    args = ["stakeout", "--demo", "bs16", "cunn_SoftMax\\w+", "--match", "regex", "--limit", "1"]
    rc, out, _ = run_cli(args, capsys)
    assert rc == 0
    assert out.startswith("stakeout of bs16.sqlite: 'cunn_SoftMax\\w+' (regex), 5 launches of ")


def test_closest_names_and_case_hint_are_quoted_plainly(capsys):
    rc, _, err = run_cli(["stakeout", "--demo", "bs16", "cunn_SoftMaxForwrd"], capsys)
    assert (rc, err) == (
        2,
        "tracelens: no kernel in bs16.sqlite has a name containing 'cunn_SoftMaxForwrd'; "
        "closest: 'cunn_SoftMaxForward'\n",
    )
    rc, _, err = run_cli(["stakeout", "--demo", "bs16", "softmax"], capsys)
    assert rc == 0 and "2 names match ignoring case ('cunn_SoftMaxForward', ...)" in err


def test_quoted_shows_control_characters_as_hex():
    from tracelens.stakeout import quoted

    assert quoted("a\x1b[2Jb\\n") == "'a\\x1b[2Jb\\n'"
