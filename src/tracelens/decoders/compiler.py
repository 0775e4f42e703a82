"""Compiler-generated kernels: PyTorch Inductor's Triton kernels and XLA fusions."""

from __future__ import annotations

import re

from ._base import CONFIRMED, INFERRED, UNKNOWN, Field, _Ctx, _f

# -- compiler generated ----------------------------------------------------------------------
_INDUCTOR = re.compile(r"^triton_(poi|red|per|tem|for|spl|unk)_(.*)$")
_INDUCTOR_OLD = re.compile(r"^triton__(\d[0-9a-z]*)$")
_INDUCTOR_KINDS = {
    "poi": "pointwise",
    "red": "reduction",
    "per": "persistent reduction",
    "tem": "template (e.g. mm, flex_attention)",
    "for": "foreach",
    "spl": "split scan",
    "unk": "unknown",
}
_MULTIWORD_OPS = (
    "bitwise_and bitwise_or bitwise_not bitwise_xor logical_and logical_or logical_not "
    "logical_xor native_layer_norm native_batch_norm native_group_norm _softmax _log_softmax "
    "log_softmax index_put index_select scatter_add scatter_reduce max_pool2d_with_indices "
    "avg_pool2d convolution_backward embedding_dense_backward flex_attention "
    "_scaled_dot_product_flash_attention _to_copy full_like zeros_like ones_like "
    "new_zeros new_ones new_empty scalar_tensor constant_pad_nd var_mean native_dropout "
    "threshold_backward gelu_backward silu_backward sigmoid_backward tanh_backward "
    "_softmax_backward_data nll_loss_forward nll_loss_backward clamp_min clamp_max "
    "index_add slice_scatter select_scatter as_strided_scatter unsafe_index masked_fill "
    "split_with_sizes"
).split()


def _split_inductor_ops(s: str) -> list[str]:
    toks = s.split("_")
    out: list[str] = []
    i = 0
    while i < len(toks):
        best = None
        for k in (4, 3, 2):
            cand = "_".join(toks[i : i + k])
            if i + k <= len(toks) and cand in _MULTIWORD_OPS:
                best = (cand, k)
                break
        if best:
            out.append(best[0])
            i += best[1]
        elif toks[i] == "" and out:
            out[-1] += "_"  # ``copy_`` (in-place) leaves an empty token
            i += 1
        else:
            if toks[i]:
                out.append(toks[i])
            i += 1
    return out


def _parse_inductor(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    m = _INDUCTOR.match(b)
    if m:
        kind, rest = m.groups()
        fields = [_f("kind", kind, _INDUCTOR_KINDS[kind], CONFIRMED)]
        idx = None
        head, sep, tail = rest.rpartition("_")
        if sep and tail.isdigit():
            rest, idx = head, tail
        elif rest.isdigit():
            rest, idx = "", rest
        ops = rest.removeprefix("fused").lstrip("_") if rest.startswith("fused") else rest
        if rest.startswith("fused"):
            fields.append(_f("fused", "true", "fused kernel; op names follow", CONFIRMED))
        if ops:
            fields.append(
                _f("ops_text", ops, "fused op names joined by '_' (as generated)", CONFIRMED)
            )  # noqa: E501
            fields.append(
                _f(
                    "ops",
                    ",".join(_split_inductor_ops(ops)),
                    "op names, best-effort split of ops_text",
                    INFERRED,
                )
            )  # noqa: E501
        if idx is not None:
            fields.append(_f("index", idx, "kernel counter suffix", CONFIRMED))
        return "inductor_triton", fields
    m = _INDUCTOR_OLD.match(b)
    if m:
        return "inductor_triton", [
            _f("kind", "unknown", "older Inductor name without a kind prefix", UNKNOWN),
            _f(
                "signature",
                m.group(1),
                "Triton argument specialization suffix (d: divisible by 16)",
                INFERRED,
            ),  # noqa: E501
        ]
    return None


_XLA = re.compile(r"^(loop|input|output)_([a-z0-9_]*?)_?fusion(?:_(\d+))?$")


def _parse_xla(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if len(b) > 512:
        return None
    m = _XLA.match(b)
    if m:
        kind, ops, idx = m.groups()
        fields = [_f("kind", kind, "loop: elementwise, input: reduction-rooted fusion", CONFIRMED)]  # noqa: E501
        if ops:
            fields.append(_f("ops", ops, "op names in the fusion", CONFIRMED))
        if idx:
            fields.append(_f("index", idx, "fusion counter", CONFIRMED))
        return "xla_fusion", fields
    m = re.match(
        r"^(gemm_fusion_dot|triton_gemm|triton_softmax|cublas_gemm|custom-call|fusion|wrapped_\w+?)(?:[_.](\d+))?$",
        b,
    )  # noqa: E501
    if m:
        fields = [_f("kind", m.group(1), "XLA fusion / custom call", CONFIRMED)]
        if m.group(2):
            fields.append(_f("index", m.group(2), "counter", CONFIRMED))
        return "xla_fusion", fields
    return None
