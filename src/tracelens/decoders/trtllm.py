"""TensorRT-LLM kernels (fmha, gemm and MoE pieces)."""

from __future__ import annotations

import re

from ._base import _TILE3, INFERRED, UNKNOWN, Field, _Ctx, _f

# -- TensorRT-LLM -----------------------------------------------------------------------------
_TRT_FMHA = re.compile(r"^fmha(Sm\d+[a-z]?)Kernel(?:_(\w+))?$")
_TRT_PIECES = (
    (re.compile(r"Qkv([A-Z][a-z0-9]+)"), "qkv_dtype", "Q/K/V data type"),
    (re.compile(r"O([A-Z][a-z0-9]+)"), "o_dtype", "output data type"),
    (re.compile(r"H(\d+)"), "head_dim", "head dimension"),
    (re.compile(r"(PagedKv|ContiguousKv|SeparateQkv|PackedQkv)"), "kv_layout", "KV-cache layout"),
    (
        re.compile(r"(SlidingOrChunkedCausal|Causal|Dense|Custom|Bidirectional)"),
        "mask",
        "attention mask",
    ),  # noqa: E501
    (re.compile(r"P(\d+)"), "p_token", "P<n>: meaning unpublished"),
    (re.compile(r"(VarSeq)"), "var_seq", "variable sequence lengths"),
    (re.compile(r"Q(\d+)"), "tile_q", "query tile"),
    (re.compile(r"Kv(\d+)"), "tile_kv", "KV tile"),
    (re.compile(r"(Persistent|Static)"), "scheduling", "persistent or static scheduling"),
    (
        re.compile(r"(Context|Generation|Gen|SwapsMmaAb\w*)"),
        "phase",
        "context (prefill) or generation",
    ),  # noqa: E501
)


def _parse_trtllm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    m = _TRT_FMHA.match(b)
    if m:
        fields = [
            _f("arch", m.group(1), "target architecture", INFERRED),
            _f("op", "fmha", "fused multi-head attention", INFERRED),
        ]  # noqa: E501
        rest = m.group(2) or ""
        pos = 0
        for rx, fname, meaning in _TRT_PIECES:
            mm = rx.match(rest, pos)
            if mm:
                conf = UNKNOWN if fname == "p_token" else INFERRED
                fields.append(_f(fname, mm.group(1), meaning, conf))
                pos = mm.end()
        if pos < len(rest):
            fields.append(_f("unparsed", rest[pos:], "rest of the name: not documented", UNKNOWN))  # noqa: E501
        return "trtllm", fields
    if (
        b.startswith("bmm_")
        and b.endswith(("_sm100f", "_sm100a", "_sm103a", "_sm100"))
        or (b.startswith("bmm_") and "_cga" in b)
    ):
        fields = [_f("op", "bmm", "TensorRT-LLM generated batched GEMM", INFERRED)]
        toks = b.split("_")[1:]
        for j, t in enumerate(toks):
            if j == 0:
                fields.append(_f("output_dtype", t, "output data type", INFERRED))
            elif j == 1:
                fields.append(_f("ab_dtypes", t, "A/B data types (Mx: MX block-scaled)", INFERRED))  # noqa: E501
            elif j == 2:
                fields.append(_f("acc_dtype", t, "accumulator type", INFERRED))
            elif re.fullmatch(r"t\d+x\d+x\d+\w*", t):
                fields.append(
                    _f(
                        "tile",
                        re.match(r"t(\d+x\d+x\d+)", t).group(1),
                        "CTA tile M x N x K",
                        INFERRED,
                    )
                )  # noqa: E501
            elif re.fullmatch(r"s\d+", t):
                fields.append(_f("stages", t[1:], "pipeline stages", INFERRED))
            elif re.fullmatch(r"m\d+x\d+x\d+", t):
                fields.append(_f("mma_shape", t[1:], "MMA instruction shape", INFERRED))
            elif t.startswith("cga") and _TILE3.match(t[3:]):
                fields.append(_f("cluster", t[3:], "cluster shape", INFERRED))
            elif t in ("TN", "NT", "NN", "TT"):
                fields.append(_f("layout", t, "A/B layouts", INFERRED))
            elif re.fullmatch(r"sm\d+[a-z]?", t):
                fields.append(_f("arch", t, "target architecture", INFERRED))
            else:
                fields.append(_f("flag", t, "token not documented", UNKNOWN))
        return "trtllm", fields
    if q.startswith(("tensorrt_llm::", "moe::dev::", "trtllm")) or b.startswith("trtllm"):
        return "trtllm", [_f("kernel", b, "TensorRT-LLM kernel", INFERRED)]
    return None
