"""timeline names a copy kind outside CUPTI's 0-13 as memory and lineup do, '[CUDA memcpy
kind 99]'; it said 'copy kind 99', though the labels are the one copy-kind vocabulary
(queries/_memcpy_labels.sql) so that every command names a copy kind alike (found by
advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.fixture
def export(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python copy.py")
    b.memcpy(99, 5_000, start=6_000, end=9_000, pid=4242)
    b.memcpy("HtoD", 1_000, start=10_000, end=11_000, pid=4242)
    return b.write(tmp_path / "copy.sqlite")


def _names(args, capsys, column):
    rc, out, err = run_cli(args, capsys)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    at = lines[0].split(",").index(column)
    return [line.split(",")[at] for line in lines[1:]]


def test_timeline_names_it_as_memory_does(export, capsys):
    timeline = _names(["timeline", export, "-f", "csv"], capsys, "name")
    every = _names(["timeline", export, "--limit", "0", "-f", "csv"], capsys, "name")
    memory = _names(["memory", export, "-f", "csv"], capsys, "operation")
    assert timeline == ["[CUDA memcpy kind 99]", "[CUDA memcpy HtoD]"]
    assert sorted(memory) == sorted(timeline) == sorted(every)
