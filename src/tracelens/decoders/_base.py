"""What every decoder shares: the Field type and its confidences, the parser context, and
helpers for template arguments, CuTe shapes, C++ dtypes and the xmma/cuBLAS/cuDNN/CUTLASS
token tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

CONFIRMED = "confirmed"
INFERRED = "inferred"
UNKNOWN = "unknown"
CONFIDENCES = (CONFIRMED, INFERRED, UNKNOWN)


@dataclass(frozen=True, slots=True)
class Field:
    """One decoded piece of a kernel name."""

    name: str
    value: str
    meaning: str
    confidence: str  # "confirmed" | "inferred" | "unknown"

    def to_dict(self) -> dict[str, str]:
        # "field", not "name": a row of decoded fields sits next to the kernel's own name
        # (decode_column, lineup), and polars' unnest needs distinct column names.
        return {
            "field": self.name,
            "value": self.value,
            "meaning": self.meaning,
            "confidence": self.confidence,
        }


class _Ctx(NamedTuple):
    raw: str
    normalized: str  # capped at MAX_PARSE_CHARS
    qual: str
    base: str


def _f(name: str, value: object, meaning: str, confidence: str) -> Field:
    return Field(name, str(value), meaning, confidence)


def _unknown_token(tok: str, where: str = "") -> Field:
    return Field("unknown_token", tok, f"token not documented{where}", UNKNOWN)


# -- shared helpers -------------------------------------------------------------------------
def _template_args(s: str, open_idx: int) -> list[str]:
    """Top-level arguments of the template argument list whose ``<`` is at ``open_idx``.
    Linear; a truncated list returns the arguments seen so far."""
    args: list[str] = []
    depth = 0
    paren = 0
    start = open_idx + 1
    for i in range(open_idx, len(s)):
        c = s[i]
        if c == "(":
            paren += 1
        elif c == ")":
            paren = max(0, paren - 1)
        elif paren:
            continue
        elif c == "<":
            depth += 1
        elif c == ">":
            if i and s[i - 1] == "-":
                continue
            depth -= 1
            if depth == 0:
                args.append(s[start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(s[start:i].strip())
            start = i + 1
    tail = s[start:].strip()
    if tail:
        args.append(tail)
    return args


def _args_after(s: str, marker: str) -> list[str] | None:
    i = s.find(marker)
    if i < 0:
        return None
    j = i + len(marker) - 1
    if j >= len(s) or s[j] != "<":
        return None
    return _template_args(s, j)


_CUTE_C = re.compile(r"cute::C<(-?\d+)>|cute::_(\d+)\b|\bInt<(\d+)>")


def _cute_shape(arg: str) -> str | None:
    vals = [a or b or c for a, b, c in _CUTE_C.findall(arg)]
    return "x".join(vals) if vals else None


_CPP_TYPES = {
    "cutlass::half_t": "fp16",
    "cutlass::bfloat16_t": "bf16",
    "cutlass::float_e4m3_t": "fp8_e4m3",
    "cutlass::float_e5m2_t": "fp8_e5m2",
    "__half": "fp16",
    "half": "fp16",
    "__nv_bfloat16": "bf16",
    "c10::BFloat16": "bf16",
    "c10::Half": "fp16",
    "c10::Float8_e4m3fn": "fp8_e4m3",
    "c10::Float8_e5m2": "fp8_e5m2",
    "__nv_fp8_e4m3": "fp8_e4m3",
    "__nv_fp8_e5m2": "fp8_e5m2",
    "float": "fp32",
    "double": "fp64",
    "int": "int32",
    "long": "int64",
    "bool": "bool",
    "signed char": "int8",
    "unsigned char": "uint8",
    "int8_t": "int8",
    "uint8_t": "uint8",
    "cutlass::tfloat32_t": "tf32",
}


def _cpp_dtype(arg: str) -> str:
    a = arg.strip().removesuffix(" const").removeprefix("const ")
    return _CPP_TYPES.get(a, a)


_BOOL_NAMES_FA2_FWD = (
    "is_dropout",
    "is_causal",
    "is_local",
    "has_alibi",
    "is_even_mn",
    "is_even_k",
    "is_softcap",
    "return_softmax",
)
_BOOL_NAMES_FA2_SPLITKV = (
    "is_causal",
    "is_local",
    "has_alibi",
    "is_even_mn",
    "is_even_k",
    "is_softcap",
    "split",
    "append_kv",
)
_FA2_SRC = "upstream FlashAttention-2 flash_fwd_launch_template.h order; forks may differ"


# -- token tables for xmma / cublas_arch / cudnn / cutlass ---------------------------------
_TYPE_TOKEN = re.compile(
    r"bf16|tf32|fp16|fp32|fp64|f16|f32|f64|e4m3|e5m2|fp8|int8|s8|u8|i8|s32|i32|f8"
)  # noqa: E501
_TILE3 = re.compile(r"^(\d+)x(\d+)x(\d+)$")
_TILE2 = re.compile(r"^(\d+)x(\d+)$")
_INST_SHAPES = {
    "16816": "16x8x16",
    "1688": "16x8x8",
    "884": "8x8x4",
    "161616": "16x16x16",
    "16832": "16x8x32",
    "16864": "16x8x64",
    "8816": "8x8x16",
    "8832": "8x8x32",
    "1684": "16x8x4",
}
_SHORT_TYPES = {
    "s": "fp32",
    "h": "fp16",
    "d": "fp64",
    "i": "int32",
    "c": "complex fp32",
    "z": "complex fp64",
    "gc": "complex fp32 (Gaussian)",
    "gz": "complex fp64 (Gaussian)",
    "bf16": "bf16",
    "tf32": "tf32",
    "f16": "fp16",
    "f32": "fp32",
    "f64": "fp64",
}
_CORE_OPS = ("spgemm", "gemm", "fprop", "dgrad", "wgrad", "deconv")


def _split_types(tok: str) -> list[str] | None:
    found = _TYPE_TOKEN.findall(tok)
    return found if found and "".join(found) == tok else None


def _split_core(tok: str) -> tuple[str, str, str] | None:
    """``s16816gemm`` -> ('s', '16816', 'gemm'); ``sgemm`` -> ('s', '', 'gemm')."""
    if len(tok) > 64:
        return None
    for op in _CORE_OPS:
        if tok.endswith(op):
            pre = tok[: -len(op)]
            i = len(pre)
            while i and pre[i - 1].isdigit():
                i -= 1
            letters, digits = pre[:i], pre[i:]
            if letters and not letters.isalpha():
                return None
            return letters, digits, op
    return None


def _core_fields(tok: str, conf: str) -> list[Field] | None:
    sp = _split_core(tok)
    if sp is None:
        return None
    letters, digits, op = sp
    out = [
        _f(
            "op",
            op,
            {
                "gemm": "GEMM",
                "spgemm": "sparse GEMM",
                "fprop": "convolution forward",
                "dgrad": "convolution data gradient",
                "wgrad": "convolution weight gradient",
                "deconv": "transposed convolution",
            }[op],
            conf,
        )
    ]  # noqa: E501
    if letters:
        out.append(
            _f(
                "accumulator",
                _SHORT_TYPES.get(letters, letters),
                "accumulator/math type letter",
                conf if letters in _SHORT_TYPES else UNKNOWN,
            )
        )  # noqa: E501
    if digits:
        shape = _INST_SHAPES.get(digits)
        out.append(
            _f(
                "mma_shape",
                shape or digits,
                "tensor-core instruction shape",
                conf if shape else UNKNOWN,
            )
        )  # noqa: E501
    elif letters:
        out.append(_f("math", "simt", "no instruction shape: SIMT (CUDA cores)", INFERRED))
    return out
