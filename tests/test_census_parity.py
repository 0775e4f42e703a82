"""census equals `nsys stats` (2022.4) on every real trace with kernels, value for value,
and equals an independent computation in plain SQLite."""

from __future__ import annotations

import csv
import math
import sqlite3
import statistics

import pytest
from conftest import REFERENCE, needs_shared, shared_traces

import tracelens

KERNEL_TRACES = [
    p.stem for p in shared_traces() if (REFERENCE / f"{p.stem}_gpukernsum.csv").exists()
]


def _reference_rows(stem: str) -> list[dict[str, str]]:
    with open(REFERENCE / f"{stem}_gpukernsum.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@needs_shared
def test_every_trace_with_kernels_has_a_reference():
    assert len(KERNEL_TRACES) >= 7, KERNEL_TRACES


@needs_shared
@pytest.mark.parametrize("stem", KERNEL_TRACES)
def test_by_launch_config_equals_nsys_gpukernsum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = trace.census(by_launch_config=True)
    ours = [
        (
            f"{r['time_pct']:.1f}",
            str(r["total_ns"]),
            str(r["instances"]),
            f"{r['avg_ns']:.1f}",
            f"{r['med_ns']:.1f}",
            str(r["min_ns"]),
            str(r["max_ns"]),
            f"{r['stddev_ns']:.1f}",
            # nsys prints GridXYZ/BlockXYZ as '%4d %4d %4d'; the data carry the integers
            "{:4d} {:4d} {:4d}".format(r["grid_x"], r["grid_y"], r["grid_z"]),
            "{:4d} {:4d} {:4d}".format(r["block_x"], r["block_y"], r["block_z"]),
            r["name"],
        )
        for r in df.iter_rows(named=True)
    ]
    ref = [
        (
            r["Time (%)"],
            r["Total Time (ns)"],
            r["Instances"],
            r["Avg (ns)"],
            r["Med (ns)"],
            r["Min (ns)"],
            r["Max (ns)"],
            r["StdDev (ns)"],
            r["GridXYZ"],
            r["BlockXYZ"],
            r["Name"],
        )
        for r in _reference_rows(stem)
    ]
    # nsys leaves the order of equal totals unspecified; compare as sets when totals tie.
    assert sorted(ours) == sorted(ref)
    assert [o[1] for o in ours] == [r[1] for r in ref]


def _round1(x: float) -> float:
    """Round half away from zero to 0.1, as SQLite's ROUND (and nsys) do."""
    return math.copysign(math.floor(abs(x) * 10 + 0.5) / 10, x)


def _plain_sqlite_census(path) -> list[tuple]:
    """The same numbers computed with Python's sqlite3 and statistics, no DuckDB."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "backslashreplace")
    rows = con.execute(
        "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName"
    ).fetchall()
    con.close()
    by_name: dict[str, list[int]] = {}
    for name, dur in rows:
        by_name.setdefault(name, []).append(dur)
    grand = sum(sum(v) for v in by_name.values())
    out = []
    for name, durs in by_name.items():
        total = sum(durs)
        sd = statistics.stdev(durs) if len(durs) > 1 else 0.0
        out.append(
            (
                name,
                total,
                len(durs),
                _round1(total / len(durs)),
                _round1(statistics.median(durs)),
                min(durs),
                max(durs),
                _round1(sd),
                _round1(total * 100 / grand),
            )
        )
    return sorted(out)


@needs_shared
@pytest.mark.parametrize("stem", KERNEL_TRACES)
def test_census_equals_plain_sqlite(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = trace.census()
    ours = sorted(
        (
            r["name"],
            r["total_ns"],
            r["instances"],
            r["avg_ns"],
            r["med_ns"],
            r["min_ns"],
            r["max_ns"],
            r["stddev_ns"],
            r["time_pct"],
        )
        for r in df.iter_rows(named=True)
    )
    expected = _plain_sqlite_census(trace_copies[stem])
    assert ours == expected


@needs_shared
def test_census_orders_by_total_and_top_keeps_shares(trace_copies):
    with tracelens.open(trace_copies["nsys2025.5_balinski_2gpu"]) as trace:
        full = trace.census()
        top3 = trace.census(top=3)
    totals = full["total_ns"].to_list()
    assert totals == sorted(totals, reverse=True)
    assert top3.height == 3
    assert top3["time_pct"].to_list() == full["time_pct"].to_list()[:3]
