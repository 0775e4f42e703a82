"""CUTLASS 2.x and 3.x kernels and CuTe device kernels."""

from __future__ import annotations

import re

from ..names import _strip_templates
from ._base import (
    _SHORT_TYPES,
    _TILE2,
    _TILE3,
    CONFIRMED,
    INFERRED,
    UNKNOWN,
    Field,
    _args_after,
    _core_fields,
    _Ctx,
    _f,
    _split_core,
    _split_types,
)

# -- CUTLASS 2.x ------------------------------------------------------------------------------
_CUTLASS_ARG = re.compile(r"<\s*(cutlass_\w+)")


def _first_cutlass_arg(n: str) -> str | None:
    m = _CUTLASS_ARG.search(n)
    return m.group(1) if m else None


def _cutlass2_fields(name: str, conf: str) -> list[Field] | None:
    toks = name.split("_")
    if not toks or toks[0] != "cutlass" or len(toks) < 3:
        return None
    fields: list[Field] = []
    i = 1
    if toks[i].isdigit():
        fields.append(
            _f("arch", f"sm{toks[i]}", "SM number in cuBLAS/cuDNN-internal CUTLASS names", INFERRED)
        )  # noqa: E501
        conf = INFERRED
        i += 1
    opclass = []
    while i < len(toks) and toks[i] in ("tensorop", "simt", "wmma", "sptensorop", "spsimt"):
        opclass.append(toks[i])
        i += 1
    if not opclass:
        return None
    fields.append(
        _f("opcode_class", "_".join(opclass), "opcode class (tensor cores / SIMT / WMMA)", conf)
    )  # noqa: E501
    pre: list[str] = []
    while i < len(toks) and _split_core(toks[i]) is None:
        pre.append(toks[i])
        i += 1
    if i >= len(toks):
        return None
    for t in pre:
        fields.append(
            _f("c_type", t, "C/output type (shown when it differs from the accumulator)", conf)
        )  # noqa: E501
    fields.extend(_core_fields(toks[i], conf) or [])
    i += 1
    while i < len(toks) and not _TILE2.match(toks[i]):
        t = toks[i]
        if t in ("optimized", "analytic", "few_channels", "fixed_channels"):
            fields.append(_f("iterator", t, "convolution iterator algorithm", conf))
        elif t in ("relu", "gelu", "bias"):
            fields.append(_f("epilogue", t, "fused epilogue", INFERRED))
        elif _split_types(t):
            fields.append(
                _f("a_type", t, "A type (shown when it differs from the accumulator)", conf)
            )  # noqa: E501
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
        i += 1
    if i < len(toks):
        fields.append(_f("tile_mn", toks[i], "threadblock tile M x N", conf))
        i += 1
    if i < len(toks) and _TILE2.match(toks[i]):
        kb, st = toks[i].split("x")
        fields.append(_f("k_block", kb, "threadblock tile K", conf))
        fields.append(_f("stages", st, "pipeline stages", conf))
        i += 1
    for t in toks[i:]:
        if t in ("nn", "nt", "tn", "tt") or t in ("nhwc", "nchw", "ndhwc", "ncdhw"):
            fields.append(_f("layout", t, "operand layouts (n column-major, t row-major)", conf))
        elif re.fullmatch(r"align\d+", t):
            fields.append(_f("alignment", t[5:], "max operand alignment (elements)", conf))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
    return fields


