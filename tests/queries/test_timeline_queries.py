"""Golden CSVs for the query that places a timeline page and find the trace's origin."""

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


PAGE = {"api": False, "gap_ns": 100_000, "bin_ns": 1_000_000, "offset": 0}


@pytest.mark.parametrize(
    ("case", "params"),
    [
        ("first_row", {**NO_FILTER, **PAGE, "rows": 1}),
        ("tenth_row_with_api", {**NO_FILTER, **PAGE, "api": True, "rows": 10}),
        ("past_the_end", {**NO_FILTER, **PAGE, "offset": 10_000, "rows": 10_010}),
        # a page a million rows deep: bounds from counts, no top-N (DuckDB's min(x, n) took
        # n < 10^6 only, so the old bound query gave none)
        ("a_million_rows_deep", {**NO_FILTER, **PAGE, "offset": 999_990, "rows": 1_000_000}),
        # bins of 1 us: the page starts and ends mid-trace, with rows before it
        ("deep_in_narrow_bins", {**NO_FILTER, **PAGE, "bin_ns": 1_000, "offset": 7, "rows": 9}),
        ("every_gap", {**NO_FILTER, **PAGE, "gap_ns": 0, "offset": 12, "rows": 14}),
        ("device_1", {**NO_FILTER, **PAGE, "device": 1, "offset": 2, "rows": 3}),
        ("no_rows", {**NO_FILTER, **PAGE, "start_ns": 10**12, "rows": 5}),
        (
            "window",
            {
                **NO_FILTER,
                **PAGE,
                "start_ns": 2_000_000,
                "end_ns": 3_000_000,
                "api": True,
                "bin_ns": 100_000,
                "offset": 3,
                "rows": 5,
            },
        ),  # fmt: skip
    ],
)
def test_timeline_page_rows(mixed, case, params):
    assert_golden(mixed, "timeline_page_rows", case, lambda t: t.load_nvtx_text(), **params)


@pytest.mark.parametrize(
    ("offset", "rows", "bin_ns"),
    [(0, 1, 1_000_000), (0, 30, 1_000_000), (7, 9, 1_000), (12, 14, 1), (70, 80, 1_000)],
)
def test_page_edges_stand_for_the_rows_outside_the_stretch(mixed, offset, rows, bin_ns):
    # timeline_events.sql given the edges reads only the stretch's GPU rows; its page must be
    # the one it finds reading every row (which it does when the edges are NULL)
    import tracelens
    from tracelens.trace import list_param

    with tracelens.open(mixed) as t:
        t.load_nvtx_text()
        place = {**NO_FILTER, **PAGE, "bin_ns": bin_ns, "gap_ns": 10_000, "offset": offset}
        _events, _total, from_ns, before, bound_ns, *edges, _gpu_events = t.query_rows(
            "timeline_page_rows", **{**place, "rows": rows}
        ).data[0]
        assert edges[0] is not None and len(set(map(len, edges))) == 1
        page = {**NO_FILTER, "api": True, "gap_ns": 10_000, "origin_ns": 0, "name_kind": "short"}
        page.update(limit=rows - offset, offset=offset - before, from_ns=from_ns, bound_ns=bound_ns)
        names = ("edge_devices", "edge_busy", "edge_next")
        read_all = t.query("timeline_events", **page, **dict.fromkeys(names)).rows()
        with_edges = t.query(
            "timeline_events", **page, **dict(zip(names, map(list_param, edges), strict=True))
        ).rows()
    assert with_edges == read_all and read_all


def test_first_event(mixed):
    assert_golden(mixed, "_first_event", "mixed")
