"""Golden tests of the fingerprint queries: a run built by code (fixtures/fingerprint_runs:
2 steps x 2 layers, NVTX ranges, one layer with an extra merge kernel) and each query's
exact expected CSV. Nested columns (lists, structs) are written as DuckDB prints them."""

from __future__ import annotations

import importlib
import os

import pytest
from fixtures.fingerprint_runs import Run, build_run

import tracelens
from queries.golden import GOLDEN
from tracelens._resources import query

build_module = importlib.import_module("tracelens.fingerprint.build")


def _csv(trace, name: str, *, sort: bool = False, **params) -> str:
    """The query's result as CSV; ``sort`` for the view bodies, which have no order."""
    con = trace.db
    con.execute(f"CREATE OR REPLACE TEMP TABLE golden_result AS {query(name)}", params)
    cols = [r[0] for r in con.execute("DESCRIBE golden_result").fetchall()]
    casts = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in cols)
    order = " ORDER BY correlation_id::BIGINT, start::BIGINT" if sort else ""
    return con.execute(f"SELECT {casts} FROM golden_result{order}").pl().write_csv()


def _check(actual: str, name: str, case: str) -> None:
    expected_path = GOLDEN / f"{name}__{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    assert expected_path.exists(), f"no golden file {expected_path.name}; see queries/golden.py"
    assert actual == expected_path.read_text(), f"{name} [{case}] differs from its golden CSV"


@pytest.fixture
def run_trace(tmp_path):
    path = build_run(tmp_path / "run.sqlite", Run(steps=2, merge={(2, 1)}))
    with tracelens.open(path) as trace:
        yield trace


@pytest.mark.parametrize("all_strings", [True, False], ids=["all_strings", "kernel_names"])
def test_fingerprint_names(run_trace, all_strings):
    case = "all_strings" if all_strings else "kernel_names"
    _check(_csv(run_trace, "fingerprint_names", all_strings=all_strings), "fingerprint_names", case)


def test_fingerprint_nvtx_paths(run_trace):
    run_trace.load_nvtx_text()
    run_trace.db.execute("SET merge_join_threshold = 0")
    band = build_module._band_ns(run_trace.db)
    _check(_csv(run_trace, "fingerprint_nvtx_paths", band_ns=band), "fingerprint_nvtx_paths", "run")


def test_fingerprint_nvtx_paths_keep_to_the_launching_thread(tmp_path):
    """Ranges of another thread that enclose a call in time are not on its path."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.nvtx_range("mine", start=1_000, end=9_000, pid=77, tid=77)
    b.nvtx_range("other thread", start=500, end=10_000, pid=77, tid=78)
    cid = b.runtime("cudaLaunchKernel_v7000", start=2_000, end=2_010, pid=77, tid=77)
    b.kernel("k", start=3_000, end=3_100, pid=77, device=0, stream=7, correlation_id=cid)
    path = b.write(tmp_path / "threads.sqlite")
    with tracelens.open(path) as trace:
        trace.load_nvtx_text()
        trace.db.execute("SET merge_join_threshold = 0")
        rows = trace.sql(query("fingerprint_nvtx_paths"), band_ns=build_module._band_ns(trace.db))
    assert rows["ranges"].to_list() == [[{"label": "mine", "start": 1_000, "end": 9_000}]]


def test_fingerprint_nvtx_paths_plan_is_an_iejoin(tmp_path):
    """The two time inequalities (thread bands folded in) must plan as an IEJoin: any other
    plan compares every call with every range (minutes and GBs on real traces)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(3_000):
        tid = 77 + i % 4
        b.nvtx_range(f"op {i}", start=i * 1_000, end=i * 1_000 + 900, pid=77, tid=tid)
        cid = b.runtime(
            "cudaLaunchKernel_v7000", start=i * 1_000 + 10, end=i * 1_000 + 20, pid=77, tid=tid
        )
        b.kernel(
            "k",
            start=i * 1_000 + 30,
            end=i * 1_000 + 40,
            pid=77,
            device=0,
            stream=7,
            correlation_id=cid,
        )
    path = b.write(tmp_path / "many.sqlite")
    with tracelens.open(path) as trace:
        trace.load_nvtx_text()
        con = trace.db
        con.execute("SET merge_join_threshold = 0")
        sql = "EXPLAIN " + query("fingerprint_nvtx_paths")
        plan = con.execute(sql, {"band_ns": build_module._band_ns(con)}).fetchall()[0][1]
    assert "IE_JOIN" in plan


# Steps as trace.steps() gives them: the GPU and CPU span of each step_N range.
STEPS = [
    (0, 1, 1_000_006_000, 1_000_041_500, 1_000_000_000, 1_000_032_000),
    (0, 2, 1_000_058_000, 1_000_097_500, 1_000_052_000, 1_000_088_000),
]


def _inputs(trace, steps: bool) -> None:
    names = build_module._names(trace)
    build_module._create_inputs(trace, names.rows, STEPS if steps else [])


def test_fingerprint_launches(run_trace):
    _inputs(run_trace, steps=False)
    _check(_csv(run_trace, "fingerprint_launches", sort=True), "fingerprint_launches", "run")


def test_fingerprint_launch_steps(run_trace):
    _inputs(run_trace, steps=True)
    _check(
        _csv(run_trace, "fingerprint_launch_steps", sort=True), "fingerprint_launch_steps", "run"
    )


@pytest.mark.parametrize("steps", [False, True], ids=["no_steps", "steps"])
def test_fingerprint_units(run_trace, steps):
    _inputs(run_trace, steps)
    case = "steps" if steps else "no_steps"
    _check(_csv(run_trace, "fingerprint_units", block=3), "fingerprint_units", case)
