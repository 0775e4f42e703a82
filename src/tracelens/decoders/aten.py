"""PyTorch ATen kernels (elementwise, reduce, index, softmax, norm, sort, copy), CUB,
fbgemm and cuBLAS helper kernels."""

from __future__ import annotations

import re

from ._base import CONFIRMED, INFERRED, Field, _args_after, _cpp_dtype, _Ctx, _f

# -- ATen / CUB / fbgemm / cuBLAS helpers ----------------------------------------------------
_ATEN_ELEMENTWISE = frozenset(
    """vectorized_elementwise_kernel unrolled_elementwise_kernel elementwise_kernel
    elementwise_kernel_with_index multi_tensor_apply_kernel distribution_elementwise_grid_stride_kernel
    vectorized_templated_elementwise_kernel""".split()  # noqa: E501
)
_ATEN_INDEX = frozenset(
    """index_elementwise_kernel indexSelectLargeIndex indexSelectSmallIndex indexFuncLargeIndex
    indexFuncSmallIndex vectorized_gather_kernel _scatter_gather_elementwise_kernel
    index_put_with_sort_kernel indexing_backward_kernel take_kernel put_kernel
    index_copy_kernel""".split()
)
_ATEN_SOFTMAX = re.compile(
    r"^(?:softmax_warp_(?:forward|backward)|cunn_SoftMax\w*|cunn_SpatialSoftMax\w*|masked_softmax\w*)$"
)  # noqa: E501
_ATEN_NORM = re.compile(
    r"^(?:vectorized_layer_norm_kernel|layer_norm_grad_input_kernel|GammaBetaBackward\w*|"
    r"RowwiseMoments\w*|LayerNorm\w*|ComputeInternalGradients\w*|ComputeFusedParams\w*|"
    r"batch_norm_\w*|group_norm\w*|GroupNorm\w*|layer_norm\w*|cuApplyLayerNorm\w*|"
    r"cuComputeGradInput\w*|cuComputePartGradGammaBeta\w*)$"
)
_ATEN_SORT = re.compile(
    r"^(?:radixSortKVInPlace|bitonicSortKVInPlace|sort_postprocess_kernel|gatherTopK|segmented_sort\w*|sortKeyValueInplace\w*|warpMergeSortKVInPlace)$"
)  # noqa: E501
_ATEN_MISC = frozenset(
    """compute_grad_weight sum_and_scatter compute_grad_weight_bags krn_partials_per_segment
    krn_partial_segment_offset compute_num_of_partial_segments embedding_backward_feature_kernel
    compute_cuda_kernel renorm_kernel""".split()
)
_FBGEMM_BASES = re.compile(
    r"^(?:split_embedding\w*|bounds_check_indices_kernel\w*|linearize_index_kernel|permute_pooled_embs_kernel\w*|batched_embedding\w*|dense_embedding\w*)$"
)  # noqa: E501
_CUBLAS_HELPERS = re.compile(
    r"^(?:splitKreduce_kernel|gemv2[NT]_kernel\w*|gemvNSP_kernel|gemvx|gemmk1_kernel|"
    r"gemmSN_\w+|dot_kernel|scal_kernel|axpy_kernel\w*|nrm2_kernel\w*|asum_kernel\w*|"
    r"sgemm_largek\w*|magma_\w*|gemm_kernel\w*|reduce_1Block_kernel)$"
)


