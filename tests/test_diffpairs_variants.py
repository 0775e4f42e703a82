"""Kernels of a category only one run launches, no other kernel of it in their place. A
runs a fused layer-norm + GEMM kernel where B runs the layer norm alone (B's GEMMs are
A's): the board said of the vanished fused kernel "the GEMM library picked other kernels
for these shapes (its heuristic depends on batch size)", a cause for a GEMM no other GEMM
replaced. It says GEMM work only one run does."""

from __future__ import annotations

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
