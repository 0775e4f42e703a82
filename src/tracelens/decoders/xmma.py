"""cuBLAS / cuDNN xmma kernels (``sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize...``)."""

from __future__ import annotations

import re

from ._base import INFERRED, UNKNOWN, Field, _Ctx, _f, _split_types

# -- cuBLAS / cuDNN xmma -------------------------------------------------------------------
_XMMA = re.compile(r"^sm(\d+)_xmma_")


_OPS = {
    "gemm": "GEMM",
    "fprop": "convolution forward",
    "dgrad": "convolution data gradient",
    "wgrad": "convolution weight gradient",
    "deconv": "transposed convolution",
}
_TYPE_ROLES = (
    ("ab_types", "A/B types"),
    ("c_acc_types", "C and accumulator types"),
    ("alpha_type", "alpha/beta (epilogue scale) type"),
)


def _parse_xmma(c: _Ctx) -> tuple[str, list[Field]] | None:
    m = _XMMA.match(c.base)
    if not m:
        return None
    body = c.base[m.end() :]
    library = None
    if "__" in body:
        body, library = body.rsplit("__", 1)
    toks = body.split("_")
    fields = [_f("arch", f"sm{m.group(1)}", "target architecture", INFERRED)]
    i = _op(toks, fields)
    i = _types_and_layouts(toks, i, fields)
    library = _tail(toks[i:], fields, library)
    if library:
        fields.append(_f("library", library, "shipping library tag (cuBLAS / cuDNN)", INFERRED))
    family = "cudnn" if library and "cudnn" in library else "cublas_xmma"
    return family, fields


def _op(toks: list[str], fields: list[Field]) -> int:
    """The operation (gemm, fprop, ...) and convolution algorithm tokens; the next index."""
    i = 0
    if toks and toks[0] in _OPS:
        fields.append(_f("op", toks[0], _OPS[toks[0]], INFERRED))
        i = 1
    while i < len(toks) and toks[i] in ("implicit", "gemm", "indexed", "precomputed"):
        fields.append(_f("algorithm", toks[i], "convolution algorithm detail", INFERRED))
        i += 1
    return i


def _types_and_layouts(toks: list[str], i: int, fields: list[Field]) -> int:
    """The type tokens (A/B, C and accumulator, alpha) from ``i``, then the GEMM (nt, n) or
    convolution (nhwckrsc, nhwc) layouts; the next index."""
    r = 0
    while i < len(toks) and r < len(_TYPE_ROLES) and _split_types(toks[i]):
        fields.append(_f(_TYPE_ROLES[r][0], toks[i], _TYPE_ROLES[r][1], INFERRED))
        i += 1
        r += 1
    if i < len(toks) and re.fullmatch(r"[nt]{2}", toks[i]):
        fields.append(_f("layout_ab", toks[i], "A/B layout (n/t)", INFERRED))
        i += 1
        if i < len(toks) and toks[i] in ("n", "t"):
            fields.append(_f("layout_c", toks[i], "C layout", INFERRED))
            i += 1
    elif i < len(toks) and re.fullmatch(r"n[a-z]{3,7}", toks[i]):
        fields.append(
            _f("layout_in", toks[i], "activation/filter layouts (e.g. nhwc + krsc)", INFERRED)
        )
        i += 1
        if i < len(toks) and toks[i] in ("nhwc", "nchw", "ncdhw", "ndhwc"):
            fields.append(_f("layout_out", toks[i], "output layout", INFERRED))
            i += 1
    return i


def _tail(rest: list[str], fields: list[Field], library: str | None) -> str | None:
    """The tile, stage, warp, alignment ... tokens and ``execute_<mode>_kernel[_<library>]``;
    the library tag (``library``, or the one after ``execute_..._kernel``)."""
    j = 0
    while j < len(rest):
        if rest[j] == "execute":
            j, library = _execute(rest, j, fields, library)
        elif rest[j] != "kernel":
            fields.append(_token(rest[j]))
        j += 1
    return library


def _token(t: str) -> Field:
    """The field of one tail token (an undocumented one is a ``flag``)."""
    if t.startswith("tilesize"):
        return _f("tile", t[8:], "CTA tile M x N x K", INFERRED)
    if re.fullmatch(r"stage\d+", t):
        return _f("stages", t[5:], "pipeline stages", INFERRED)
    if t.startswith("warpgroupsize"):
        return _f("warpgroups", t[13:], "warp-group shape", INFERRED)
    if t.startswith("warpsize"):
        return _f("warps", t[8:], "warp shape", INFERRED)
    if re.fullmatch(r"tensor\d+x\d+x\d+", t):
        return _f("mma_shape", t[6:], "tensor-core instruction shape", INFERRED)
    if t == "ffma":
        return _f("math", "ffma", "FFMA: no tensor cores", INFERRED)
    if m := re.fullmatch(r"align([a-z]*)(\d+)", t):
        # aligna4_alignc4: one alignment per operand, each its own field name
        operand = m.group(1)
        if operand:
            return _f(
                f"alignment_{operand}",
                t,
                f"operand {operand.upper()} alignment (elements)",
                INFERRED,
            )
        return _f("alignment", t, "operand alignment (elements)", INFERRED)
    return _f("flag", t, "xmma token not documented", UNKNOWN)


def _execute(
    rest: list[str], j: int, fields: list[Field], library: str | None
) -> tuple[int, str | None]:
    """``execute_<mode>_kernel[_<library>]`` at ``rest[j]``: the mode's field, the index of
    the last token read, and the library tag after ``kernel`` (unless one is known)."""
    k = j + 1
    while k < len(rest) and rest[k] != "kernel":
        k += 1
    mode = "_".join(rest[j + 1 : k])
    if mode == "split_k":
        fields.append(_f("split_k", "split_k", "execute_split_k_kernel: split-K", INFERRED))
    elif mode:
        fields.append(
            _f("execute_mode", mode, "execution mode (segment-K etc.): not documented", UNKNOWN)
        )
    if k + 1 < len(rest) and library is None:
        library = "_".join(rest[k + 1 :])
    return (len(rest) if k + 1 < len(rest) else k), library
