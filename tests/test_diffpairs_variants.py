"""Kernels of a category only one run launches, no other kernel of it in their place. A
runs a fused layer-norm + GEMM kernel where B runs the layer norm alone (B's GEMMs are
A's): the board said of the vanished fused kernel "the GEMM library picked other kernels
for these shapes (its heuristic depends on batch size)", a cause for a GEMM no other GEMM
replaced. It says GEMM work only one run does. And one GEMM renamed (same calls, grid and
cost) was "the GEMM library picked other kernels"."""

from __future__ import annotations

from fixtures.builder import XMMA_GEMM
from test_diff_pairs import LAYERNORM, STEP
from test_diff_unseen_pairs import pair, serial

FUSED = "fused_layernorm_gemm_kernel"


def test_a_gemm_no_other_gemm_replaced_is_no_library_pick(tmp_path):
    fused = [(FUSED, 50_000) if n == LAYERNORM else (n, d) for n, d in STEP]
    d = pair(serial(tmp_path, "a", 30, fused), serial(tmp_path, "b", 30, STEP))
    (c,) = [c for c in d.clues if c.id == "vanished_kernels"]
    assert c.clue == "gemm: kernels vanish"
    assert c.verdict == "gemm work that only one run does"
    assert "GEMM library picked" not in " ".join(c.verdict for c in d.clues)


def test_a_renamed_kernel_is_not_called_another_pick(tmp_path):
    """B's GEMM has another name (sm90 for sm80) but the same calls, grid and cost: the
    board said "the GEMM library picked other kernels for these shapes (its heuristic
    depends on batch size)". A rename reads alike: it says so. A kernel swapped for a
    cheaper one is still the library's pick."""
    renamed = XMMA_GEMM.replace("sm80_xmma_gemm_f32f32", "sm90_xmma_gemm_f32f32")
    b = [(renamed if n == XMMA_GEMM else n, d) for n, d in STEP]
    d = pair(serial(tmp_path, "a", 30, STEP), serial(tmp_path, "b", 30, b))
    (c,) = [c for c in d.clues if c.id == "variant_swap"]
    assert c.verdict.startswith(
        "one kernel in place of another with the same calls and cost (60 calls, 40.00 µs → "
        "40.00 µs per call, the same grid): the same kernel under another name"
    )
    assert c.strength == "moderate"
    faster = [(renamed, d * 0.7) if n == XMMA_GEMM else (n, d) for n, d in STEP]
    d = pair(serial(tmp_path, "a", 30, STEP), serial(tmp_path, "c", 30, faster))
    (c,) = [c for c in d.clues if c.id == "variant_swap"]
    assert c.verdict.startswith("the GEMM library picked other kernels for these shapes")
