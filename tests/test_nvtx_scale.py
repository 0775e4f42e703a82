"""NVTX attribution scales: no query behind it plans a join that compares every range with
every call (nested-loop, piecewise-merge or blockwise nested-loop joins); the sweeps
are sorts, hash joins and ASOF joins. Wall-clock and memory figures live in bench/
(bench/make_nvtx.py builds the 5M-kernel and 10M-range exports)."""

from __future__ import annotations

import re

import pytest
from test_nvtx import build_shapes

import tracelens
from tracelens import _resources, nvtx, nvtx_held, nvtx_sweep, nvtx_tree
from tracelens.filters import glob_regex

# (A CROSS_PRODUCT does appear: with the one-row "latest NVTX timestamp" that open ranges
# end at.)
QUADRATIC = ("NESTED_LOOP_JOIN", "PIECEWISE_MERGE_JOIN", "BLOCKWISE_NL_JOIN")


def _operators(con, sql: str, params=None) -> set[str]:
    plan = "".join(row[1] for row in con.execute("EXPLAIN " + sql, params or {}).fetchall())
    return set(re.findall(r"[A-Z][A-Z_]{3,}", plan))


CREATES = ("CREATE OR REPLACE TEMP TABLE", "CREATE OR REPLACE TEMP VIEW")


def _select(name: str) -> str:
    """The SELECT of a CREATE TABLE/VIEW ... AS query file (or the file, when it is a
    SELECT)."""
    text = _resources.query(name)
    create = next((c for c in CREATES if c in text), None)
    if create is None:
        return text
    return text[text.index(" AS\n", text.index(create)) + 4 :]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return build_shapes(tmp_path_factory.mktemp("scale") / "shapes.sqlite")


# The SQL steps of nvtx.build_sweep and build_projection, in order: each query's plan is
# read with the tables of the steps before it built (the calls' sweep in polars,
# nvtx_sweep.attribute, runs where "_nvtx_marks" stands).
STEPS = (
    "_nvtx_tree", "_nvtx_calls", "_nvtx_marks", "_nvtx_overlapping_threads", "_nvtx_op_spans",
    "_nvtx_op_ranges", "_nvtx_overlap_holders", "_nvtx_held", "_nvtx_held_names", "_nvtx_projection",
)  # fmt: skip
CHUNKED = ("_nvtx_marks",)
SELECTS = (
    "_nvtx_calls", "_nvtx_marks", "_nvtx_overlapping_threads", "_nvtx_op_spans", "_nvtx_op_ranges"
)  # fmt: skip
EVERY_THREAD = {"from_tid": None, "to_tid": None, "null_tid": True}


def _build_before(trace, query: str) -> None:
    con = trace.db
    trace.load_nvtx_spans()
    for step in STEPS[: STEPS.index(query)] if query in STEPS else STEPS:
        if step == "_nvtx_tree":
            nvtx_tree.build(trace, [EVERY_THREAD])
            continue
        if step == "_nvtx_marks":
            nvtx_sweep.attribute(trace, [EVERY_THREAD])
            continue
        if step in SELECTS:
            continue
        if step == "_nvtx_held":
            nvtx_held.register_held(con)
        if step == "_nvtx_held_names":
            nvtx._build_paths(trace)  # nvtx_paths, from the names this selects
            nvtx_held.register_totals(con)  # nvtx_held_totals, which the projection reads
            continue
        con.execute(_resources.query(step))
        if step == "_nvtx_held":
            trace.load_nvtx_held_text()


@pytest.mark.parametrize("query", [*STEPS, "nvtx_selected_work"])
def test_no_quadratic_join_in_the_plan(shapes, query):
    with tracelens.open(shapes) as t:
        t.load_nvtx_text()
        con = t.db
        # Plan as for real sizes: DuckDB runs joins of a few rows as nested loops
        # (asof_loop_join_threshold 64, merge_join_threshold 1000, nested_loop 5).
        for setting in ("asof_loop_join", "merge_join", "nested_loop_join"):
            con.execute(f"SET {setting}_threshold = 0")
        _build_before(t, query)
        if query == "_nvtx_tree":
            spans = con.execute(_resources.query("_nvtx_chunk_spans"), EVERY_THREAD).pl()
            con.register("nvtx_depths", nvtx_tree.depths(spans))
        if query == "_nvtx_held":
            nvtx_held.register_held(con)
        if query in CHUNKED:
            ops = _operators(con, _select(query), EVERY_THREAD)
        elif query.startswith("_"):
            ops = _operators(con, _select(query))
        else:
            ops = _operators(con, _resources.query(query), {"label_re": glob_regex("*")})
    assert ops, query
    assert not ops & set(QUADRATIC), f"{query} plans {sorted(ops & set(QUADRATIC))}"
