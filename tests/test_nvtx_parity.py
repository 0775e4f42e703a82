"""nvtx and api equal `nsys stats` 2022.4 on every shared trace that has the data, value
for value: nvtx_sum, nvtx_pushpop_sum, nvtx_startend_sum, nvtx_gpu_proj_trace and
cuda_api_sum against ../shared/traces/reference; nvtx_kern_sum and cuda_kern_exec_sum
against tests/reference_nsys (written by `nsys stats --report nvtxkernsum,kernexecsum
--format csv` 2022.4.2.1 on copies of the same traces; nsys prints NULL as 'None').

nsys orders ties arbitrarily (ORDER BY one column), so rows are compared as sorted lists.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from conftest import REFERENCE, needs_shared, shared_traces

import tracelens
from tracelens.api import api_summary, kernel_exec_summary
from tracelens.nvtx import gpu_projection, kernels_by_range, range_summary

NSYS_OUT = Path(__file__).parent / "reference_nsys"


def _stems(suffix: str, where: Path = REFERENCE) -> list[str]:
    return [p.stem for p in shared_traces() if (where / f"{p.stem}_{suffix}.csv").exists()]


def _reference(path: Path) -> list[tuple[str, ...]]:
    with open(path, newline="", encoding="utf-8") as f:
        return sorted(tuple(r) for r in list(csv.reader(f))[1:])


def _cell(value) -> str:
    if value is None:
        return "None"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _ours(df, columns=None) -> list[tuple[str, ...]]:
    rows = df.select(columns) if columns else df
    return sorted(tuple(_cell(v) for v in r) for r in rows.iter_rows())


SUMMARY = ["time_pct", "total_ns", "instances", "avg_ns", "med_ns", "min_ns", "max_ns"]
RANGE_SUMMARIES = {
    "nvtxsum": (None, [*SUMMARY, "stddev_ns", "style", "name"]),
    "nvtxppsum": ("pushpop", [*SUMMARY, "stddev_ns", "name"]),
    "nvtxsesum": ("startend", [*SUMMARY, "stddev_ns", "name"]),
}


@needs_shared
def test_the_nvtx_references_are_there():
    assert len(_stems("nvtxsum")) >= 4
    assert len(_stems("nvtxgpuproj")) >= 3
    assert len(_stems("cudaapisum")) >= 11
    assert len(_stems("nvtxkernsum", NSYS_OUT)) >= 3


@needs_shared
@pytest.mark.parametrize("report", sorted(RANGE_SUMMARIES))
@pytest.mark.parametrize("stem", _stems("nvtxsum"))
def test_range_summary_equals_nsys(stem, report, trace_copies):
    style, columns = RANGE_SUMMARIES[report]
    with tracelens.open(trace_copies[stem]) as trace:
        df = range_summary(trace, style=style)
    assert _ours(df, columns) == _reference(REFERENCE / f"{stem}_{report}.csv")


@needs_shared
@pytest.mark.parametrize("stem", _stems("cudaapisum"))
def test_api_summary_equals_nsys_cudaapisum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = api_summary(trace)
    assert _ours(df) == _reference(REFERENCE / f"{stem}_cudaapisum.csv")


PROJECTION = [
    "name", "proj_start_ns", "proj_duration_ns", "start_ns", "duration_ns", "style", "pid",
    "tid", "gpu_ops", "level", "children", "range_id", "parent_id", "stack",
]  # fmt: skip


@needs_shared
@pytest.mark.parametrize("stem", _stems("nvtxgpuproj"))
def test_gpu_projection_equals_nsys_nvtxgpuproj(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = gpu_projection(trace)
    assert _ours(df, PROJECTION) == _reference(REFERENCE / f"{stem}_nvtxgpuproj.csv")


@needs_shared
@pytest.mark.parametrize("stem", _stems("nvtxkernsum", NSYS_OUT))
def test_kernels_by_range_equals_nsys_nvtxkernsum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = kernels_by_range(trace)
    assert _ours(df) == _reference(NSYS_OUT / f"{stem}_nvtxkernsum.csv")


@needs_shared
@pytest.mark.parametrize("stem", _stems("kernexecsum", NSYS_OUT))
def test_kernel_exec_summary_equals_nsys_kernexecsum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = kernel_exec_summary(trace)
    assert _ours(df) == _reference(NSYS_OUT / f"{stem}_kernexecsum.csv")
