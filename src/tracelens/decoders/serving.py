"""LLM-serving kernels: FlashInfer, vLLM (custom all-reduce included) and other serving
libraries."""

from __future__ import annotations

import re

from ._base import CONFIRMED, INFERRED, Field, _Ctx, _f

# -- FlashInfer / vLLM / serving kernels -----------------------------------------------------
_FLASHINFER_PREFIXES = (
    "BatchPrefill",
    "BatchDecode",
    "SinglePrefill",
    "SingleDecode",
    "BatchMLA",
    "BatchPOD",
    "TopKTopP",
)


def _flashinfer_base(b: str) -> bool:
    # Plain substring tests: linear, unlike a regex with several unbounded \w* parts.
    return (
        b.startswith(_FLASHINFER_PREFIXES)
        or "MergeState" in b
        or "SamplingFromProb" in b
        or ("TopK" in b and "Sampling" in b)
    )


def _parse_flashinfer(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if not (q.startswith("flashinfer::") or _flashinfer_base(b)):
        return None
    fields: list[Field] = []
    lo = b.lower()
    if "prefill" in lo:
        fields.append(_f("phase", "prefill", "prefill attention", INFERRED))
    elif "decode" in lo:
        fields.append(_f("phase", "decode", "decode attention", INFERRED))
    if "mergestate" in lo:
        fields.append(
            _f(
                "op",
                "merge_states",
                "merges partial attention states (cascade / split-KV)",
                INFERRED,
            )
        )  # noqa: E501
    if "pagedkv" in lo:
        fields.append(_f("kv_layout", "paged", "paged KV cache", INFERRED))
    elif "raggedkv" in lo:
        fields.append(_f("kv_layout", "ragged", "ragged KV cache", INFERRED))
    if not q.startswith("flashinfer::"):
        fields.append(
            _f(
                "source",
                "flashinfer",
                "FlashInfer kernel by its name (no namespace in this form)",
                INFERRED,
            )
        )  # noqa: E501
    return "flashinfer", fields


_CUSTOM_AR = re.compile(
    r"(?:^|_)(?:cross_device_reduce|allreduce_fusion|all_reduce_fusion|multimem_all_reduce|"
    r"userbuffers|oneshot_all_?reduce|twoshot_all_?reduce|lamport)|^(?:oneShot|twoShot)AllReduce",
    re.IGNORECASE,
)


def _parse_custom_allreduce(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not _CUSTOM_AR.search(b):
        return None
    fields = [
        _f("op", "all_reduce", "custom (non-NCCL) all-reduce, chosen by message size", INFERRED)
    ]  # noqa: E501
    lo = b.lower()
    if "1stage" in lo or "oneshot" in lo:
        fields.append(_f("algorithm", "one_shot", "one-shot (1 stage)", INFERRED))
    elif "2stage" in lo or "twoshot" in lo:
        fields.append(
            _f("algorithm", "two_shot", "two-shot (reduce-scatter + all-gather)", INFERRED)
        )  # noqa: E501
    if "lamport" in lo:
        fields.append(_f("sync", "lamport", "Lamport-style flag synchronisation", INFERRED))
    if "fusion" in lo:
        fields.append(_f("fusion", "true", "all-reduce fused with neighbouring ops", INFERRED))
    return "custom_allreduce", fields


_VLLM_BASES = frozenset(
    """paged_attention_v1_kernel paged_attention_v2_kernel paged_attention_v2_reduce_kernel
    reshape_and_cache_kernel reshape_and_cache_flash_kernel concat_and_cache_mla_kernel
    merge_attn_states_kernel""".split()
)


def _parse_vllm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if not (q.startswith("vllm::") or b in _VLLM_BASES):
        return None
    fields = [
        _f(
            "op",
            b.removesuffix("_kernel"),
            "vLLM kernel",
            CONFIRMED if q.startswith("vllm::") else INFERRED,
        )
    ]  # noqa: E501
    m = re.match(r"paged_attention_(v[12])", b)
    if m:
        fields.append(
            _f(
                "version",
                m.group(1),
                "v1 single pass; v2 partitions the sequence and reduces",
                INFERRED,
            )
        )  # noqa: E501
    if b == "merge_attn_states_kernel":
        fields.append(
            _f(
                "variant",
                "merge",
                "cascade-attention LSE merge of prefix and suffix results",
                INFERRED,
            )
        )  # noqa: E501
    return "vllm", fields


_SERVING_PREFIXES = (
    "rms_norm_kernel",
    "fused_add_rms_norm_kernel",
    "act_and_mul_kernel",
    "silu_and_mul",
    "gelu_and_mul",
    "rotary_embedding_kernel",
    "scaled_fp8_quant",
    "per_token_group_quant",
    "dynamic_per_token",
    "dynamic_scaled",
    "cutlass_scaled_mm",
    "Marlin",
    "marlin",
    "topkGatingSoftmax",
    "moe_align_block_size",
    "fused_moe_kernel",
    "count_and_sort_expert_tokens",
    "moe_sum",
    "grouped_topk",
    "RadixTopK",
    "_copy_page_indices",
    "fused_recurrent_",
    "chunk_gated_delta_rule",
    "argmax",
    "top_k_top_p",
)


def _parse_serving(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith(("sgl_kernel::", "deep_gemm::", "sglang::")) or b.startswith(_SERVING_PREFIXES):
        return "llm_serving", [
            _f(
                "op",
                b,
                "LLM-serving kernel (vLLM/SGLang family); exact source not in the name",
                INFERRED,
            )
        ]  # noqa: E501
    return None
