"""The line a tripped ``--fail-if`` gate prints, one formatter for every command
(cli/_gates.gate_value): an integral figure exactly as an integer (a count of 12345 steps
was ``1.234e+04`` in a CI log), any other to 4 significant digits; the path gates of
``diff`` with a fingerprint print theirs the same way."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import run_cli
from fixtures.builder import XMMA_GEMM

import tracelens
from tracelens import fingerprint as fp
from tracelens.cli._gates import gate_value
from tracelens.demo import demo_path
from tracelens.synth import TraceBuilder

PID = 4242
US = 1_000


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (12345, "12345"),
        (12345.0, "12345"),
        (2.0, "2"),
        (0.0, "0"),
        (2**60 + 1, "1152921504606846977"),  # an int is not rounded through a float
        (0.12345, "0.1235"),
        (1.87, "1.87"),
        (123456.7, "1.235e+05"),  # not integral: 4 significant digits, as before
        (float("inf"), "inf"),
    ],
)
def test_gate_value(value, shown):
    assert gate_value(value) == shown


def _many_steps(path, count: int):
    """``count`` ProfilerStep ranges of one 10 us kernel each, 30 us apart."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000 * US
    for i in range(1, count + 1):
        b.nvtx_range(f"ProfilerStep#{i}", start=t, end=t + 20 * US, pid=PID)
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 1 * US, end=t + 2 * US, pid=PID)
        b.kernel(XMMA_GEMM, start=t + 5 * US, end=t + 15 * US, pid=PID, correlation_id=cid)
        t += 30 * US
    b.write(path)
    return path


def test_a_count_of_ten_thousand_or_more_is_printed_whole(tmp_path, capsys):
    path = _many_steps(tmp_path / "many.sqlite", 12345)
    rc, out, err = run_cli(["steps", path, "--kernels", "0", "--fail-if", "steps>10000"], capsys)
    assert rc == 1 and "12,345 steps from 12,345 NVTX ranges" in out
    assert err == "tracelens: gate tripped: steps>10000 (steps = 12345)\n"


def test_the_path_gate_line(tmp_path, capsys):
    base = tmp_path / "bs1.json"
    with tracelens.open(demo_path("bs1")) as trace:
        base.write_text(fp.dumps(tracelens.fingerprint(trace)))
    args = ["diff", base, demo_path("bs16"), "--fail-if", "variant_changed"]
    rc, _out, err = run_cli(args, capsys)
    assert (rc, err) == (1, "tracelens: gate tripped: variant_changed>0 (variant_changed = 677)\n")


def test_a_path_figure_of_a_million_is_printed_whole(tmp_path, capsys, monkeypatch):
    """The path gates print through the same formatter: a figure no small fixture reaches
    (a million launches moved; ``:g`` printed 1.23457e+06), set on a real comparison."""
    from tracelens.fingerprint import sources

    real = sources.path_diff

    def moved(a, b):
        diff = real(a, b)
        return dataclasses.replace(diff, figures={**diff.figures, "launches_moved": 1234567})

    monkeypatch.setattr(sources, "path_diff", moved)
    base = tmp_path / "bs1.json"
    with tracelens.open(demo_path("bs1")) as trace:
        base.write_text(fp.dumps(tracelens.fingerprint(trace)))
    rc, _out, err = run_cli(
        ["diff", base, demo_path("bs16"), "--fail-if", "launches_moved"], capsys
    )
    assert (rc, err) == (
        1,
        "tracelens: gate tripped: launches_moved>0 (launches_moved = 1234567)\n",
    )


def test_a_path_gate_that_cannot_be_read_prints_no_board(tmp_path, capsys):
    """As every command: a bad --fail-if is one error line and exit 2, before any output
    (the path board was printed first, then the error)."""
    base = tmp_path / "bs1.json"
    with tracelens.open(demo_path("bs1")) as trace:
        base.write_text(fp.dumps(tracelens.fingerprint(trace)))
    rc, out, err = run_cli(["diff", base, demo_path("bs16"), "--fail-if", "no_such>1"], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith("tracelens: ") and err.count("\n") == 1
    assert "unknown figure 'no_such'" in err
