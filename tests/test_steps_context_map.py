"""The step search reads each launch's process (to order several processes' launches on one
device) only when the export cannot say that one process launched on each device: its
context table (TARGET_INFO_CUDA_CONTEXT_INFO, or TARGET_INFO_CUDA_NULL_STREAM before it)
lists one process on every device that has launches, or the filter names a process. Two
processes with contexts on one device, a device the table does not list, or no table at
all: the processes are read, and the steps are those of tests/test_multiprocess_order.py."""

from __future__ import annotations

import pytest
from queries.golden import assert_golden
from test_multiprocess_order import Process, _launches, _own_steps
from test_util_listed import add_context

import tracelens
from tracelens.filters import EventFilter
from tracelens.steps import find_steps
from tracelens.steps_order import one_process_devices
from tracelens.synth import TraceBuilder
from tracelens.trace import Trace


def build(path, processes: list[Process], contexts=None, schema: str = "3.24.18"):
    """``processes``' launches (as test_multiprocess_order.build), and a CUDA context of
    each (pid, device) in ``contexts`` (None: one per process on its device)."""
    b = TraceBuilder(schema)
    for process in processes:
        b.process(process.pid, f"python worker_{process.pid}.py")
    for device in sorted({p.device for p in processes}):
        b.gpu(device, "NVIDIA H100 80GB HBM3")
    if contexts is None:
        contexts = [(p.pid, p.device) for p in processes]
    for i, (pid, device) in enumerate(contexts):
        add_context(b, pid, device, i + 1)
    for pid, device, cid, start, end, name in (r for p in processes for r in _launches(p)):
        b.runtime("cudaLaunchKernel_v7000", start=start - 900, end=start - 400, pid=pid,
                  correlation_id=cid)  # fmt: skip
        b.kernel(name, start=start, end=end, pid=pid, device=device, correlation_id=cid)
    return b.write(path)


def _search(path, monkeypatch, where: EventFilter | None = None):
    """(the steps' (device, start, end, kernels), the $pids of each steps_launch_rows read)."""
    asked: list[bool] = []
    query = Trace.query

    def recorded(self, name, **params):
        if name == "steps_launch_rows":
            asked.append(params["pids"])
        return query(self, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    with tracelens.open(path) as trace:
        steps = find_steps(trace, where=where)
    monkeypatch.setattr(Trace, "query", query)
    assert steps.method == "period"
    spans = steps.frame.select("device", "start_ns", "end_ns", "kernels").rows()
    return spans, asked


TWO_ON_ONE = [Process(4242), Process(5151, start=1_010_000)]
ONE_EACH = [Process(4242, device=0), Process(5151, device=1, start=1_005_000)]


@pytest.mark.parametrize(
    ("schema", "query"),
    [("3.24.18", "steps_context_processes"), ("3.0.0", "steps_null_stream_processes")],
)
def test_the_context_tables_count_processes_per_device(tmp_path, schema, query):
    # device 0: contexts of 4242 (two) and 5151; device 2: 4242's alone
    contexts = [(4242, 0), (4242, 0), (5151, 0), (4242, 2)]
    path = build(tmp_path / "t.sqlite", [Process(4242)], contexts, schema)
    assert_golden(path, query, "two_processes", export_tables=True)
    with tracelens.open(path) as trace:
        assert one_process_devices(trace) is None


def test_one_process_devices(tmp_path):
    with tracelens.open(build(tmp_path / "each.sqlite", ONE_EACH)) as trace:
        assert one_process_devices(trace) == {0, 1}
    with tracelens.open(build(tmp_path / "none.sqlite", ONE_EACH, contexts=[])) as trace:
        assert one_process_devices(trace) is None  # an empty table says nothing


def test_two_processes_with_contexts_on_one_device_are_read(tmp_path, monkeypatch):
    """The table lists both processes on device 0: their launches' processes are read, and
    each step is one process's (read without them, the two would interleave)."""
    spans, asked = _search(build(tmp_path / "two.sqlite", TWO_ON_ONE), monkeypatch)
    assert asked == [True]
    expected = _own_steps(TWO_ON_ONE[0]) + _own_steps(TWO_ON_ONE[1])
    assert [(s, e, k) for _, s, e, k in spans] == expected


def test_a_device_the_table_does_not_list_is_read_again(tmp_path, monkeypatch):
    """The table lists 4242 alone, on device 1; both processes launch on device 0: the
    launches are read again with their processes, and the steps stay each process's."""
    path = build(tmp_path / "unlisted.sqlite", TWO_ON_ONE, contexts=[(4242, 1)])
    spans, asked = _search(path, monkeypatch)
    assert asked == [False, True]
    expected = _own_steps(TWO_ON_ONE[0]) + _own_steps(TWO_ON_ONE[1])
    assert [(s, e, k) for _, s, e, k in spans] == expected


def test_one_process_per_device_reads_no_process(tmp_path, monkeypatch):
    """The table lists one process on each device: no launch's process is read, and the
    steps are those found reading them (no context table)."""
    cheap, asked = _search(build(tmp_path / "each.sqlite", ONE_EACH), monkeypatch)
    assert asked == [False]
    read, asked_without = _search(build(tmp_path / "bare.sqlite", ONE_EACH, []), monkeypatch)
    assert asked_without == [True]
    assert cheap == read


def test_a_process_filter_restricts_the_traces_steps(tmp_path, monkeypatch):
    """The steps of one process are the trace's steps (searched over both processes'
    launches, read with their processes) restricted to its work: its own iterations."""
    path = build(tmp_path / "two.sqlite", TWO_ON_ONE)
    spans, asked = _search(path, monkeypatch, EventFilter(pid=5151))
    assert asked == [True]
    assert [(s, e, k) for _, s, e, k in spans] == _own_steps(TWO_ON_ONE[1])
