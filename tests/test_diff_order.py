"""diff of two runs that launch the same kernels as often, in another order: the path clue
says so (launch_order_changed), not "other kernels ran: a library chose another algorithm";
a kernel swapped or called more often is still that."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.compare import diff
from tracelens.synth import TraceBuilder

US = 1000
PATH_CLUES = {"launch_order_changed", "same_count_different_path", "launch_sequence_diverges"}


def build(path, order, *, steps=6, durs=None):
    """``steps`` repeats of kernels ``kern_i`` in ``order`` (grid i + 1, 10 + 7i µs per call
    unless ``durs`` says), each step closed by a device-to-device copy."""
    b = TraceBuilder("3.25.0")
    b.process(100, "python p.py")
    b.gpu(0)
    t = 1_000_000
    for _ in range(steps):
        for i in order:
            call = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
            d = (durs or {}).get(i, 10 * US + 7 * i * US)
            b.kernel(
                f"kern_{i}(float*)",
                start=t + 5 * US,
                end=t + 5 * US + d,
                correlation_id=call,
                grid=(i + 1, 1, 1),
            )
            t += d + 10 * US
        call = b.runtime("cudaMemcpyAsync_v3020", start=t, end=t + 2 * US)
        b.memcpy("DtoD", 1 << 20, start=t + 3 * US, end=t + 8 * US, correlation_id=call)
        t += 20 * US
    b.write(str(path))
    return path


def _diff(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def _path_clue(d):
    (clue,) = [c for c in d.clues if c.id in PATH_CLUES]
    return clue


def test_the_same_kernels_in_reverse_order_per_step(tmp_path):
    """The reviewer's pair: six kernels, same calls, grids and per-call times, reversed."""
    a = build(tmp_path / "r1.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "r2.sqlite", [5, 4, 3, 2, 1, 0])
    d = _diff(a, b)
    clue = _path_clue(d)
    assert clue.id == "launch_order_changed"
    assert clue.clue == "same kernels as often, in another order"
    assert clue.evidence == (
        "first divergence at launch #1 (step 1 of A) on device 0 (kern_0 in A, kern_5 in B); 7 of 36 "
        "launches match in order; every step launches the same kernels as often (6 launches "
        "per step), in another order"
    )
    assert clue.verdict.startswith("the same work issued in another order: no kernel was added")
    assert clue.impact_ns == 0
    assert not {"new_kernels", "vanished_kernels", "variant_swap", "calls_per_step"} & {
        c.id for c in d.clues
    }


def test_the_board_no_longer_claims_other_kernels_ran(tmp_path, capsys):
    a = build(tmp_path / "r1.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "r2.sqlite", [5, 4, 3, 2, 1, 0])
    rc, out, err = run_cli(["diff", str(a), str(b)], capsys)
    assert (rc, err) == (0, "")
    assert "same kernels as often, in another order" in out
    assert "other kernels ran" not in out and "different kernels" not in out


def test_without_steps_the_whole_capture_is_compared(tmp_path):
    """One pass only (no repeating step): every kernel as many launches in the capture."""
    a = build(tmp_path / "a.sqlite", [0, 1, 2, 3, 4, 5, 0, 2], steps=1)
    b = build(tmp_path / "b.sqlite", [2, 0, 5, 4, 3, 1, 2, 0], steps=1)
    clue = _path_clue(_diff(a, b))
    assert clue.id == "launch_order_changed"
    assert "every kernel launched as often (8 launches), in another order" in clue.evidence


def test_a_swapped_kernel_is_still_another_path(tmp_path):
    """kern_5 replaced by kern_6 in B, same launch count: other kernels did run."""
    a = build(tmp_path / "a.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "b.sqlite", [0, 1, 2, 3, 4, 6])
    assert _path_clue(_diff(a, b)).id == "same_count_different_path"


def test_reordered_and_one_call_more_per_step_is_not_only_an_order_change(tmp_path):
    a = build(tmp_path / "a.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "b.sqlite", [5, 4, 3, 2, 1, 0, 1])
    assert _path_clue(_diff(a, b)).id == "launch_sequence_diverges"


def test_without_steps_one_kernel_more_often_is_not_an_order_change(tmp_path):
    """Same launch count, but kern_0 twice and kern_2 once: not the same kernels as often."""
    a = build(tmp_path / "a.sqlite", [0, 1, 2, 3, 4, 5, 0, 2], steps=1)
    b = build(tmp_path / "b.sqlite", [2, 0, 5, 4, 3, 1, 0, 0], steps=1)
    assert _path_clue(_diff(a, b)).id == "same_count_different_path"


@pytest.mark.parametrize("gate", ["path_changed", "variant_changed"])
def test_the_path_gates_read_an_order_change_as_the_readme_says(tmp_path, capsys, gate):
    """Launch order is part of the numerical path: path_changed trips (exit 1); no variant
    changed, so variant_changed passes. The board's verdict says the same."""
    a = build(tmp_path / "r1.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "r2.sqlite", [5, 4, 3, 2, 1, 0])
    rc, _out, err = run_cli(["diff", str(a), str(b), "--fail-if", gate], capsys)
    assert rc == (1 if gate == "path_changed" else 0), err
