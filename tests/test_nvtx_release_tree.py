"""``nvtx --gpu`` (``nvtx_report`` with ``gpu``) frees the ranges' tree once the held ranges
are found (it is most of the memory of a 10M-range export's projection); whatever reads the
tree afterwards on the same trace (kernels by range, the operations' paths, the
fingerprint, the projection again) gets what it gets on a trace that never freed it."""

from __future__ import annotations

import pytest
from test_nvtx import build_shapes

import tracelens
from tracelens import fingerprint, nvtx


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return build_shapes(tmp_path_factory.mktemp("release") / "shapes.sqlite")


def _has_tree(trace) -> bool:
    sql = "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'nvtx_tree'"
    return bool(trace.db.execute(sql).fetchone()[0])


def _after_release(trace):
    return {
        "kernels": nvtx.kernels_by_range(trace, group="path"),
        "op_paths": nvtx.op_paths(trace).sort("globalPid", "correlationId", "kind", "start"),
        "each": nvtx.gpu_projection(trace).sort("range_id"),
        "fingerprint": fingerprint.dumps(fingerprint.build(trace)),
    }


@pytest.mark.parametrize("each", [False, True])
def test_gpu_report_frees_the_tree_and_later_readers_rebuild_it(shapes, each):
    with tracelens.open(shapes, cache=False) as fresh:
        expected = _after_release(fresh)
        summary = nvtx.gpu_summary(fresh)
        assert _has_tree(fresh)  # kept by default
    with tracelens.open(shapes, cache=False) as trace:
        report = nvtx.nvtx_report(trace, gpu=True, each=each)
        assert not _has_tree(trace)
        if not each:
            assert report.frame.equals(summary)
        got = _after_release(trace)
        assert _has_tree(trace)
    for key, value in expected.items():
        if key == "fingerprint":
            assert got[key] == value
        else:
            assert got[key].equals(value), key


def test_the_projection_alone_reads_no_tree(shapes):
    with tracelens.open(shapes, cache=False) as trace:
        first = nvtx.gpu_summary(trace, group="path", keep_tree=False)
        assert not _has_tree(trace)
        assert nvtx.gpu_summary(trace, group="path").equals(first)
        assert not _has_tree(trace)  # the projection is built: nothing rebuilds the tree
