"""NCCL collectives (``ncclDevKernel_AllReduce_Sum_f32_RING_LL``, legacy and symmetric)."""

from __future__ import annotations

from ._base import CONFIRMED, Field, _Ctx, _f, _unknown_token

# -- NCCL ------------------------------------------------------------------------------------
_NCCL_ALGOS = (
    "COLLNET_DIRECT",
    "COLLNET_CHAIN",
    "NVLS_TREE",
    "NVLS",
    "TREE",
    "RING",
    "PAT",
    "COLLNET",
)  # noqa: E501
_NCCL_PROTOS = ("LL128", "LL", "SIMPLE")
_NCCL_NOTE = "the kernel's specialization, not necessarily the algorithm/protocol that ran"


def _algorithm_and_protocol(toks: list[str], i: int, fields: list) -> int:
    """Append the algorithm and protocol tokens found from ``toks[i]`` on (each optional,
    in that order) to ``fields``; the index after them."""
    algo, i = _nccl_take(toks, i, _NCCL_ALGOS)
    if algo:
        fields.append(_f("algorithm", algo, _NCCL_NOTE, CONFIRMED))
    proto, i = _nccl_take(toks, i, _NCCL_PROTOS)
    if proto:
        fields.append(_f("protocol", proto, _NCCL_NOTE, CONFIRMED))
    return i


def _nccl_take(toks: list[str], i: int, options: tuple[str, ...]) -> tuple[str | None, int]:
    for opt in options:
        parts = opt.split("_")
        if toks[i : i + len(parts)] == parts:
            return opt, i + len(parts)
    return None, i


def _parse_nccl(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if b.startswith("ncclSymkDevKernel_"):
        toks = b[len("ncclSymkDevKernel_") :].split("_")
        if toks and toks[-1] == "profile":
            toks = toks[:-1]
        fields = [_f("collective", toks[0], "collective", CONFIRMED)] if toks else []
        algo = toks[1:]
        reduces = bool(toks) and toks[0] in ("AllReduce", "ReduceScatter") and len(toks) >= 4
        if reduces:
            algo = toks[1:-2]  # then the reduction operator and the data type
        if algo:
            meaning = f"symmetric-memory algorithm ({_NCCL_NOTE})"
            fields.append(_f("algorithm", "_".join(algo), meaning, CONFIRMED))
        if reduces:
            fields.append(_f("reduction", toks[-2], "reduction operator", CONFIRMED))
            fields.append(_f("dtype", toks[-1], "data type", CONFIRMED))
        return "nccl_symmetric", fields
    if b.startswith("ncclDevKernel_"):
        toks = b[len("ncclDevKernel_") :].split("_")
        fields = [_f("collective", toks[0], "collective", CONFIRMED)]
        i = 1
        if toks[0] in ("AllReduce", "Reduce", "ReduceScatter") and len(toks) >= 3:
            fields.append(_f("reduction", toks[1], "reduction operator", CONFIRMED))
            fields.append(_f("dtype", toks[2], "data type", CONFIRMED))
            i = 3
        i = _algorithm_and_protocol(toks, i, fields)
        for t in toks[i:]:
            fields.append(_unknown_token(t, " in an NCCL kernel name"))
        return "nccl", fields
    if b.startswith("ncclKernel_"):
        toks = b[len("ncclKernel_") :].split("_")
        fields = [_f("collective", toks[0], "collective", CONFIRMED)]
        i = 1
        i = _algorithm_and_protocol(toks, i, fields)
        if i < len(toks):
            fields.append(_f("reduction", toks[i], "reduction operator", CONFIRMED))
            i += 1
        if i < len(toks):
            fields.append(_f("dtype", "_".join(toks[i:]), "data type (C type name)", CONFIRMED))
        return "nccl_legacy", fields
    if b.startswith("nccl"):
        return "nccl", [_f("kernel", b, "NCCL kernel", CONFIRMED)]
    return None
