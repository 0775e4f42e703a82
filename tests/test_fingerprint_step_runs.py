"""Fingerprint format 12 (#13: "a steady-state capture is a few kilobytes"): a path entry's
steps are written as runs, three or more consecutive steps as one [first, last] pair, and
read back as every step; versions 10 and 11 (every step listed) are still read; a run that
is not one, or runs standing for too many steps, are one line and exit 2."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import Run, build_run

import tracelens
import tracelens.fingerprint as fp
from tracelens.errors import UsageError
from tracelens.fingerprint.document import MAX_RUN_STEPS, step_runs


@pytest.mark.parametrize(
    ("steps", "runs"),
    [
        ([], []),
        ([4], [4]),
        ([1, 2], [1, 2]),
        ([1, 2, 3], [[1, 3]]),
        ([1, 3, 4, 5, 9], [1, [3, 5], 9]),
        ([2, 3, 4, 6, 7, 9, 10, 11, 12], [[2, 4], 6, 7, [9, 12]]),
        ([5, 4, 3], [5, 4, 3]),  # only ascending stretches are runs
    ],
)
def test_step_runs(steps, runs):
    assert step_runs(steps) == runs


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """200 steps of 2 layers, every step the same path."""
    path = build_run(tmp_path_factory.mktemp("runs") / "long.sqlite", Run(steps=200))
    with tracelens.open(path, cache=False) as t:
        return fp.build(t)


def test_steady_steps_are_one_run_and_read_back_listed(long_run):
    text = fp.dumps(long_run)
    assert long_run["version"] == 12
    step_entries = [e for e in long_run["paths"] if e["steps"]]
    assert step_entries and all(e["steps"] == list(range(1, 201)) for e in step_entries)
    # each such entry writes its 200 steps as one run
    written = [json.loads(line.rstrip(",")) for line in text.splitlines() if '"steps": [[' in line]
    assert [e["steps"] for e in written] == [[[1, 200]]] * len(step_entries)
    assert len(text.encode()) < 8_000, len(text.encode())
    assert fp.loads(text) == long_run
    assert fp.dumps(fp.loads(text)) == text  # byte-stable through a file


def test_version_11_baseline_is_still_read(long_run, tmp_path, capsys):
    v11 = tmp_path / "v11.json"
    v11.write_text(fp.dumps({**long_run, "version": 11}))
    assert '"steps": [1, 2, 3,' in v11.read_text()
    assert fp.load(v11)["paths"] == long_run["paths"]
    v12 = tmp_path / "v12.json"
    v12.write_text(fp.dumps(long_run))
    rc, out, err = run_cli(["diff", v11, v12], capsys)
    assert rc == 0, err
    assert out == "numerical path: v12.json follows v11.json exactly (3 regions)\n"


def _with_steps(doc, steps) -> str:
    """``doc``'s text with its first step entry's steps written as ``steps``."""
    lines = fp.dumps(doc).splitlines()
    i = next(i for i, line in enumerate(lines) if '"steps": [[' in line)
    entry = json.loads(lines[i].rstrip(","))
    lines[i] = "    " + json.dumps({**entry, "steps": steps}, ensure_ascii=False) + ","
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ([[5, 3]], "paths[{i}].steps[0] is [5, 3], not a step or a run [first, last] of steps"),
        ([[0, 3]], "paths[{i}].steps[0] is [0, 3], not a step or a run [first, last] of steps"),
        (
            [1, [2, 3, 4]],
            "paths[{i}].steps[1] is [2, 3, 4], not a step or a run [first, last] of steps",
        ),
        ([["1", 3]], 'paths[{i}].steps[0] is ["1", 3], not a step or a run [first, last] of steps'),
        ([[1, 10**12]], f"its step runs stand for more than {MAX_RUN_STEPS:,} steps"),
        ([[1, 2], 2], "paths[{i}].steps lists step 2 twice"),
    ],
)
def test_a_run_that_is_not_one_is_refused(long_run, steps, said):
    text = _with_steps(long_run, steps)
    i = next(i for i, e in enumerate(long_run["paths"]) if e["steps"])
    with pytest.raises(UsageError) as exc:
        fp.loads(text, "base.json")
    assert str(exc.value) == f"base.json: not a valid fingerprint ({said.format(i=i)})"


def test_one_region_is_said_in_the_singular(tmp_path, capsys):
    # without NVTX a step is the one region: '(1 region)', not '(1 regions)'
    path = build_run(tmp_path / "plain.sqlite", Run(steps=4, nvtx=False))
    base = tmp_path / "base.json"
    assert run_cli(["fingerprint", path, "-o", base], capsys)[0] == 0
    code, out, err = run_cli(["fingerprint", path, "--check", base], capsys)
    assert code == 0, err
    assert out == "numerical path: plain.sqlite follows base.json exactly (1 region)\n"
