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
    _check(_csv(run_trace, "fingerprint_nvtx_paths"), "fingerprint_nvtx_paths", "run")


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
