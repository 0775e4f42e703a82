"""A process's launches are taken one host thread after another (tracelens.fingerprint.threads),
as processes are: two threads whose calls interleave differently from run to run (host
scheduling) launch the same path (review8 B1)."""

from __future__ import annotations

import importlib

from conftest import run_cli
from fixtures.thread_launches import ALLREDUCE, US, iteration_calls, launch

import tracelens
from tracelens import fingerprint as fp
from tracelens.fingerprint import threads
from tracelens.synth import TraceBuilder


def _two_threads(path, comm_after: int, compute=("a", "b", "c")):
    """One process, one GPU, 12 iterations: thread 11 launches ``compute`` on stream 7,
    thread 12 one AllReduce on stream 9, its call made after the ``comm_after``-th compute
    call (no NVTX: steps from the launch period)."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    for s in range(12):
        t0 = 1_000 * US + s * 1_000 * US
        calls = [(name, 11, 7) for name in compute]
        calls.insert(comm_after, (ALLREDUCE, 12, 9))
        launch(b, iteration_calls(t0, calls), {7: t0 + 100 * US, 9: t0 + 100 * US})
    return b.write(path)


def test_threads_that_interleave_otherwise_launch_the_same_path(tmp_path, capsys):
    """The AllReduce's call made between a and b in one run, between b and c in the other:
    the old code ordered a process's launches by correlation id and said '12 launch orders
    changed', exit 1, on --check and diff --fail-if path_changed."""
    a = _two_threads(tmp_path / "a.sqlite", 1)
    b = _two_threads(tmp_path / "b.sqlite", 2)
    with tracelens.open(a) as trace:
        doc = tracelens.fingerprint(trace)
    (tmp_path / "a.json").write_text(fp.dumps(doc))
    rc, out, _ = run_cli(["fingerprint", b, "--check", tmp_path / "a.json"], capsys)
    assert rc == 0 and "follows a.json exactly" in out, out
    rc, out, _ = run_cli(["diff", a, b, "--fail-if", "path_changed"], capsys)
    assert rc == 0, out
    names = [v["name"] for v in doc["variants"]]
    sequences = {tuple(names[i] for i in e["sequence"]) for e in doc["paths"] if e["steps"]}
    # the busiest thread's launches first, then the other thread's
    assert sequences == {("a", "b", "c", ALLREDUCE)}


def test_a_change_on_one_thread_is_still_a_path_change(tmp_path, capsys):
    """Taken thread by thread, the compute thread's own order still counts: b and c swapped
    there fails the check."""
    a = _two_threads(tmp_path / "a.sqlite", 1)
    b = _two_threads(tmp_path / "b.sqlite", 2, compute=("a", "c", "b"))
    with tracelens.open(a) as trace:
        (tmp_path / "a.json").write_text(fp.dumps(tracelens.fingerprint(trace)))
    rc, out, _ = run_cli(["fingerprint", b, "--check", tmp_path / "a.json"], capsys)
    assert rc == 1 and "launch orders changed" in out, out


