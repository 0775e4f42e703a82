"""findings' GPU rules under a work selection (--nvtx) with no util rule to run read the
selected work only to learn its (process, device) pairs: now one small query of the pairs
(queries/findings_selected_pairs.sql), and the only work read is the unselected work of
the span, whose rows are unchanged. Fixture: tests/test_utilthread_nvtx.py's sparse
ranges (as tests/test_findings_selection_device_work.py)."""

from __future__ import annotations

import pytest
from test_utilthread_nvtx import _sparse

import tracelens
from tracelens import util_read


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    path = tmp_path_factory.mktemp("sparse") / "sparse.sqlite"
    _sparse(path)
    return path


def test_gpu_rules_alone_read_no_selected_work(sparse, monkeypatch):
    with tracelens.open(sparse, cache=False) as trace:
        before = trace.findings(nvtx="sel", only=("gpu_low_util", "gpu_gaps"))
    reads = []
    real = util_read.read_work

    def counted(trace, where=None, **kw):
        reads.append(where.selection if where is not None else None)
        return real(trace, where, **kw)

    monkeypatch.setattr(util_read, "read_work", counted)
    monkeypatch.setattr("tracelens.util.read_work", counted, raising=False)
    with tracelens.open(sparse, cache=False) as trace:
        found = trace.findings(nvtx="sel", only=("gpu_low_util", "gpu_gaps"))
    assert reads == [None], reads  # the unselected work of the span, once
    for a, b in zip(before.results, found.results, strict=True):
        assert a.frame.equals(b.frame)
