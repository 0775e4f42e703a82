"""nvjet: cuBLAS's Hopper/Blackwell GEMM kernels (``nvjet_tst_128x256_64x4_2x1_v_bz_TNN``)."""

from __future__ import annotations

import re

from ._base import CONFIRMED, INFERRED, UNKNOWN, Field, _Ctx, _f

# -- nvjet ----------------------------------------------------------------------------------
# The regex from KERNEL_NAMES.md (the optional _tf32 is captured so it can be reported).
# Linear: every repetition of the flags group starts with "_" and [A-Za-z0-9] excludes "_".
_NVJET = re.compile(
    r"^nvjet_(?:(sm\d+[a-z]?)_)?([a-z]{3,5})(_tf32)?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)"
    r"((?:_[A-Za-z0-9]+)*?)_([NT]{3})$"
)
_NVJET_DTYPES = {"s": "fp32", "h": "fp16", "t": "bf16", "q": "fp8_e4m3", "o": "fp4"}
_NVJET_BLOCKSCALE = re.compile(r"^([AB])vec(\d+)(UE8M0|UE4M3)$")
_NVJET_FLAGS = {
    "v": ("raster_order", "raster order v (CTA traversal order; v/h)", INFERRED),
    "h": ("raster_order", "raster order h (CTA traversal order; v/h)", INFERRED),
    "bz": ("beta", "beta = 0: C is not read", INFERRED),
    "badd": ("beta", "beta != 0: C is added", INFERRED),
    "bias": ("epilogue", "bias epilogue", INFERRED),
    "splitK": (
        "split_k",
        "split-K: partial sums are combined by a separate splitKreduce_kernel launch",
        CONFIRMED,
    ),
    "2cta": ("mma", "2-SM (CTA pair) MMA", INFERRED),
    "coopA": ("coop", "probably cooperative/multicast load of A (unpublished)", UNKNOWN),
    "coopB": ("coop", "probably cooperative/multicast load of B (unpublished)", UNKNOWN),
}


def _nvjet_dtype_fields(letters: str) -> list[Field]:
    if len(letters) == 3:
        roles = [
            ("input_dtype", "A/B input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]  # noqa: E501
        how = "dtype letter (s fp32, h fp16, t bf16, q fp8 e4m3, o fp4)"
    elif len(letters) == 4:
        roles = [
            ("a_dtype", "A input"),
            ("b_dtype", "B input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]  # noqa: E501
        how = "dtype letter, 4-letter form read by analogy with the 3-letter form"
    else:
        roles = [
            ("a_dtype", "A input"),
            ("b_dtype", "B input"),
            ("c_dtype", "C input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]
        how = "dtype letter, 5-letter form read by analogy with the 3-letter form"
    out = []
    for (fname, role), letter in zip(roles, letters, strict=True):
        if letter in _NVJET_DTYPES:
            out.append(_f(fname, _NVJET_DTYPES[letter], f"{role} {how}", INFERRED))
        else:
            out.append(
                _f(fname, letter, f"{role} dtype letter {letter!r} is not documented", UNKNOWN)
            )  # noqa: E501
    return out


def _parse_nvjet(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not b.startswith("nvjet_"):
        return None
    m = _NVJET.match(b)
    if m is None:
        return "nvjet", [_f("unparsed", b[6:], "nvjet name outside the known grammar", UNKNOWN)]
    arch, letters, tf32, tm, tn, kb, st, cm, cn, flags, ops = m.groups()
    fields = [
        _f("kernel", "nvjet", "cuBLASLt GEMM/GEMV kernel family (Hopper/Blackwell)", CONFIRMED)
    ]  # noqa: E501
    if arch:
        fields.append(_f("arch", arch, "architecture tag (appears with cuBLAS 13)", CONFIRMED))
    fields.append(_f("dtypes", letters, "dtype letters: inputs, compute, output", INFERRED))
    fields += _nvjet_dtype_fields(letters)
    if tf32:
        fields.append(_f("tf32", "tf32", "TF32 compute mode", INFERRED))
    fields.append(_f("tile_mn", f"{tm}x{tn}", "CTA tile M x N", INFERRED))
    fields.append(
        _f("k_block", kb, "K-block (a public guide reads 64x4 as threads per block)", INFERRED)
    )
    fields.append(_f("stages", st, "pipeline stages", INFERRED))
    fields.append(
        _f("cluster", f"{cm}x{cn}", "cluster shape (a public guide reads it as warps)", INFERRED)
    )  # noqa: E501
    for tok in flags.split("_")[1:] if flags else []:
        if tok in _NVJET_FLAGS:
            fname, meaning, conf = _NVJET_FLAGS[tok]
            fields.append(_f(fname, tok, meaning, conf))
            continue
        bm = _NVJET_BLOCKSCALE.match(tok)
        if bm:
            operand, vec, scale = bm.groups()
            mode = {("32", "UE8M0"): "MXFP8", ("16", "UE4M3"): "NVFP4"}.get((vec, scale))
            if mode:
                fields.append(
                    _f(
                        f"block_scale_{operand.lower()}",
                        tok,
                        f"{mode} block scaling of {operand} ({vec}-element blocks, {scale} scales)",
                        CONFIRMED,
                    )  # noqa: E501
                )
            else:
                fields.append(
                    _f(
                        f"block_scale_{operand.lower()}",
                        tok,
                        "block-scaling mode (combination not documented)",
                        UNKNOWN,
                    )
                )  # noqa: E501
            continue
        fields.append(_f("flag", tok, "nvjet flag not documented", UNKNOWN))
    fields.append(_f("layout", ops, "operation letters", INFERRED))
    fields.append(_f("op_a", ops[0], "op(A): T transposed, N not", INFERRED))
    fields.append(_f("op_b", ops[1], "op(B): T transposed, N not", INFERRED))
    fields.append(_f("op_3", ops[2], "third operation letter: meaning unpublished", UNKNOWN))
    return "nvjet", fields