def _three_threads(path):
    """Process 10: thread 12's two calls first, then thread 10's six, thread 11's and 12's
    one more each (10 busiest; 11 and 12 tie at two, 11 first by id); process 20: one
    thread."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.process(20, "python serve.py")
    b.gpu(0)
    tids = [12, 12, 10, 10, 10, 10, 10, 10, 11, 11, 20, 20]
    for i, tid in enumerate(tids):
        tc = 1_000 * US + i * 50 * US
        pid = 20 if tid == 20 else 10
        cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=pid, tid=tid)
        b.kernel("void k(float*)", start=tc + 10 * US, end=tc + 20 * US, pid=pid, stream=7,
                 correlation_id=cid)  # fmt: skip
    return b.write(path)


def test_sqlite_keeps_the_same_calls_as_the_query(tmp_path):
    """Read directly, SQLite selects the calls beside each process's busiest thread
    (threads._export_thread_calls): the rows, ranks and order of
    queries/fingerprint_thread_calls.sql."""
    with tracelens.open(_three_threads(tmp_path / "t.sqlite"), cache=False) as trace:
        export = threads._export_thread_calls(trace)
        query = trace.query("fingerprint_thread_calls")
    assert export is not None and export.equals(query)
    assert export["thread"].to_list() == [2, 2, 1, 1]  # 12's calls first (lower ids), rank 2


def test_a_sample_that_misses_the_busiest_thread_reads_the_query(tmp_path, monkeypatch):
    """A sample of the first two calls (thread 12's) names 12 the busiest; the scan counts
    thread 10's six calls, more than the sample's two, so the query is read instead."""
    monkeypatch.setattr(threads, "_SAMPLE_WINDOWS", 1)
    monkeypatch.setattr(threads, "_SAMPLE_WIDTH", 2)
    with tracelens.open(_three_threads(tmp_path / "t.sqlite"), cache=False) as trace:
        assert threads._export_thread_calls(trace) is None
        assert threads.thread_calls(trace).equals(trace.query("fingerprint_thread_calls"))


def _ranks_with_threads(path, contexts: list[tuple[int, int]]):
    """Processes 10 (GPU 0) and 20 (GPU 1), each launching from a compute thread (its pid)
    and a second thread (pid + 1) whose calls interleave; ``contexts``: the (pid, device)
    CUDA contexts the export's context table lists."""
    from test_util_listed import add_context

    b = TraceBuilder("3.24.18")
    for pid in (10, 20):
        b.process(pid, f"python rank_{pid}.py")
    for device in (0, 1):
        b.gpu(device)
    for i, (pid, device) in enumerate(contexts):
        add_context(b, pid, device, i + 1)
    for device, pid in enumerate((10, 20)):
        for i in range(24):
            tid = pid + 1 if i % 5 == 2 else pid
            tc = 1_000 * US + i * 40 * US
            cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=pid, tid=tid)
            b.kernel(f"void k{i % 3}_{tid - pid}(float*)", start=tc + 20 * US,
                     end=tc + 30 * US, pid=pid, device=device, correlation_id=cid)  # fmt: skip
    return b.write(path)


def test_a_process_per_device_by_the_context_table_reads_no_process(tmp_path, monkeypatch):
    """The context table lists one process on each device: the launches are read without
    their globalPid, each takes its device's process (for its thread), and the document is
    the one read with them (each rank's second thread after its first). A device the table
    does not list: read again with them. (main read globalPid always.)"""
    units = importlib.import_module("tracelens.fingerprint.units")
    asked: list[bool] = []
    query = tracelens.Trace.query

    def recorded(self, name, **params):
        if name == "fingerprint_launches":
            asked.append(params["pids"])
        return query(self, name, **params)

    def document(path, device_pids=units._device_pids):
        asked.clear()
        monkeypatch.setattr(units, "_device_pids", device_pids)
        monkeypatch.setattr(tracelens.Trace, "query", recorded)
        try:
            with tracelens.open(path) as trace:
                return fp.dumps(tracelens.fingerprint(trace)), list(asked)
        finally:
            monkeypatch.undo()

    listed = _ranks_with_threads(tmp_path / "listed.sqlite", [(10, 0), (20, 1)])
    text, reads = document(listed)
    assert reads == [False]
    assert document(listed, lambda trace: None) == (text, [True])
    doc = fp.loads(text)
    names = [v["name"] for v in doc["variants"]]
    for entry in doc["paths"]:
        thread = [names[i].split("_")[1][0] for i in entry["sequence"]]
        assert thread == sorted(thread)  # the busiest thread's launches, then the other's
    partial = _ranks_with_threads(tmp_path / "partial.sqlite", [(10, 0)])
    assert document(partial) == (text, [False, True])
