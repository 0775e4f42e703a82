"""Golden CSVs for the queries that bound a timeline page and find the trace's origin."""

from __future__ import annotations

import pytest
from fixtures.builder import build_mixed

from queries.golden import assert_golden

NO_FILTER = {
    "device": None,
    "pid": None,
    "stream": None,
    "start_ns": None,
    "end_ns": None,
    "selection": None,
}


@pytest.fixture
def mixed(tmp_path):
    return build_mixed(tmp_path, "3.25.0").path


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("first_row", {**NO_FILTER, "api": False, "rows": 1}),
        ("tenth_row_with_api", {**NO_FILTER, "api": True, "rows": 10}),
        ("past_the_end", {**NO_FILTER, "api": False, "rows": 10_000}),
        # a page a million rows deep: no bound (DuckDB's min(x, n) takes n < 10^6; it
        # failed with 'n value must be < 1000000' here, and timeline --offset 1000000 too)
        ("a_million_rows_deep", {**NO_FILTER, "api": False, "rows": 1_000_000}),
        ("device_1", {**NO_FILTER, "device": 1, "api": False, "rows": 3}),
        (
            "window",
            {**NO_FILTER, "start_ns": 2_000_000, "end_ns": 3_000_000, "api": True, "rows": 2},
        ),
    ],
)
def test_timeline_page_bound(mixed, case, params):
    assert_golden(mixed, "timeline_page_bound", case, lambda t: t.load_nvtx_text(), **params)


def test_first_event(mixed):
    assert_golden(mixed, "_first_event", "mixed")
