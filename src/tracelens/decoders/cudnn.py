"""cuDNN kernels (``cudnn::...``, legacy ``implicit_convolve_sgemm``...)."""

from __future__ import annotations

import re

from ._base import _TILE3, CONFIRMED, INFERRED, UNKNOWN, Field, _Ctx, _f, _split_types
from .cublas import _generic_tokens
from .cutlass import _cutlass2_fields, _first_cutlass_arg

# -- cuDNN ------------------------------------------------------------------------------------
_CUDNN_LEGACY = re.compile(
    r"^cudnn_(?:(infer|train)_)?(?:(maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_)?"
)  # noqa: E501


def _cudnn_namespace(q: str) -> bool:
    ns, sep, _ = q.partition("::")
    return bool(sep) and (
        ns == "cudnn"
        or ns.startswith(("cask_cudnn", "cutlass_cudnn"))
        or (ns.startswith("cutlass__") and "cudnn" in ns)
    )


def _parse_cudnn(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if b.startswith("cudnn_generated_fort_native_sdpa"):
        toks = b[len("cudnn_generated_fort_native_sdpa") :].strip("_").split("_")
        fields = [
            _f("op", "sdpa", "cuDNN fused scaled-dot-product attention (generated)", INFERRED)
        ]  # noqa: E501
        j = 0
        while j < len(toks):
            t = toks[j]
            if re.fullmatch(r"sm\d+[a-z]?", t):
                fields.append(_f("arch", t, "target architecture", INFERRED))
            elif t == "flash":
                fields.append(_f("algorithm", t, "flash-style attention", INFERRED))
            elif t in ("fprop", "bprop"):
                fields.append(
                    _f(
                        "direction",
                        "fwd" if t == "fprop" else "bwd",
                        f"{t}: forward/backward",
                        INFERRED,
                    )
                )  # noqa: E501
            elif t == "knob" and j + 1 < len(toks):
                fields.append(_f("knob", toks[j + 1], "engine knob: meaning unpublished", UNKNOWN))  # noqa: E501
                j += 1
            elif _TILE3.match(t) and not any(f.name == "tile" for f in fields):
                fields.append(_f("tile", t, "tile shape", INFERRED))
            elif t.startswith("cga") and _TILE3.match(t[3:]):
                fields.append(_f("cluster", t[3:], "CGA (cluster) shape", INFERRED))
            elif _split_types(t):
                fields.append(_f("dtype", t, "data type", INFERRED))
            else:
                fields.append(_f("flag", t, "token not documented", UNKNOWN))
            j += 1
        return "cudnn", fields
    m = _CUDNN_LEGACY.match(b)
    if m and b != "cudnn":
        fields = [_f("library", "cudnn", "cuDNN kernel", CONFIRMED)]
        if m.group(1):
            fields.append(_f("variant", m.group(1), "cuDNN sub-library (infer/train)", INFERRED))
        if m.group(2):
            fields.append(_f("arch", m.group(2), "architecture generation", INFERRED))
        _generic_tokens([t for t in b[m.end() :].split("_") if t], fields, INFERRED)
        return "cudnn", fields
    if _cudnn_namespace(q):
        fields = [_f("namespace", q.split("::", 1)[0], "cuDNN namespace", CONFIRMED)]
        inner = _first_cutlass_arg(c.normalized)
        if inner:
            sub = _cutlass2_fields(inner, INFERRED)
            if sub is not None:
                fields.append(
                    _f("cutlass_kernel", inner, "CUTLASS kernel compiled into cuDNN", CONFIRMED)
                )  # noqa: E501
                fields += sub
        return "cudnn", fields
    if b.startswith(
        ("wgrad_alg", "dgrad_alg", "fft2d_", "fft3d_", "implicit_convolve", "explicit_convolve")
    ) or b.startswith("bn_"):  # noqa: E501
        return "cudnn", [_f("kernel", b, "cuDNN convolution/normalization helper kernel", INFERRED)]  # noqa: E501
    return None
