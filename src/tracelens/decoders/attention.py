"""FlashAttention 2/3 and xFormers / PyTorch memory-efficient attention kernels."""

from __future__ import annotations

import re

from ._base import (
    _BOOL_NAMES_FA2_FWD,
    _BOOL_NAMES_FA2_SPLITKV,
    _FA2_SRC,
    _TILE2,
    CONFIRMED,
    INFERRED,
    UNKNOWN,
    Field,
    _args_after,
    _cpp_dtype,
    _Ctx,
    _cute_shape,
    _f,
    _split_types,
    _unknown_token,
)


# -- FlashAttention --------------------------------------------------------------------------
def _fa2_traits(n: str, fields: list[Field]) -> None:
    for marker in ("Flash_fwd_kernel_traits<", "Flash_bwd_kernel_traits<"):
        args = _args_after(n, marker)
        if args:
            names = ["head_dim", "block_m", "block_n", "warps"]
            for fname, a in zip(names, args, strict=False):
                if a.lstrip("-").isdigit():
                    fields.append(
                        _f(
                            fname,
                            a,
                            f"{fname.replace('_', ' ')} from the kernel traits ({_FA2_SRC})",
                            INFERRED,
                        )
                    )  # noqa: E501
            if marker.startswith("Flash_fwd") and len(args) >= 7:
                fields.append(_f("dtype", _cpp_dtype(args[6]), "element type", INFERRED))
            return


