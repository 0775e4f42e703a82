"""Golden CSVs for the queries behind census, lineup, memory, stakeout and timeline, on the
fixture builder's realistic mix (tests/fixtures/builder.build_mixed: 2 processes, 2 GPUs,
3 streams, 6 kernel names, copies of 4 kinds, memsets, API calls, NVTX ranges)."""

from __future__ import annotations

import json

import pytest
from fixtures.builder import EVAL_PID, build_mixed

import tracelens
from queries.golden import assert_golden

NO_FILTER = {
    "device": None,
    "pid": None,
    "stream": None,
    "start_ns": None,
    "end_ns": None,
    "selection": None,
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return build_mixed(tmp_path_factory.mktemp("census_queries"), "3.25.0").path


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("demangled", {**NO_FILTER, "name_kind": "demangled", "by_launch_config": False}),
        ("short_by_config", {**NO_FILTER, "name_kind": "short", "by_launch_config": True}),
        (
            "mangled_device_1",
            {**NO_FILTER, "device": 1, "name_kind": "mangled", "by_launch_config": False},
        ),
    ],
)
def test_kernel_summary(mixed, case, params):
    assert_golden(mixed, "kernel_summary", case, **params)


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("all", {**NO_FILTER, "by": None, "name_kind": "short"}),
        ("by_pid", {**NO_FILTER, "by": "pid", "name_kind": "demangled"}),
        ("eval_by_stream", {**NO_FILTER, "pid": EVAL_PID, "by": "stream", "name_kind": "short"}),
    ],
)
def test_lineup_activities(mixed, case, params):
    assert_golden(mixed, "lineup_activities", case, **params)


@pytest.mark.parametrize("query", ["memory_time_summary", "memory_size_summary"])
def test_memory_summaries(mixed, query):
    assert_golden(mixed, query, "all", **NO_FILTER)
    assert_golden(mixed, query, "device_0", **{**NO_FILTER, "device": 0})


STAKEOUT = {"name_kind": "short", "origin_ns": 0}


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("contains_gemm", {"pattern": "gemm", "regex": None, "match": "contains"}),
        ("regex_case_blind", {"pattern": "FLASH", "regex": "(?i)flash", "match": "regex"}),
        ("exact_none", {"pattern": "gemm", "regex": None, "match": "exact"}),
    ],
)
def test_stakeout_queries(mixed, case, params):
    assert_golden(mixed, "stakeout_names", case, **params)
    assert_golden(mixed, "stakeout_name_ids", case, **params)
    assert_golden(
        mixed, "stakeout_launches", case, lambda t: t.load_nvtx_text(), **STAKEOUT, **params,
        **NO_FILTER,
    )  # fmt: skip


def test_stakeout_kernel_names(mixed):
    # the demangled names of the kernels stakeout_launches.sql matched, by their kernel_id;
    # an id StringIds lacks is named as such
    with tracelens.open(mixed) as trace:
        ids = trace.query(
            "stakeout_launches", **STAKEOUT, **NO_FILTER, pattern="gemm", regex=None,
            match="contains",
        )["kernel_id"].unique().sort().to_list()  # fmt: skip
    assert_golden(mixed, "stakeout_kernel_names", "gemm", ids=[*ids, 999_999])


def _stakeout_probes(trace):
    """The temp table stakeout_probes as tracelens.stakeout_calls fills it: the gemm
    launches' processes and correlation ids."""
    launches = trace.query(
        "stakeout_launches", **STAKEOUT, **NO_FILTER, pattern="gemm", regex=None, match="contains"
    )
    probes = launches.select("pid", "correlation_id").drop_nulls().unique(maintain_order=True)
    trace.db.register("_probes", probes.to_arrow())
    trace.db.execute("CREATE TEMP TABLE stakeout_probes AS SELECT * FROM _probes")
    return probes


def _stakeout_call_rows(trace):
    _stakeout_probes(trace)
    rows = trace.query("stakeout_call_rows")
    trace.db.register("_rows", rows.to_arrow())
    trace.db.execute("CREATE TEMP TABLE stakeout_call_rows AS SELECT * FROM _rows")


def test_stakeout_call_queries(mixed):
    # the candidate calls of the gemm launches, from the view and (the same calls, plus those
    # of other processes with the same correlation ids) by SQLite, then one per launch
    assert_golden(mixed, "stakeout_call_rows", "gemm", _stakeout_probes)
    with tracelens.open(mixed) as trace:
        ids = _stakeout_probes(trace)["correlation_id"].to_list()
    assert_golden(
        mixed, "stakeout_call_rows_export", "gemm", export_tables=True,
        correlation_ids=json.dumps(ids), low_rowid=0, high_rowid=2**62,
    )  # fmt: skip
    assert_golden(mixed, "stakeout_calls", "gemm", _stakeout_call_rows)


TIMELINE = {
    "origin_ns": 0,
    "name_kind": "short",
    "from_ns": None,
    "bound_ns": None,
    "edge_devices": None,
    "edge_busy": None,
    "edge_next": None,
    "offset": 0,
}


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("first_20_with_api", {**NO_FILTER, "api": True, "gap_ns": 100_000, "limit": 20}),
        ("device_1_all", {**NO_FILTER, "device": 1, "api": False, "gap_ns": 0, "limit": None}),
        (
            "window_offset",
            {
                **NO_FILTER,
                "start_ns": 2_000_000,
                "end_ns": 3_000_000,
                "api": False,
                "gap_ns": 50_000,
                "limit": 5,
                "offset": 3,
            },
        ),
        # a stretch as timeline_page_rows.sql places it: the kernel spanning from_ns and the
        # gaps whose busy time began before it are not rows here
        (
            "from_and_bound",
            {
                **NO_FILTER,
                "api": True,
                "gap_ns": 10_000,
                "from_ns": 2_100_000,
                "bound_ns": 2_999_999,
                "limit": 8,
                "offset": 1,
            },
        ),
    ],
)
def test_timeline_events(mixed, case, params):
    assert_golden(
        mixed,
        "timeline_events",
        case,
        lambda t: t.load_nvtx_text(),
        **{**TIMELINE, **params},
    )
