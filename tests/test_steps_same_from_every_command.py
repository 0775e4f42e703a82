"""The steps of a trace do not depend on which command searched first. `steps` reads each
launch's process; the diff, the report and the fingerprint handed the step search their own
read of the launches without it, so on a device two programs share their steps took the
other program's launches and copies (stepsfix's review), and, through a cache entry, the
first command to search kept its steps for every later one: `tracelens steps` after a
diff printed the diff's."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_advutil_steps import shared  # noqa: F401  (a fixture: the loop and a neighbour)


def _steps(path, capsys, *cache):
    code, out, err = run_cli(["steps", path, "-f", "json", "--kernels", "0", *cache], capsys)
    assert code == 0, err
    doc = json.loads(out)
    return doc["detail"], doc["steps"]


@pytest.mark.parametrize(
    "first",
    [
        ["diff", "{t}", "{t}", "-f", "json"],
        ["report", "{t}", "-o", "{dir}/page.html"],
        ["fingerprint", "{t}", "-o", "{dir}/fp.json"],
    ],
    ids=["diff", "report", "fingerprint"],
)
def test_steps_after_any_command_are_the_steps_own(shared, tmp_path, capsys, cache_dir, first):  # noqa: F811
    # the loop (8 iterations, its own 0.5 µs copy each) and another program on its GPU
    # (5 SendRecv and copies): each test its own cache directory (cache_dir)
    path = shared
    direct = _steps(path, capsys, "--no-cache")
    assert direct[0] == (
        "8 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 5 launches of 1 other process on it, which run no such loop, in no step))"
    )
    assert [s["end_ns"] - s["start_ns"] for s in direct[1]] == [6_500] * 8  # its own copy
    args = [a.format(t=path, dir=tmp_path) for a in first]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert _steps(path, capsys) == direct  # read back from the cache entry the command kept
