"""tracelens diff on pairs a user brings that the level-shift tests do not build: B with a
second process launching on the same GPU (its launches are other work beside the same
sequence, not a longer capture of it)."""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM
from test_diff_unseen_pairs import PID, TRAIN, clue, ids, pair, recorder
from test_diffshift_level import run


@pytest.fixture(scope="module")
def neighbour_pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("neighbour")
    return pair(run(tmp, "alone"), run(tmp, "shared", neighbour=True))


def test_a_second_process_on_the_gpu_is_other_work_not_a_longer_capture(neighbour_pair):
    d = neighbour_pair
    assert "capture_difference" not in ids(d)
    c = clue(d, "other_work")
    assert c.clue == (
        "B holds 40 more launches, all of kernels A never launches, from another process: "
        f"python other.py (pid {PID + 1})"
    )
    assert c.evidence == (
        "device 0: 320 → 360 launches; 320 in common, in order; 40 → 40 steps; "
        "only in B: other_proc_kernel (40)"
    )
    assert "cut short" not in c.verdict
    assert "another process's work on the same GPU" in c.verdict


def test_the_other_process_launches_are_in_no_step(neighbour_pair):
    """The diff handed B's step search its launches without their process, so it counted
    the other process's launches as 5 more steps after the run's own (a 'shift' at step
    41, a step-time clue), where `tracelens steps` B finds the run's 40 and says the other
    process's 40 launches are in no step. The diff's steps are now those: no step-time
    clue (and the shift's parts by time, which named the run's own GEMM '+631 us/step,
    other calls per step', have nothing to name)."""
    d = neighbour_pair
    assert (d.steps_a, d.steps_b) == (40, 40)
    assert d.sides[1].steps.detail.endswith(
        "(the 40 launches of 1 other process on it, which run no such loop, in no step))"
    )
    assert ids(d) == ["other_work", "new_kernels"]


def warm_then_steady(tmp_path, stem, steps, warm, renamed=None):
    """``warm`` warm-up steps (every call 3x, one more GEMM call of 600 µs) then the
    steady steps, ``steps`` in all; ``renamed``: {name: the name B launches it by}."""
    r, t = recorder(), 1_000_000
    for i in range(steps):
        extra = [(XMMA_GEMM, 200_000)] if i < warm else []
        for name, dur in TRAIN + extra:
            d = dur * (3 if i < warm else 1)
            r.kernel((renamed or {}).get(name, name), t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def test_a_warm_up_only_in_a_is_no_faster_gemm_in_b(tmp_path):
    """A: 3 warm-up steps then 30; B: 60 steady steps. The GEMM's mean call is 1.78x
    shorter in B only because A's warm-up calls are in A's mean: its median call did not
    move, and the board says so instead of 'its inputs' contents or a different code
    path inside it'."""
    d = pair(warm_then_steady(tmp_path, "a", 33, 3), warm_then_steady(tmp_path, "b", 60, 0))
    (gemm,) = [c for c in d.clues if c.id == "per_call_outlier"]
    assert gemm.clue.endswith("1.78× shorter per call")
    assert gemm.evidence.endswith("; median call 40.00 µs → 40.00 µs")
    assert gemm.verdict.startswith(
        "its median call did not change (the evidence says): some of its calls in A moved "
        "its mean: its warm-up (3 steps that tracelens steps sets aside)"
    )
    assert "code path" not in gemm.verdict


def test_a_renamed_kernel_reads_as_two_names_in_the_path_clue(tmp_path):
    """A library upgrade renamed the layer norm (same calls, same cost): the path clue's
    two names shortened to the same 40 characters ('at::native::(anonymous
    namespace)::vect… → at::native::(anonymous namespace)::vect…'); they are now told
    apart from the scope where they differ."""
    from test_diff_pairs import LAYERNORM

    renamed = LAYERNORM.replace("vectorized_layer_norm_kernel", "vectorized_layer_norm_kernel_v2")
    a = warm_then_steady(tmp_path, "a", 20, 0)
    d = pair(a, warm_then_steady(tmp_path, "b", 20, 0, {LAYERNORM: renamed}))
    path = clue(d, "same_count_different_path")
    assert (
        "changed: …vectorized_layer_norm_kernel → …vectorized_layer_norm_kernel_v2 (20 steps)"
        in path.evidence
    )
    assert "(…vectorized_layer_norm_kernel in A, …vectorized_layer_norm_kernel_v2 in B)" in (
        path.evidence
    )
    assert clue(d, "variant_swap").impact_ns == 0
