"""``tracelens.fingerprint`` takes a path as ``tracelens.diff`` does (review2: a path was an
AttributeError from inside the build), and anything else is one UsageError."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, XMMA_GEMM

import tracelens
from tracelens.synth import TraceBuilder


def _trace(path):
    b = TraceBuilder("3.0.0")
    b.process(7, "python run.py")
    b.gpu(0)
    t = 1_000_000
    for _ in range(4):
        for name in (XMMA_GEMM, FILL):
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=7)
            b.kernel(name, start=t + 10, end=t + 60, pid=7, correlation_id=c)
            t += 100
    return b.write(path)


def test_a_path_gives_the_open_traces_document(tmp_path):
    path = _trace(tmp_path / "run.sqlite")
    with tracelens.open(path) as trace:
        opened = tracelens.fingerprint.dumps(tracelens.fingerprint(trace))
    assert tracelens.fingerprint.dumps(tracelens.fingerprint(str(path))) == opened
    assert tracelens.fingerprint.dumps(tracelens.fingerprint(path)) == opened


def test_anything_else_is_a_usage_error():
    with pytest.raises(tracelens.UsageError) as raised:
        tracelens.fingerprint(3)
    assert str(raised.value) == "fingerprint takes an open trace or a path to one (got int)"
