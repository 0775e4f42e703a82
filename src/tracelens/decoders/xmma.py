"""cuBLAS / cuDNN xmma kernels (``sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize...``)."""

from __future__ import annotations

import re

from ._base import INFERRED, UNKNOWN, Field, _Ctx, _f, _split_types

# -- cuBLAS / cuDNN xmma -------------------------------------------------------------------
_XMMA = re.compile(r"^sm(\d+)_xmma_")


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
    i = 0
    if toks and toks[0] in ("gemm", "fprop", "dgrad", "wgrad", "deconv"):
        op = toks[0]
        fields.append(
            _f(
                "op",
                op,
                {
                    "gemm": "GEMM",
                    "fprop": "convolution forward",
                    "dgrad": "convolution data gradient",
                    "wgrad": "convolution weight gradient",
                    "deconv": "transposed convolution",
                }[op],
                INFERRED,
            )
        )  # noqa: E501
        i = 1
    while i < len(toks) and toks[i] in ("implicit", "gemm", "indexed", "precomputed"):
        fields.append(_f("algorithm", toks[i], "convolution algorithm detail", INFERRED))
        i += 1
    roles = [
        ("ab_types", "A/B types"),
        ("c_acc_types", "C and accumulator types"),
        ("alpha_type", "alpha/beta (epilogue scale) type"),
    ]  # noqa: E501
    r = 0
    while i < len(toks) and r < len(roles) and _split_types(toks[i]):
        fields.append(_f(roles[r][0], toks[i], roles[r][1], INFERRED))
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
        )  # noqa: E501
        i += 1
        if i < len(toks) and toks[i] in ("nhwc", "nchw", "ncdhw", "ndhwc"):
            fields.append(_f("layout_out", toks[i], "output layout", INFERRED))
            i += 1
    rest = toks[i:]
    j = 0
    while j < len(rest):
        t = rest[j]
        if t.startswith("tilesize"):
            fields.append(_f("tile", t[8:], "CTA tile M x N x K", INFERRED))
        elif re.fullmatch(r"stage\d+", t):
            fields.append(_f("stages", t[5:], "pipeline stages", INFERRED))
        elif t.startswith("warpgroupsize"):
            fields.append(_f("warpgroups", t[13:], "warp-group shape", INFERRED))
        elif t.startswith("warpsize"):
            fields.append(_f("warps", t[8:], "warp shape", INFERRED))
        elif re.fullmatch(r"tensor\d+x\d+x\d+", t):
            fields.append(_f("mma_shape", t[6:], "tensor-core instruction shape", INFERRED))
        elif t == "ffma":
            fields.append(_f("math", "ffma", "FFMA: no tensor cores", INFERRED))
        elif m := re.fullmatch(r"align([a-z]*)(\d+)", t):
            # aligna4_alignc4: one alignment per operand, each its own field name
            operand = m.group(1)
            fields.append(
                _f(
                    f"alignment_{operand}" if operand else "alignment",
                    t,
                    f"operand {operand.upper()} alignment (elements)"
                    if operand
                    else "operand alignment (elements)",
                    INFERRED,
                )
            )
        elif t == "execute":
            k = j + 1
            while k < len(rest) and rest[k] != "kernel":
                k += 1
            mode = "_".join(rest[j + 1 : k])
            if mode == "split_k":
                fields.append(_f("split_k", "split_k", "execute_split_k_kernel: split-K", INFERRED))  # noqa: E501
            elif mode:
                fields.append(
                    _f(
                        "execute_mode",
                        mode,
                        "execution mode (segment-K etc.): not documented",
                        UNKNOWN,
                    )
                )  # noqa: E501
            if k + 1 < len(rest) and library is None:
                library = "_".join(rest[k + 1 :])
            j = len(rest) if k + 1 < len(rest) else k
        elif t == "kernel":
            pass
        else:
            fields.append(_f("flag", t, "xmma token not documented", UNKNOWN))
        j += 1
    if library:
        fields.append(_f("library", library, "shipping library tag (cuBLAS / cuDNN)", INFERRED))
    family = "cudnn" if library and "cudnn" in library else "cublas_xmma"
    return family, fields
