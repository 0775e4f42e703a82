"""Legacy cuBLAS kernels named after their architecture (``ampere_sgemm_128x64_tn``)."""

from __future__ import annotations

import re

from ._base import (
    _TILE2,
    INFERRED,
    UNKNOWN,
    Field,
    _core_fields,
    _Ctx,
    _f,
    _split_core,
    _split_types,
)

# -- legacy cuBLAS arch-prefixed names -----------------------------------------------------
_ARCHES = ("maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
_ARCH_PREFIX = re.compile(r"^(maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_")


def _generic_tokens(toks: list[str], fields: list[Field], conf: str) -> None:
    """Tile / layout / common tokens shared by the legacy cuBLAS and cuDNN names."""
    j = 0
    while j < len(toks):
        t = toks[j]
        core = _core_fields(t, conf) if _split_core(t) else None
        if core:
            fields.extend(core)
        elif t == "scudnn" or t == "hcudnn":
            fields.append(
                _f("math", t, "cuDNN SIMT (s: fp32, h: fp16) convolution kernel", INFERRED)
            )  # noqa: E501
        elif _TILE2.match(t) and not any(f.name == "tile" for f in fields):
            fields.append(_f("tile", t, "CTA tile M x N", conf))
        elif t == "stages" and j + 1 < len(toks) and _TILE2.match(toks[j + 1]):
            kb, st = toks[j + 1].split("x")
            fields.append(_f("k_block", kb, "K-block", conf))
            fields.append(_f("stages", st, "pipeline stages", conf))
            j += 1
        elif re.fullmatch(r"sliced\d+x\d+", t):
            fields.append(
                _f("sliced", t[6:], "sliced-K inside a CTA (fixed summation order)", INFERRED)
            )  # noqa: E501
        elif re.fullmatch(r"ldg\d+", t):
            fields.append(_f("ldg", t[3:], "global load width (elements)", INFERRED))
        elif t in ("nn", "nt", "tn", "tt"):
            fields.append(_f("layout", t, "op(A) op(B): n normal, t transposed", INFERRED))
        elif t in ("nhwc", "nchw", "ndhwc", "ncdhw"):
            fields.append(_f("layout", t, "tensor layout", INFERRED))
        elif t == "splitK":
            fields.append(_f("split_k", t, "split-K", INFERRED))
        elif t == "relu":
            fields.append(_f("epilogue", t, "fused ReLU epilogue", INFERRED))
        elif t == "winograd":
            fields.append(_f("algorithm", t, "Winograd convolution", INFERRED))
        elif t in ("fprop", "dgrad", "wgrad"):
            fields.append(_f("op", t, "convolution direction", INFERRED))
        elif t in ("3dconv",):
            fields.append(_f("algorithm", t, "3-D convolution", INFERRED))
        elif _split_types(t):
            fields.append(_f("dtype", t, "data type", conf))
        elif re.fullmatch(r"v\d+", t) and j == len(toks) - 1:
            fields.append(_f("version", t, "kernel version suffix", INFERRED))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
        j += 1


def _parse_cublas_arch(c: _Ctx) -> tuple[str, list[Field]] | None:
    m = _ARCH_PREFIX.match(c.base)
    if not m:
        return None
    toks = c.base[m.end() :].split("_")
    if not any(_split_core(t) for t in toks):
        return None
    fields = [_f("arch", m.group(1), "architecture generation", INFERRED)]
    _generic_tokens(toks, fields, INFERRED)
    return "cublas_arch", fields