def _parse_cutlass2(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if b.startswith("cutlass_") and not b.startswith("cutlass3x_"):
        fields = _cutlass2_fields(b, CONFIRMED)
        if fields is not None:
            return "cutlass2", fields
    if q.endswith(("::Kernel", "::Kernel2")):
        inner = _first_cutlass_arg(c.normalized)
        if inner:
            fields = _cutlass2_fields(inner, INFERRED) or []
            wrapper = q
            return "cutlass2", [
                _f("wrapper", wrapper, "CUTLASS 2 kernel entry point", CONFIRMED),
                _f("cutlass_kernel", inner, "CUTLASS procedural name", CONFIRMED),
                *fields,
            ]
    return None


# -- CUTLASS 3.x ------------------------------------------------------------------------------
_CUTLASS3_TYPES = (
    ("a_type", "A type"),
    ("b_type", "B type"),
    ("acc_type", "accumulator type"),
    ("c_type", "C type (void: no C source)"),
    ("d_type", "D (output) type"),
)


def _parse_cutlass3(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not b.startswith("cutlass3x_"):
        return None
    toks = b.split("_")[1:]
    fields: list[Field] = []
    i = _cutlass3_head(toks, fields)
    i = _cutlass3_types(toks, i, fields)
    i = _cutlass3_shapes(toks, i, fields)
    _cutlass3_schedules(toks[i:], fields)
    return "cutlass3", fields


def _cutlass3_head(toks: list[str], fields: list[Field]) -> int:
    """Architecture, opcode class and the operation token (``s64x128x16gemm``: accumulator
    letter, instruction shape, operation); the next index."""
    conf, i = CONFIRMED, 0
    if i < len(toks) and re.fullmatch(r"sm\d+[a-z]?", toks[i]):
        fields.append(_f("arch", toks[i], "target architecture", conf))
        i += 1
    if i < len(toks):
        fields.append(_f("opcode_class", toks[i], "opcode class", conf))
        i += 1
    if i < len(toks):
        core = toks[i]
        m = re.fullmatch(r"([a-z]?)(\d+x\d+x\d+)?([a-z]*gemm|fprop|dgrad|wgrad)", core)
        if m:
            if m.group(1):
                letter = _SHORT_TYPES.get(m.group(1), m.group(1))
                fields.append(_f("accumulator", letter, "accumulator type letter", conf))
            if m.group(2):
                fields.append(_f("mma_shape", m.group(2), "instruction shape", conf))
            fields.append(_f("op", m.group(3), "operation kind", conf))
        else:
            fields.append(_f("op", core, "operation kind", conf))
        i += 1
    return i


def _cutlass3_types(toks: list[str], i: int, fields: list[Field]) -> int:
    """The type tokens up to the tile: A, B, accumulator, C, D when there are five, else
    each a ``type``; the next index."""
    types: list[str] = []
    while i < len(toks) and not _TILE3.match(toks[i]):
        types.append(toks[i])
        i += 1
    if len(types) == 5:
        for (fname, meaning), t in zip(_CUTLASS3_TYPES, types, strict=True):
            fields.append(_f(fname, t, meaning, CONFIRMED))
    else:
        for t in types:
            fields.append(_f("type", t, "data type token", INFERRED))
    return i


def _cutlass3_shapes(toks: list[str], i: int, fields: list[Field]) -> int:
    """Tile, cluster, stages, layouts and alignment, each when present in that order; the
    next index."""
    conf = CONFIRMED
    if i < len(toks) and _TILE3.match(toks[i]):
        fields.append(_f("tile", toks[i], "CTA tile M x N x K", conf))
        i += 1
    if i < len(toks) and _TILE3.match(toks[i]):
        fields.append(_f("cluster", toks[i], "cluster shape", conf))
        i += 1
    if i < len(toks) and toks[i].isdigit():
        fields.append(_f("stages", toks[i], "pipeline stages (0: chosen automatically)", conf))
        i += 1
    if i < len(toks) and re.fullmatch(r"[ntx]{3}", toks[i]):
        fields.append(_f("layout", toks[i], "A, B, C layouts (n column-major, t row-major)", conf))
        i += 1
    if i < len(toks) and re.fullmatch(r"align\d+", toks[i]):
        fields.append(_f("alignment", toks[i][5:], "max A/B alignment (elements)", conf))
        i += 1
    return i


def _cutlass3_schedules(rest: list[str], fields: list[Field]) -> None:
    """The tail: stream-K, then the kernel schedule and the epilogue schedule (from epi)."""
    conf = CONFIRMED
    # "_stream_k" follows align<N> in cutlass_library; accept it anywhere in the tail.
    for j in range(len(rest) - 1):
        if rest[j : j + 2] == ["stream", "k"]:
            fields.append(_f("tile_scheduler", "stream_k", "stream-K tile scheduler", conf))
            rest = rest[:j] + rest[j + 2 :]
            break
    if "epi" in rest:
        k = rest.index("epi")
        kernel, epi = rest[:k], rest[k:]
    else:
        kernel, epi = rest, []
    if kernel:
        fields.append(_f("kernel_schedule", "_".join(kernel), "kernel schedule", conf))
    if epi:
        fields.append(_f("epilogue_schedule", "_".join(epi), "epilogue schedule", conf))


def _parse_cute(c: _Ctx) -> tuple[str, list[Field]] | None:
    if c.qual != "cutlass::device_kernel":
        return None
    args = _args_after(c.normalized, "cutlass::device_kernel<")
    fields = []
    if args:
        op = _strip_templates(args[0]) or args[0]
        fields.append(
            _f("operator", op, "CUTLASS 3 / CuTe operator class the kernel runs", CONFIRMED)
        )  # noqa: E501
    return "cute_device_kernel", fields
