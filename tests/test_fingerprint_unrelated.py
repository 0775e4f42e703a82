"""Two fingerprints whose launches share too few kernels (fingerprint.toml,
limits.same_program_share) may be different programs: the board opens with that caveat,
as the time-based diff's does, and no launches are set aside as a capture that ended
earlier (that reading holds only for one program). Runs of one program (the demo's batch 1
against batch 16, a fixture run with a kernel switched) get no caveat."""

from __future__ import annotations

import json

from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.demo import demo_path
from tracelens.fingerprint.programs import same_program_share, shared_launches
from tracelens.synth import TraceBuilder


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def _other_program(path, steps: int = 9):
    """A k-means loop: NVTX ranges step_N, two kernels of its own and a fill, per step."""
    b = TraceBuilder("3.23.3")
    b.process(777, "python kmeans.py")
    b.gpu(0)
    t = 1_000_000
    for step in range(1, steps + 1):
        start = t
        t += 1_000
        for name in ("kmeans_assign_kernel", "kmeans_update_kernel", "fill_kernel"):
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 3_000)
            b.kernel(name, start=t + 5_000, end=t + 15_000, correlation_id=cid)
            t += 4_000
        t += 1_000
        b.nvtx_range(f"step_{step}", start=start, end=t)
        t += 20_000
    return b.write(path)


def test_unrelated_programs_open_with_the_caveat_and_set_nothing_aside(tmp_path):
    a = _doc(build_run(tmp_path / "model.sqlite"))
    b = _doc(_other_program(tmp_path / "kmeans.sqlite"))
    assert shared_launches(a, b) < same_program_share()
    diff = fp.compare(a, b)
    assert diff.unrelated is not None and diff.unrelated.startswith(
        "A and B may be different programs: only 0% of their launches"
    )
    assert diff.ends is None and diff.capture is None  # no capture-end placement
    f = diff.figures
    # every launch compared: B's 27 (9 steps of 3), A's 21 (3 steps of 7)
    assert f["variant_changed"] + f["kernels_added"] == 27
    assert f["variant_changed"] + f["kernels_removed"] == 21
    lines = fp.board.lines(diff, "model.json", "kmeans.sqlite")
    assert lines[0] == f"numerical path: {diff.unrelated}"
    assert lines[1].startswith("compared as one program: kmeans.sqlite differs from model.json")
    assert not any("ends earlier" in line or "starts later" in line for line in lines)
    assert json.loads(fp.board.to_json(diff, "a", "b"))["unrelated"] == diff.unrelated


def test_the_cli_board_of_a_fingerprint_against_another_program(tmp_path, capsys):
    base = tmp_path / "model.json"
    rc, _out, _err = run_cli(["fingerprint", build_run(tmp_path / "m.sqlite"), "-o", base], capsys)
    assert rc == 0
    rc, out, _err = run_cli(["diff", base, _other_program(tmp_path / "k.sqlite")], capsys)
    assert rc == 0
    assert out.startswith("numerical path: A and B may be different programs")
    assert "ends earlier" not in out


def test_runs_of_one_program_get_no_caveat(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite"))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm={(2, 1): GEMM_SPLITK}, steps=2)))
    diff = fp.compare(a, b)
    assert shared_launches(a, b) > 0.9 and diff.unrelated is None
    assert not fp.board.lines(diff, "a", "b")[0].startswith("numerical path: A and B may")


def test_the_demo_pair_is_one_program():
    a, b = _doc(demo_path("bs1")), _doc(demo_path("bs16"))
    share = shared_launches(a, b)
    assert 0.6 < share < 0.7  # the measured 65% the threshold's reason cites
    diff = fp.compare(a, b)
    assert diff.unrelated is None and "unrelated" not in diff.to_dict()
    assert fp.board.lines(diff, "bs1", "bs16")[0].startswith("numerical path: bs16 differs")
