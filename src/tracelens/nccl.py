"""NCCL message sizes from NCCL's own NVTX ranges.

NCCL (2.19 and later, built with NVTX) opens an NVTX range per call (``ncclAllReduce``,
``ncclSend``, ...) with a typed payload whose schema has a ``Message size [bytes]`` entry.
An nsys export (schema 3.25+) keeps the schemas in ``NVTX_PAYLOAD_SCHEMA_ENTRIES`` (entry
type and byte offset) and each range's payload in ``NVTX_EVENTS.binaryData``: a 32-byte
header (``<IIIIQQ``: domain id, reserved, schema id, reserved, payload size, total size)
followed by the payload struct. Only the message size is decoded; ranges whose schema has
none, or whose bytes are too short, are counted as undecoded, never guessed.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from ._schema import pid_of
from .filters import EventFilter, in_window

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

_HEADER = struct.Struct("<IIIIQQ")
# NVTX payload entry types (nvToolsExtPayload.h) -> struct format, LP64 sizes: the integer
# types a message size can have.
_ENTRY_FORMATS = {
    5: "<i", 6: "<I", 7: "<q", 8: "<Q", 9: "<q", 10: "<Q", 15: "<i", 16: "<I",
    17: "<q", 18: "<Q", 22: "<Q",
}  # fmt: skip
_COLUMNS = ("collective", "calls", "total_bytes", "min_bytes", "median_bytes", "max_bytes")


def message_sizes(trace: Trace, where: EventFilter | None = None) -> tuple[pl.DataFrame, int, int]:
    """Per NCCL call kind (the range label without ``nccl``: AllReduce, Send, ...): calls,
    total, min, median and max message size in bytes, over the NCCL ranges of ``where``'s
    process and window. Also the number of NCCL ranges with a payload, and how many of them
    had no message size to decode. Empty without the tables."""
    import polars as pl

    from . import _resources
    from ._sqlite import decode_text

    where = where or EventFilter()
    empty = pl.DataFrame(schema={c: pl.Int64 for c in _COLUMNS} | {"collective": pl.String})
    needed = {"NVTX_EVENTS": "binaryData", "NVTX_PAYLOAD_SCHEMA_ENTRIES": "offset"}
    if any(col not in trace.tables.get(t, ()) for t, col in needed.items()):
        return empty, 0, 0
    fields = {
        (d, s): (t, o or 0)
        for d, s, t, o in trace._sqlite_rows(_resources.query("nccl_payload_fields"))
    }
    rows, seen = [], 0
    for label, start, end, tid, blob in trace._sqlite_rows(_resources.query("nccl_payloads")):
        if where.pid is not None and pid_of(tid) != where.pid:
            continue
        if not in_window(start, end, where.start_ns, where.end_ns):
            continue
        seen += 1
        size = _message_size(blob, fields)
        if size is not None:
            label = decode_text(label)
            rows.append((label[4:] or label, size))
    if not rows:
        return empty, seen, seen
    frame = (
        pl.DataFrame(rows, schema={"collective": pl.String, "bytes": pl.Int64}, orient="row")
        .group_by("collective")
        .agg(
            calls=pl.len().cast(pl.Int64),
            total_bytes=pl.col("bytes").sum(),
            min_bytes=pl.col("bytes").min(),
            median_bytes=pl.col("bytes").median().round().cast(pl.Int64),
            max_bytes=pl.col("bytes").max(),
        )
        .sort("total_bytes", "collective", descending=[True, False])
    )
    return frame.select(_COLUMNS), seen, seen - len(rows)


def _message_size(blob: bytes | str | None, fields: dict) -> int | None:
    """The message size in one binaryData payload, or None when it cannot be read."""
    if isinstance(blob, str):
        try:
            blob = bytes.fromhex(blob)
        except ValueError:
            return None
    if not blob or len(blob) < _HEADER.size:
        return None
    domain, _, schema, _, _payload, _total = _HEADER.unpack_from(blob)
    field = fields.get((domain, schema))
    if field is None or field[0] not in _ENTRY_FORMATS:
        return None
    fmt = _ENTRY_FORMATS[field[0]]
    at = _HEADER.size + field[1]
    if at + struct.calcsize(fmt) > len(blob):
        return None
    return struct.unpack_from(fmt, blob, at)[0]
