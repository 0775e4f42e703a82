"""diff of a run whose path changes partway through (review 5, bug 1): both runs repeat the
same step until then, and that is no capture difference. Launch order swapped from step 8 on
is the launch-order clue; a kernel replaced from step 8 on is the variant and path clues,
its calls counted per step on average (both runs have their 20 NVTX steps). Captures cut
short or started late stay capture differences; overlapping windows that start and end at
step boundaries read as a path change too, and the board says it is unsure."""

from __future__ import annotations

import pytest
from test_diff_capture_unsure import build as write_steps

import tracelens
from tracelens.compare import diff
from tracelens.compare.align import align_sequences

FWD = ["embed", "gemm_qkv", "flash_attn", "gemm_o", "layernorm"]
BWD = ["gemm_o_dgrad", "flash_attn_bwd", "gemm_qkv_dgrad", "embed_bwd"]
PATH_CLUES = {"launch_order_changed", "same_count_different_path", "launch_sequence_diverges"}


def build(path, *, steps=20, change_from=None, change=None, first=1, last=None):
    """NVTX 'train_step' steps ``first`` to ``last`` (of a run of ``steps``) of forward and
    backward kernels, warm-up steps 1-2 with an autotune kernel; from step ``change_from``
    on, ``change`` (a function of the backward list) makes B's path."""
    sequence = []
    for step in range(first, (last or steps) + 1):
        names = FWD[:2] + ["gemm_autotune"] + FWD[2:] if step <= 2 else list(FWD)
        backward = list(BWD)
        if change_from and step >= change_from:
            backward = change(backward)
        sequence.append(names + backward)
    return write_steps(path, sequence)


def swapped(backward):
    backward[0], backward[1] = backward[1], backward[0]
    return backward


def replaced(backward):
    backward[0] = "gemm_o_dgrad_v2"
    return backward


def _diff(tmp_path, a, b):
    with tracelens.open(build(tmp_path / "a.sqlite", **a)) as ta:
        with tracelens.open(build(tmp_path / "b.sqlite", **b)) as tb:
            return diff(ta, tb)


def ids(d):
    return {c.id for c in d.clues}


def test_launch_order_changed_partway_is_a_path_change_not_a_capture_difference(tmp_path):
    d = _diff(tmp_path, {}, {"change_from": 8, "change": swapped})
    (al,) = d.alignment
    assert al.relation != "capture" and not al.capture_difference
    assert "capture_difference" not in ids(d)
    (path,) = [c for c in d.clues if c.id in PATH_CLUES]
    assert path.id == "launch_order_changed"
    # 13 steps swap two launches: one of each pair matches in order
    assert al.matched_in_order == al.launches_a - 13
    assert "every kernel launched as often" in path.evidence
    assert "every step" not in path.evidence  # steps 1-7 are A's order


def test_a_kernel_replaced_partway_is_the_variant_and_path_clues(tmp_path):
    d = _diff(tmp_path, {}, {"change_from": 8, "change": replaced})
    (al,) = d.alignment
    assert al.relation != "capture" and "capture_difference" not in ids(d)
    assert al.replaced == (("void gemm_o_dgrad(float*)", "void gemm_o_dgrad_v2(float*)", 13),)
    assert al.steps_a == al.steps_b == 20  # not the 7 steps that launch gemm_o_dgrad in B
    assert d.steps_a == d.steps_b == 20
    assert {"same_count_different_path", "new_kernels"} <= ids(d)
    (calls,) = [c for c in d.clues if c.id == "calls_per_step"]
    assert calls.clue.endswith("0.35× the calls per step")
    assert calls.evidence == "calls 20 → 7 in 20 → 20 steps: 1.00 → 0.35 per step on average"
    assert not [n for n in d.notes if "repeats A 20, B 7 times" in n]


@pytest.mark.parametrize(
    ("b", "relation", "how"),
    [
        ({"last": 15}, "prefix", "B is A cut short"),
        ({"first": 4}, "suffix", "B is the end of A"),
        ({"first": 2, "last": 15}, "slice", "B is a slice of A"),
    ],
)
def test_captures_of_fewer_steps_stay_capture_differences(tmp_path, b, relation, how):
    d = _diff(tmp_path, {}, b)
    (al,) = d.alignment
    assert al.relation == relation
    (c,) = [c for c in d.clues if c.id == "capture_difference"]
    assert how in c.verdict
    assert not PATH_CLUES & ids(d)


def test_overlapping_captures_from_step_boundaries_are_unsure(tmp_path):
    """A holds steps 1-15 (its warm-up too), B steps 6-20 of the same run: neither is a
    slice of the other. Steady steps all look alike, so B also reads as A's run without
    its warm-up (15 steps each, A's first two with an autotune kernel more): the launches
    cannot tell a capture from a path change, and the board says it is unsure (it said
    'capture difference', which a run that skips its warm-up also read as)."""
    d = _diff(tmp_path, {"last": 15}, {"first": 6})
    (al,) = d.alignment
    assert al.relation == "shifted" and not al.capture_difference
    assert al.matched_in_order == 15 * 9
    assert dict(al.only_in_a) == {"void gemm_autotune(float*)": 2}
    assert "capture_difference" not in ids(d)
    (path,) = [c for c in d.clues if c.id in PATH_CLUES]
    assert path.verdict.startswith("unsure: ") and "capture difference" in path.verdict


def test_a_long_run_that_changes_partway_is_not_aligned_as_all_alike():
    """Too long for an exact alignment (3,000 x 3,000 launches differ): the same step on
    both sides until the change is no reason to count every launch as matching."""
    step = [f"k{i}" for i in range(10)]
    changed = step[:3] + ["k3_v2"] + step[4:]
    al = align_sequences(0, step * 400, step * 100 + changed * 300)
    assert al.relation not in ("capture", "periodic")
    assert al.matched_in_order <= 4_000 - 300
    assert al.first_divergence == 1_003


def test_a_change_in_the_last_steps_is_no_later_capture():
    """B's first 15 steps are A's last 15 as much as its first: B read as a window 5 steps
    later would end in 5 steps of another path, which no later capture of A's run holds."""
    step = [f"k{i}" for i in range(10)]
    changed = step[:3] + ["k3_v2"] + step[4:]
    al = align_sequences(0, step * 20, step * 15 + changed * 5)
    assert al.relation == "aligned" and not al.capture_difference
    assert al.replaced == (("k3", "k3_v2", 5),)
    # the same run captured 5 steps later: a capture difference
    al = align_sequences(0, step * 20, step[2:] * 1 + step * 19 + step[:4])
    assert al.relation == "capture" and al.matched_in_order == 19 * 10 + 8
