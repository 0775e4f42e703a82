"""Each kernel's time counts in one clue of the board: a kernel only one run launches that
a danger rule names is the determinism-risk clue's time, not also the "kernels appear"
(or variants) clue's of its category, and the board's kernel clues together claim no more
than the kernel time moved."""

from __future__ import annotations

import pytest
from test_diff_pairs import STEP, build_steps

from tracelens.compare import diff
from tracelens.demo import demo_path

MERGE = (
    "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, "
    "__nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, "
    "unsigned int, unsigned int, unsigned int)"
)
# an attention kernel no danger rule names
DECODE = (
    "void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, "
    "(vllm::Fp8KVCacheDataType)0, false>(int)"
)

# The clues that name kernels and claim their time
KERNEL_CLUES = {"variant_swap", "new_kernels", "vanished_kernels", "per_call_outlier"}


def _clue(d, *ids):
    return [c for c in d.clues if c.id in ids]


def test_a_merge_kernel_only_b_launches_is_the_danger_clues_time(tmp_path):
    """B launches the cascade-attention merge kernel in every step: the danger clue names
    it and claims its 8 µs per step; the "attention: kernels appear" clue claimed them too
    (+8 µs/step): it stays, without a time of its own, and says whose time it is."""
    a = build_steps(tmp_path, "a", 20)
    b = build_steps(tmp_path, "b", 20, [*STEP, (MERGE, 8_000)])
    d = diff(a, b)
    (danger,) = _clue(d, "danger_new")
    assert danger.impact_ns == pytest.approx(8_000) and danger.rows == (MERGE,)
    (appear,) = _clue(d, "new_kernels")
    assert appear.impact_ns is None
    assert appear.evidence == (
        "1 attention kernel in B (160.0 µs, 20 calls) that A does not run; all with a "
        "determinism risk, 1 in B (160.0 µs): the determinism-risk line counts their time"
    )


def test_the_appear_clue_counts_the_other_kernels_and_says_so(tmp_path):
    """B launches the merge kernel (8 µs) and another attention kernel (12 µs) in every
    step: the appear clue claims the other kernel's 12 µs and says the determinism-risk
    line counts the merge kernel's."""
    a = build_steps(tmp_path, "a", 20)
    b = build_steps(tmp_path, "b", 20, [*STEP, (MERGE, 8_000), (DECODE, 12_000)])
    d = diff(a, b)
    (appear,) = _clue(d, "new_kernels")
    (danger,) = _clue(d, "danger_new")
    assert appear.impact_ns == pytest.approx(12_000)
    assert danger.impact_ns == pytest.approx(8_000)
    assert appear.evidence.endswith(
        "of these, 1 in B (160.0 µs) with a determinism risk: the determinism-risk line "
        "counts their time, this line the others'"
    )


def test_the_demo_boards_kernel_clues_claim_at_most_the_kernel_time_change():
    """The demo: the split-K GEMMs (danger gemm_split_k) were counted by the gemm variants
    clue too, and the merge kernel by "attention: kernels appear": together the kernel
    clues claimed 23.08 ms of a 22.81 ms change per step (101%). The per-step clues count
    the decode steps' own work (the prefill is the outside_steps clue): their change is
    that of the steps' kernel time."""
    d = diff(demo_path("bs1"), demo_path("bs16"))
    sa, sb = d.sides
    steps_a, steps_b = (int(s.steps.frame["kernel_ns"].sum()) for s in (sa, sb))
    change = steps_b / d.steps_b - steps_a / d.steps_a
    claimed = [c for c in d.clues if c.id in KERNEL_CLUES or c.id.startswith("danger_")]
    assert sum(c.impact_ns for c in claimed) <= change
    (appear,) = _clue(d, "new_kernels")
    (merge,) = [c for c in _clue(d, "danger_swapped") if "attention_merge" in c.clue]
    # B's two new attention kernels (1.45 ms) less the split-KV combine A alone runs in its
    # steps (324.2 µs), over 4 steps
    assert appear.impact_ns + merge.impact_ns == pytest.approx((1_451_484 - 324_242) / 4, abs=1)


SPLIT_K = "nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT"


def test_a_dangerous_kernel_slower_per_call_is_the_per_call_lines_time(tmp_path):
    """A split-K GEMM (gemm_split_k) both runs launch takes twice as long per call in B:
    the per-call line and the danger line both claimed its +20 µs per step (200% of the
    change). The per-call line, which says what changed about it, counts it; the danger
    line names the risk and says whose time it is."""
    step = [*STEP, (SPLIT_K, 20_000)]
    a = build_steps(tmp_path, "a", 20, step)
    b = build_steps(tmp_path, "b", 20, step, scale={SPLIT_K: 2.0})
    d = diff(a, b)
    (outlier,) = _clue(d, "per_call_outlier")
    (danger,) = _clue(d, "danger_grew")
    assert outlier.impact_ns == pytest.approx(20_000) and danger.impact_ns is None
    assert danger.evidence.endswith(
        f"the time of {SPLIT_K[:39]}… is its per-call (or calls-per-step) line's"
    )
