"""Golden test for queries/diff_processes.sql: the processes the export names, in its
order, a pid listed twice (a process that exec'd another program) on both rows (the
library keeps the first name), a process without a name with NULL, and a row without a pid
left out."""

from __future__ import annotations

from queries.golden import assert_golden
from tracelens.synth import TraceBuilder


def test_diff_processes(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(100, "python train.py")
    b.process(200, "python dataloader")
    b.process(100, "python -c exec")
    b.add_row("PROCESSES", globalPid=1 << 24, pid=300, name=None)
    b.add_row("PROCESSES", globalPid=2 << 24, pid=None, name="no pid")
    b.kernel("k", start=1_000, end=2_000, pid=100)
    path = tmp_path / "processes.sqlite"
    b.write(path)
    assert_golden(path, "diff_processes", "four_processes", export_tables=True)
