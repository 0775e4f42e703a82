"""The big reads that come in any order (``Trace.query(..., any_order=True)``: util's GPU work and API
calls, the step search's launches, the fingerprint's launches, the diff's and the report's
work) give the same answers however their rows come: each such read is shuffled here, several
ways, and every command that reads them must print what it prints with the rows in the
order DuckDB gave them."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import tracelens
from tracelens.cli import app
from tracelens.demo import demo_path
from tracelens.trace.core import Trace

SHARED = Path(os.environ.get("TRACELENS_SHARED", Path(__file__).parents[2] / "shared"))
TRACES = SHARED / "traces"

#: Shared exports with what makes order matter: several processes and devices, CUDA graphs,
#: NVTX-attributed launches, many streams.
SHARED_TRACES = (
    "nsys2025.5_balinski_2gpu.sqlite",
    "nsys2024.6_a100_2.7B_cudagraph.sqlite",
    "nsys2022.4_gaussian_7gpu.sqlite",
    "nsys2024.6_a100_2.7B_nvtx.sqlite",
)

COMMANDS = (
    ("util", "--format", "csv"),
    ("findings", "--format", "csv"),
    ("steps", "--format", "csv"),
    ("fingerprint",),
)


@pytest.fixture(autouse=True)
def _read_directly(monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _shuffling(monkeypatch, seed: int) -> list[str]:
    """Shuffle every unordered read from now on; the names of the queries read so."""
    read = Trace.query
    names: list[str] = []

    def shuffled(self, name, *, any_order=False, **params):
        frame = read(self, name, any_order=any_order, **params)
        if not any_order:
            return frame
        names.append(name)
        return frame.sample(fraction=1.0, shuffle=True, seed=seed) if frame.height else frame

    monkeypatch.setattr(Trace, "query", shuffled)
    return names


def _outputs(paths: list[str]) -> dict[tuple, str]:
    out = {}
    for path in paths:
        for command in COMMANDS:
            out[(path, *command)] = _run([command[0], path, *command[1:]])
    return out


@pytest.fixture(scope="module")
def demo_traces() -> list[str]:
    return [str(demo_path("bs1")), str(demo_path("bs16"))]


@pytest.mark.parametrize("seed", [0, 1])
def test_demo_commands_do_not_depend_on_read_order(demo_traces, seed, monkeypatch):
    expected = _outputs(demo_traces)
    expected["diff"] = _run(["diff", *demo_traces, "--format", "json"])
    names = _shuffling(monkeypatch, seed)
    got = _outputs(demo_traces)
    got["diff"] = _run(["diff", *demo_traces, "--format", "json"])
    assert {"util_work", "util_calls", "fingerprint_launches"} <= set(names)
    assert "work_in_order" in names
    for key, text in expected.items():
        assert got[key] == text, key


@pytest.mark.parametrize("name", SHARED_TRACES)
def test_shared_traces_do_not_depend_on_read_order(name, monkeypatch):
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"{path} is absent (set TRACELENS_SHARED to the shared directory)")
    expected = _outputs([str(path)])
    names = _shuffling(monkeypatch, 7)
    assert _outputs([str(path)]) == expected
    if "nvtx" not in name:  # steps from the period of the launch sequence
        assert "steps_launch_rows" in names


def test_the_unordered_read_holds_the_ordered_reads_rows(demo_traces):
    # bound parameters go in as DuckDB variables and are gone after the read
    with tracelens.open(demo_traces[0], cache=False) as t:
        params = dict(device=0, pid=None, stream=None, start_ns=None, end_ns=None)
        params |= dict(selection=None, context=True)
        ordered = t.query("util_work", **params)
        unordered = t.query("util_work", any_order=True, **params)
        assert unordered.schema == ordered.schema
        assert sorted(unordered.rows(), key=repr) == sorted(ordered.rows(), key=repr)
        assert ordered.height and set(ordered["device"]) == {0}
        variables = "SELECT count(*) FROM duckdb_variables() WHERE name LIKE 'tracelens_param_%'"
        left = t.db.execute(variables).fetchone()[0]
        assert left == 0


def test_a_string_parameter_is_bound_not_pasted(demo_traces):
    with tracelens.open(demo_traces[0], cache=False) as t:
        calls = t.query("util_calls", any_order=True, sync_regex="cuda'Synchronize.*")
        assert calls.height and not calls["sync"].any()
        calls = t.query("util_calls", any_order=True, sync_regex="cuda.*Synchronize")
        assert (
            calls["sync"].sum()
            == pl.Series(t.query("util_calls", sync_regex="cuda.*Synchronize")["sync"]).sum()
        )
