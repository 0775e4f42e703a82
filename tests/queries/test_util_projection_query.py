"""Golden test of queries/util_projection.sql (util --nvtx's accounting interval): on
tests/test_utilthread_nvtx.py's sparse trace with a nested 'sel' range in each round, one
row per device and round (the nested range joins its parent's), from the first operation
launched in the range to the end of the last: device 0 k1's start to k2's end, device 1
k3's. The query is unordered (util_project merges the intervals): sorted here."""

from __future__ import annotations

import os

from test_utilthread_nvtx import _sparse

import tracelens
from queries.golden import GOLDEN
from tracelens.filters import glob_regex


def test_util_projection(tmp_path):
    path = tmp_path / "sparse.sqlite"
    _sparse(path, nested=True)
    params = dict.fromkeys(("device", "pid", "stream", "start_ns", "end_ns", "selection"))
    with tracelens.open(path, cache=False) as trace:
        trace.load_nvtx_text()
        rows = trace.query("util_projection", label_re=glob_regex("sel"), **params)
    actual = rows.sort("device", "start_ns").write_csv()
    expected = GOLDEN / "util_projection__sparse_nested.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected.write_text(actual)
    assert actual == expected.read_text()
