"""nsys memcpy/memset rows (``[CUDA memcpy HtoD]``) named like kernels."""

from __future__ import annotations

import re

from ..names import _MEMORY_ROW
from ._base import CONFIRMED, Field, _Ctx, _f

# -- memcpy / memset rows -------------------------------------------------------------------
_MEM_DIR = re.compile(
    r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|Host-to-Device|Device-to-Host|Device-to-Device|Peer-to-Peer)\b"
)  # noqa: E501
_MEM_KINDS = re.compile(r"\((\w+) -> (\w+)\)")


def _parse_memory_row(c: _Ctx) -> tuple[str, list[Field]] | None:
    n = c.normalized
    if not _MEMORY_ROW.match(n):
        return None
    kind = "memset" if "emset" in n else "memcpy"
    fields = [_f("operation", kind, "CUDA runtime memory operation row, not a kernel", CONFIRMED)]
    m = _MEM_DIR.search(n)
    if m:
        fields.append(
            _f("direction", m.group(1), "copy direction as labelled by the profiler", CONFIRMED)
        )  # noqa: E501
    m = _MEM_KINDS.search(n)
    if m:
        fields.append(_f("src_kind", m.group(1), "source memory kind", CONFIRMED))
        fields.append(_f("dst_kind", m.group(2), "destination memory kind", CONFIRMED))
    return "memcpy_memset", fields
