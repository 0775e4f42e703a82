"""Kernel-name decoders, one module per family, tried in the order of :data:`PARSERS`
(the most specific grammars first): the first that recognises a name gives its family and
fields. Each parser takes the name's context (raw, normalized, qualified and base views) and
returns ``(family, fields)`` or None."""

from __future__ import annotations

from ._base import UNKNOWN, Field, _Ctx, _f
from .aten import _parse_aten, _parse_cub, _parse_cublas_helper, _parse_fbgemm
from .attention import _parse_fa2, _parse_fa3, _parse_xformers
from .compiler import _parse_inductor, _parse_xla
from .cublas import _parse_cublas_arch
from .cudnn import _parse_cudnn
from .cutlass import _parse_cute, _parse_cutlass2, _parse_cutlass3
from .memory import _parse_memory_row
from .nccl import _parse_nccl
from .nvjet import _parse_nvjet
from .serving import _parse_custom_allreduce, _parse_flashinfer, _parse_serving, _parse_vllm
from .trtllm import _parse_trtllm
from .xmma import _parse_xmma

_PARSERS = (
    _parse_memory_row,
    _parse_nvjet,
    _parse_xmma,
    _parse_cutlass3,
    _parse_fa3,
    _parse_fa2,
    _parse_xformers,
    _parse_cudnn,
    _parse_cutlass2,
    _parse_cute,
    _parse_cublas_arch,
    _parse_cublas_helper,
    _parse_trtllm,
    _parse_flashinfer,
    _parse_nccl,
    _parse_custom_allreduce,
    _parse_vllm,
    _parse_inductor,
    _parse_xla,
    _parse_cub,
    _parse_aten,
    _parse_fbgemm,
    _parse_serving,
)


def _family_and_fields(c: _Ctx) -> tuple[str, list[Field]]:
    for parser in _PARSERS:
        try:
            got = parser(c)
        except (ValueError, IndexError, KeyError) as exc:
            # A grammar surprise must not take a whole report down: say what failed.
            why = f"{parser.__name__[len('_parse_') :]} parser failed ({type(exc).__name__})"
            return "other", [
                _f("parse_error", why, "this name's fields could not be read", UNKNOWN)
            ]
        if got is not None:
            return got
    return "other", []