_OP_PATTERNS = (
    re.compile(r"^CUDAFunctor(?:OnSelf|OnOther)?_(\w+)$"),
    re.compile(r"^(\w+)_kernel_cuda$"),
    re.compile(r"^(\w+)CUDAKernelImpl$"),
    re.compile(r"^launch_(\w+)$"),
    re.compile(r"^(\w+)_kernel_impl$"),
    re.compile(r"^(\w+)_cuda_out$"),
    re.compile(r"^(compare_scalar)_kernel$"),
    re.compile(r"^(?!Binary|AUnary|BUnary|Unary|BinaryOpScalar|TensorList)(\w+?)Functor$"),
    re.compile(r"^(\w+)_functor$"),
    re.compile(r"^(\w+?)Ops$"),
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _aten_op(n: str) -> str | None:
    lt = n.find("<")
    if lt < 0:
        return None
    for m in _IDENT.finditer(n, lt):
        ident = m.group(0)
        for rx in _OP_PATTERNS:
            mm = rx.match(ident)
            if mm:
                return mm.group(1)
    return None


_ATEN_REDUCE_TAG = re.compile(
    r"\b(ReduceAdd|ReduceMultiply|ReduceMean|ReduceMaximum|ReduceMinimum|TensorAssign)\b"
)
_INDEX_IMPLS = (
    ("index_put_with_sort", "index_put (accumulate, sort-based)"),
    ("index_put_kernel_impl", "index_put"),
    ("index_copy_kernel_impl", "index_copy"),
    ("index_fill_kernel_impl", "index_fill"),
    ("index_kernel_impl", "index (advanced indexing / gather)"),
    ("masked_scatter", "masked_scatter"),
    ("put_kernel", "put_"),
    ("take_kernel", "take"),
)


def _scatter_or_gather(n: str) -> str:
    # _cuda_scatter_gather_internal_kernel<is_scatter_like, scalar_t>
    args = _args_after(n, "_cuda_scatter_gather_internal_kernel<")
    if args and args[0] == "true":
        return "scatter"
    if args and args[0] == "false":
        return "gather"
    return "scatter / gather"


def _aten_index_op(b: str, n: str, reduce: str | None) -> str | None:
    if b.startswith("indexSelect"):
        return "index_select"
    if b.startswith("indexFunc"):
        return "index_add" if reduce == "ReduceAdd" else "index_reduce"
    if b == "vectorized_gather_kernel":
        return "gather"
    if b == "_scatter_gather_elementwise_kernel":
        return {
            "ReduceAdd": "scatter_add / scatter_reduce(sum, mean)",
            "ReduceMean": "scatter_reduce(mean)",
            "ReduceMultiply": "scatter_reduce(prod)",
            "ReduceMaximum": "scatter_reduce(amax)",
            "ReduceMinimum": "scatter_reduce(amin)",
        }.get(reduce or "", _scatter_or_gather(n))
    if b == "indexing_backward_kernel":
        return "index_put (accumulate) / indexing backward"
    for marker, op in _INDEX_IMPLS:
        if marker in n:
            return op
    return None


def _parse_aten(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q, n = c.base, c.qual, c.normalized
    aten_ns = q.startswith(("at::", "at_cuda_detail::", "c10::", "(anonymous namespace)::"))
    if b in _ATEN_ELEMENTWISE:
        fields: list[Field] = []
        args = _args_after(n, b + "<")
        if args and args[0].isdigit():
            if b == "vectorized_elementwise_kernel":
                fields.append(_f("vec_size", args[0], "elements per vectorized load", INFERRED))
            elif b == "elementwise_kernel" and len(args) > 1 and args[1].isdigit():
                fields.append(_f("threads", args[0], "threads per block", INFERRED))
                fields.append(_f("items_per_thread", args[1], "values per thread", INFERRED))
        op = _aten_op(n)
        if op:
            fields.append(
                _f(
                    "op",
                    op,
                    "operation named by the functor/lambda in the template arguments",
                    INFERRED,
                )
            )  # noqa: E501
        return "aten_elementwise", fields
    if b == "reduce_kernel":
        fields = []
        args = _args_after(n, "reduce_kernel<")
        if args and len(args) >= 2 and args[0].isdigit():
            fields.append(_f("threads", args[0], "threads per block", INFERRED))
            fields.append(_f("items_per_thread", args[1], "values per thread", INFERRED))
        ro = _args_after(n, "ReduceOp<")
        if ro:
            fields.append(_f("dtype", _cpp_dtype(ro[0]), "input type", INFERRED))
        op = _aten_op(n[n.find("ReduceOp<") :] if "ReduceOp<" in n else n)
        if op:
            fields.append(
                _f("op", op, "reduction named by the ops/functor template argument", INFERRED)
            )  # noqa: E501
        return "aten_reduce", fields
    if b in _ATEN_INDEX:
        fields = []
        m = _ATEN_REDUCE_TAG.search(n)
        reduce = m.group(1) if m else None
        if reduce:
            fields.append(_f("reduce", reduce, "what happens at each target index", INFERRED))
        op = _aten_index_op(b, n, reduce)
        if op:
            fields.append(_f("op", op, "PyTorch operation behind this indexing kernel", INFERRED))
        return "aten_index", fields
    if _ATEN_SOFTMAX.match(b):
        fields = [
            _f("direction", "bwd" if "ackward" in b else "fwd", "forward / backward", INFERRED)
        ]  # noqa: E501
        args = _args_after(n, b + "<")
        if b.startswith("softmax_warp_") and args and len(args) >= 6:
            fields.append(_f("dtype", _cpp_dtype(args[0]), "input type", INFERRED))
            fields.append(
                _f("log2_elements", args[3], "log2 of the row length handled per warp", INFERRED)
            )  # noqa: E501
            fields.append(_f("is_log_softmax", args[4], "log-softmax", INFERRED))
            fields.append(_f("is_masked", args[5], "masked softmax", INFERRED))
        return "aten_softmax", fields
    if _ATEN_NORM.match(b) and (aten_ns or "::" not in q):
        return "aten_norm", [_f("op", b, "ATen normalization kernel", INFERRED)]
    if _ATEN_SORT.match(b):
        return "aten_sort", [_f("op", b, "ATen sort/top-k kernel", INFERRED)]
    if b.startswith("CatArrayBatchedCopy"):
        fields = [_f("op", "cat", "torch.cat batched copy", INFERRED)]
        variant = b.removeprefix("CatArrayBatchedCopy").lstrip("_")
        if variant:
            fields.append(_f("variant", variant, "copy variant", INFERRED))
        return "aten_copy", fields
    if b in _ATEN_MISC or (aten_ns and not q.startswith("at_cuda_detail::cub::")):
        return "aten", [_f("op", b, "ATen kernel", INFERRED)]
    return None


def _parse_cub(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if "cub::" in q or (b.startswith("Device") and "Kernel" in b):
        fields = [_f("algorithm", b, "CUB device-wide algorithm kernel", CONFIRMED)]
        if q.startswith("at_cuda_detail::"):
            fields.append(_f("bundled_by", "pytorch", "CUB copy bundled with PyTorch", INFERRED))
        return "cub", fields
    return None


def _parse_fbgemm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith("fbgemm_gpu::") or _FBGEMM_BASES.match(b):
        return "fbgemm", [
            _f("op", b, "FBGEMM-GPU kernel (embeddings, sparse features, quantization)", INFERRED)
        ]  # noqa: E501
    return None


def _parse_cublas_helper(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith(
        ("cublasLt::", "cublas::", "epilogue::impl::", "gemvx::")
    ) or _CUBLAS_HELPERS.match(b):  # noqa: E501
        fields = [
            _f(
                "kernel",
                q if "::" in q else b,
                "cuBLAS/cuBLASLt helper or non-xmma kernel",
                INFERRED,
            )
        ]  # noqa: E501
        if "splitKreduce" in b:
            fields.append(
                _f(
                    "split_k_reduce",
                    "true",
                    "reduces split-K partial sums of a preceding GEMM",
                    CONFIRMED,
                )
            )  # noqa: E501
        return "cublas_helper", fields
    return None
