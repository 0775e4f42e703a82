"""api --osrt equals `nsys stats --report osrtsum` 2022.4 value for value on every shared
trace that has OS runtime data (../shared/traces/reference/*_osrtsum.csv, written by nsys,
not by us), read directly and from the columnar cache alike; the shared traces without
OSRT_API are refused with exit 3.

nsys orders ties arbitrarily (ORDER BY one column), so rows are compared as sorted lists,
as tests/test_nvtx_parity.py compares cudaapisum."""

from __future__ import annotations

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces
from test_nvtx_parity import _ours, _reference, _stems

import tracelens
from tracelens.api import osrt_summary

WITH_OSRT = _stems("osrtsum")
WITHOUT_OSRT = [p.stem for p in shared_traces() if p.stem not in WITH_OSRT]


@needs_shared
def test_the_osrt_references_are_there():
    assert WITH_OSRT == [
        "nsys2022.4_gaussian_7gpu", "nsys2023.3_nussinov_mig", "nsys2024.6_a100_2.7B_cudagraph",
        "nsys2024.6_a100_2.7B_nvtx", "nsys2025.5_balinski_2gpu",
    ]  # fmt: skip


@needs_shared
@pytest.mark.parametrize("stem", WITH_OSRT)
def test_osrt_summary_equals_nsys_osrtsum(stem, trace_copies):
    expected = _reference(REFERENCE / f"{stem}_osrtsum.csv")
    with tracelens.open(trace_copies[stem], cache=False) as trace:
        assert _ours(osrt_summary(trace)) == expected
        # the processes' rows add up to the whole: --pid keeps each call of its process
        pids = [row[0] for row in trace.query_rows("osrt_processes").data]
        calls = sum(osrt_summary(trace, pid=p)["calls"].sum() for p in pids)
    assert calls == sum(int(row[2]) for row in expected)


@needs_shared
@pytest.mark.parametrize("stem", WITH_OSRT)
def test_the_cached_osrt_summary_equals_nsys_osrtsum(stem, trace_copies, cache_dir):
    for _run in ("builds the entry", "reads it"):
        with tracelens.open(trace_copies[stem]) as trace:
            assert _ours(trace.api(osrt=True)) == _reference(REFERENCE / f"{stem}_osrtsum.csv")
            assert trace.parquet_dir is not None


@needs_shared
@pytest.mark.parametrize("stem", WITHOUT_OSRT)
def test_a_shared_trace_without_osrt_is_refused(stem, trace_copies, capsys):
    path = trace_copies[stem]
    assert run_cli(["api", path, "--osrt"], capsys) == (3, "", (
        f"tracelens: {path}: no OS runtime API data (OSRT_API): capture it with nsys profile "
        "-t osrt (e.g. -t cuda,nvtx,osrt)\n"
    ))  # fmt: skip