def _parse_fa2(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not (b.startswith(("flash_fwd", "flash_bwd"))):
        return None
    fields: list[Field] = []
    ns = c.qual.rsplit("::", 1)[0] if "::" in c.qual else ""
    if ns:
        fields.append(
            _f("namespace", ns, "build namespace (pytorch_flash: PyTorch SDPA's copy)", INFERRED)
        )  # noqa: E501
    direction = "fwd" if b.startswith("flash_fwd") else "bwd"
    fields.append(_f("direction", direction, "forward / backward", CONFIRMED))
    if "splitkv_combine" in b:
        fields.append(
            _f(
                "variant",
                "splitkv_combine",
                "merges split-KV partial results (log-sum-exp combine)",
                CONFIRMED,
            )
        )  # noqa: E501
    elif "splitkv" in b:
        fields.append(
            _f(
                "variant",
                "splitkv",
                "split-KV kernel; the name alone does not prove the KV was split",
                CONFIRMED,
            )
        )  # noqa: E501
    elif direction == "bwd":
        fields.append(
            _f(
                "variant",
                b.removeprefix("flash_bwd_").removesuffix("_kernel") or b,
                "backward stage",
                CONFIRMED,
            )
        )  # noqa: E501
    _fa2_traits(c.normalized, fields)
    args = _args_after(c.normalized, b + "<")
    if args and len(args) > 1:
        rest = args[1:]
        if b == "flash_fwd_kernel" and len(rest) == 8:
            names = _BOOL_NAMES_FA2_FWD
        elif b == "flash_fwd_splitkv_kernel" and len(rest) == 8:
            names = _BOOL_NAMES_FA2_SPLITKV
        elif b == "flash_fwd_splitkv_combine_kernel" and len(rest) == 3:
            names = ("combine_block_m", "log_max_splits", "is_even_k")
        else:
            names = ()
        if not names:
            # A template shape we don't know (another FlashAttention version): report the
            # raw parameters as unknown rather than drop or mislabel them.
            for i, v in enumerate(rest, start=1):
                fields.append(_unknown_token(v, f"template parameter {i}"))
        for fname, v in zip(names, rest, strict=False):
            meaning = f"template parameter {fname} ({_FA2_SRC})"
            if fname == "split":
                meaning = f"num_splits > 1: the KV really was split ({_FA2_SRC})"
            elif fname == "log_max_splits":
                meaning = f"log2 of the maximum number of splits merged ({_FA2_SRC})"
            fields.append(_f(fname, v, meaning, INFERRED))
    return "flash_attention_2", fields


_FA3_MARKERS = (
    ("FlashAttnFwdCombine", "fwd", "combine"),
    ("FlashAttnFwdSm90", "fwd", "main"),
    ("FlashAttnBwdSm90", "bwd", "main"),
    ("FlashAttnBwdPreprocess", "bwd", "preprocess"),
    ("FlashAttnBwdPostprocessConvertdQ", "bwd", "postprocess_convert_dq"),
    ("FlashAttnFwdSm80", "fwd", "main_sm80"),
    ("FlashAttnBwdSm80", "bwd", "main_sm80"),
    ("prepare_varlen_num_blocks", "fwd", "prepare_varlen_num_blocks"),
)
_FA4_MARKERS = (
    ("FlashAttentionForwardSm100", "fwd"),
    ("FlashAttentionBackwardSm100", "bwd"),
    ("FlashAttnFwdSm100", "fwd"),
    ("FlashAttnBwdSm100", "bwd"),
)


# Upstream hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp: the 12 bools after ArchTag.
_FA3_BOOLS = (
    "is_causal",
    "is_local",
    "has_softcap",
    "varlen",
    "paged_kv_non_tma",
    "append_kv",
    "has_qv",
    "mma_pv_is_rs",
    "intra_wg_overlap",
    "pack_gqa",
    "split",
    "v_colmajor",
)
_FA3_REPORTED = frozenset(
    {"is_causal", "is_local", "varlen", "paged_kv_non_tma", "pack_gqa", "split"}
)


def _parse_fa3(c: _Ctx) -> tuple[str, list[Field]] | None:
    n = c.normalized
    for marker, direction in _FA4_MARKERS:
        if marker in n:
            return "flash_attention_4", [
                _f("direction", direction, "forward / backward", CONFIRMED)
            ]  # noqa: E501
    for marker, direction, part in _FA3_MARKERS:
        if marker not in n:
            continue
        if marker == "prepare_varlen_num_blocks" and "flash" not in c.qual and c.base != marker:
            continue
        fields = [
            _f("direction", direction, "forward / backward", CONFIRMED),
            _f("component", part, "FlashAttention-3 kernel", CONFIRMED),
        ]
        if part == "combine":
            fields.append(_f("variant", "combine", "merges split-KV partial results", CONFIRMED))
        args = _args_after(n, "CollectiveMainloopFwdSm90<")
        if args:
            src = "upstream FlashAttention-3 mainloop template order; versions differ"
            if args[0].isdigit():
                fields.append(_f("stages", args[0], f"pipeline stages ({src})", INFERRED))
            if len(args) > 1 and (cl := _cute_shape(args[1])):
                fields.append(_f("cluster", cl, f"cluster shape ({src})", INFERRED))
            if len(args) > 2 and (tile := _cute_shape(args[2])):
                parts = tile.split("x")
                fields.append(_f("tile", tile, f"kBlockM x kBlockN x head dim ({src})", INFERRED))
                if len(parts) == 3:
                    fields.append(_f("head_dim", parts[2], f"head dimension ({src})", INFERRED))
            if len(args) > 3 and args[3].isdigit():
                fields.append(_f("head_dim_v", args[3], f"head dimension of V ({src})", INFERRED))  # noqa: E501
            if len(args) > 4:
                fields.append(_f("dtype", _cpp_dtype(args[4]), f"element type ({src})", INFERRED))  # noqa: E501
            bools = []
            for a in args[7:]:
                if a not in ("true", "false"):
                    break
                bools.append(a)
            if len(bools) == len(_FA3_BOOLS):
                for fname, v in zip(_FA3_BOOLS, bools, strict=True):
                    if fname in _FA3_REPORTED:
                        fields.append(_f(fname, v, f"template flag {fname} ({src})", INFERRED))
            elif bools:
                fields.append(
                    _f(
                        "flags",
                        "".join("1" if v == "true" else "0" for v in bools),
                        f"{len(bools)} boolean template flags; not the upstream count ({len(_FA3_BOOLS)}), so their order is unknown",
                        UNKNOWN,
                    )  # noqa: E501
                )
        return "flash_attention_3", fields
    return None


# -- xFormers / PyTorch memory-efficient attention -------------------------------------------
def _parse_xformers(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    m = re.match(r"^fmha_cutlass([FB])_", b)
    if not m:
        return None
    fields = [
        _f("direction", "fwd" if m.group(1) == "F" else "bwd", "F forward, B backward", CONFIRMED)
    ]  # noqa: E501
    for t in b[m.end() :].split("_"):
        if _split_types(t):
            fields.append(_f("dtype", t, "data type", INFERRED))
        elif t in ("aligned", "notaligned"):
            fields.append(_f("alignment", t, "inputs aligned for vector loads", INFERRED))
        elif _TILE2.match(t):
            fields.append(_f("tile", t, "queries x keys per CTA", INFERRED))
        elif re.fullmatch(r"k\d+", t):
            fields.append(_f("max_head_dim", t[1:], "maximum head dimension", INFERRED))
        elif t in ("rf", "gmem"):
            fields.append(
                _f(
                    "accumulator",
                    t,
                    "output accumulated in registers (rf) or global memory (gmem)",
                    INFERRED,
                )
            )  # noqa: E501
        elif t == "dropout":
            fields.append(_f("dropout", "true", "dropout variant", INFERRED))
        elif re.fullmatch(r"sm\d+", t):
            fields.append(_f("arch", t, "minimum architecture", INFERRED))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
    return "xformers", fields
