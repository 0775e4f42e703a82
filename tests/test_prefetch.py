"""The NVTX sweep's calls and operations read on a second database while the sweep goes on
(tracelens.trace.prefetch): the same output as reading them in turn, on every shared trace
with NVTX and CUDA data and on built ones; a read's error is the same error; a run that
fails before taking them stops the reads."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from conftest import has_cuda_work, needs_shared, run_cli, shared_traces

import tracelens
from tracelens import nvtx_sweep, nvtx_tree
from tracelens._engine import limits
from tracelens.synth import TraceBuilder
from tracelens.trace import prefetch

PID = 1000


def _nvtx_cuda_traces():
    found = []
    for path in shared_traces():
        con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        try:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        finally:
            con.close()
        if "NVTX_EVENTS" in names and "CUPTI_ACTIVITY_KIND_RUNTIME" in names:
            if has_cuda_work(path):
                found.append(path)
    return found


@pytest.fixture
def always(monkeypatch):
    """Prefetch whatever the trace's size; the Prefetch objects made, to check it ran."""
    made = []
    real = prefetch.Prefetch.__init__

    def init(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(prefetch, "MIN_CALLS", 0)
    monkeypatch.setattr(prefetch.Prefetch, "__init__", init)
    return made


def _never(monkeypatch):
    monkeypatch.setattr(prefetch.Prefetch, "worthwhile", staticmethod(lambda trace: False))


def _build(path, *, calls_damaged: bool = False):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    for step in range(4):
        t0 = 1_000_000 + step * 1_000_000
        b.nvtx_range(f"step {step}", start=t0, end=t0 + 900_000, pid=PID)
        b.nvtx_range("attention", start=t0 + 10_000, end=t0 + 400_000, pid=PID)
        for i, name in enumerate(("gemm_kernel", "softmax_kernel")):
            start = t0 + 20_000 + i * 300_000
            cid = b.runtime("cudaLaunchKernel_v7000", start=start, end=start + 5_000)
            b.kernel(name, start=start + 50_000, end=start + 250_000, pid=PID, correlation_id=cid)
    b.write(path)
    if calls_damaged:  # a wild time: 2^62 ns after the session start
        with sqlite3.connect(path) as db:
            db.execute(
                f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = {2**62} "
                "WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)"
            )
    return path


def _cli(args, capsys, monkeypatch, *, prefetched: bool):
    with monkeypatch.context() as m:
        if not prefetched:
            _never(m)
        return run_cli(args, capsys)


@needs_shared
@pytest.mark.parametrize("path", _nvtx_cuda_traces(), ids=lambda p: p.stem)
@pytest.mark.parametrize("option", ["--gpu", "--kernels"])
def test_shared_traces_same_output(path, option, capsys, monkeypatch, always):
    args = ["nvtx", path, option, "--format", "csv", "--no-cache"]
    before = _cli(args, capsys, monkeypatch, prefetched=False)
    assert not always
    after = _cli(args, capsys, monkeypatch, prefetched=True)
    assert len(always) == 1  # the sweep's reads were prefetched
    assert after == before
    assert before[0] == 0


def test_built_trace_same_projection_and_paths(tmp_path, capsys, monkeypatch, always):
    path = _build(tmp_path / "t.sqlite")
    runs = (["nvtx", path, "--gpu"], "attention"), (["nvtx", path, "--kernels"], "gemm")
    for args, shown in runs:
        before = _cli([*args, "--no-cache"], capsys, monkeypatch, prefetched=False)
        after = _cli([*args, "--no-cache"], capsys, monkeypatch, prefetched=True)
        assert after == before
        assert before[0] == 0 and shown in before[1]
    assert len(always) == 2


def test_damaged_calls_same_error(tmp_path, capsys, monkeypatch, always):
    path = _build(tmp_path / "t.sqlite", calls_damaged=True)
    args = ["nvtx", path, "--gpu", "--no-cache"]
    before = _cli(args, capsys, monkeypatch, prefetched=False)
    after = _cli(args, capsys, monkeypatch, prefetched=True)
    assert always
    assert after == before
    code, out, err = after
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "CUPTI_ACTIVITY_KIND_RUNTIME.start holds a time beyond 2^61 ns" in err


def test_failure_before_taking_stops_the_reads(tmp_path, monkeypatch, always):
    path = _build(tmp_path / "t.sqlite")

    def broken(*args, **kwargs):
        raise RuntimeError("the tree failed")

    monkeypatch.setattr(nvtx_tree, "build", broken)
    with tracelens.open(path, cache=False) as trace, pytest.raises(RuntimeError, match="tree"):
        tracelens.nvtx.build_sweep(trace)
    assert len(always) == 1
    assert not always[0]._thread.is_alive()  # closed: joined, nothing left running
    assert not always[0]._frames
    assert not any(t.name == "tracelens-prefetch" for t in threading.enumerate())


def test_not_for_one_thread_or_few_calls(tmp_path):
    path = _build(tmp_path / "t.sqlite")
    with tracelens.open(path, cache=False) as trace:
        assert not prefetch.Prefetch.worthwhile(trace)  # 8 calls < MIN_CALLS
    with limits(threads=1), tracelens.open(path, cache=False) as trace:
        assert nvtx_sweep.prefetch(trace, with_ops=False) is None


def test_not_for_one_thread_even_when_big(tmp_path, monkeypatch):
    monkeypatch.setattr(prefetch, "MIN_CALLS", 0)
    path = _build(tmp_path / "t.sqlite")
    with tracelens.open(path, cache=False) as trace:
        assert prefetch.Prefetch.worthwhile(trace)
    with limits(threads=1), tracelens.open(path, cache=False) as trace:
        assert not prefetch.Prefetch.worthwhile(trace)
