"""Adversarial review of `tracelens findings`: threshold overrides that are numbers but not
usable ones (nan, inf, a float too large for an int64 of ns, a fractional chunk count). Each
must be one clear line and a non-zero exit, never an internal error or a silently different
threshold."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import XMMA_GEMM

import tracelens
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder

PID = 4242
MS = 1_000_000


@pytest.fixture(scope="module")
def gapped(tmp_path_factory):
    """One device: two kernels 600 ms apart, so gpu_gaps (500 ms) finds one gap."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for start in (1_000, 1_000 + 600 * MS):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 100, end=start - 95, pid=PID)
        b.kernel(XMMA_GEMM, start=start, end=start + 1_000, pid=PID, correlation_id=cid)
    return b.write(tmp_path_factory.mktemp("advutil") / "gapped.sqlite")


@pytest.mark.parametrize(
    "given, value",
    [
        ("gpu_gaps.gap_ms=nan", "nan"),
        ("gpu_gaps.gap_ms=inf", "inf"),
        ("gpu_gaps.gap_ms=1e400", "1e400"),  # float() makes it inf
        ("gpu_low_util.chunks=nan", "nan"),
        ("gpu_low_util.threshold_pct=nan", "nan"),  # was: silently nothing found
        ("exposed_communication.min_share=-inf", "-inf"),
    ],
)
def test_a_threshold_that_is_not_finite_is_one_line(gapped, capsys, given, value):
    """nan and inf parse as floats: gap_ms=nan was 'internal error: ValueError: cannot
    convert float NaN to integer' (exit 70), threshold_pct=nan flagged nothing."""
    rc, out, err = run_cli(["findings", gapped, "--threshold", given], capsys)
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: --threshold {given!r}: {value!r} is not a finite number\n",
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_the_library_refuses_a_threshold_that_is_not_finite(gapped, value):
    with tracelens.open(gapped) as trace, pytest.raises(UsageError) as exc:
        trace.findings(thresholds={("gpu_gaps", "gap_ms"): value})
    assert (
        str(exc.value) == f"threshold ('gpu_gaps', 'gap_ms') takes a finite number, not {value!r}"
    )


def test_a_gap_threshold_longer_than_any_gap_finds_nothing(gapped, capsys):
    """1e300 ms is a finite number no gap reaches: it was 'internal error:
    InvalidOperationError: integer too large for Polars' (exit 70)."""
    rc, out, err = run_cli(
        ["findings", gapped, "--rule", "gpu_gaps", "--threshold", "gpu_gaps.gap_ms=1e300"], capsys
    )
    assert (rc, err) == (0, "")
    assert "gpu_gaps [nsys gpu-starv]: nothing found" in out
    rc, out, _ = run_cli(["findings", gapped, "--rule", "gpu_gaps"], capsys)
    assert rc == 0 and "1 found" in out  # the gap is there at the default


@pytest.mark.parametrize("value", ["2.5", "0.5", "1000.5"])
def test_a_chunk_count_that_is_not_whole_is_refused(gapped, capsys, value):
    """chunks=2.5 ran with 2 chunks, and chunks=0.5 said '(got 0)', a value not given."""
    rc, out, err = run_cli(
        ["findings", gapped, "--threshold", f"gpu_low_util.chunks={value}"], capsys
    )
    assert (rc, out, err) == (
        2,
        "",
        f"tracelens: gpu_low_util.chunks must be a whole number between 1 and 1000 (got {value})\n",
    )
