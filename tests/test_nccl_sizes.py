"""NCCL message sizes from NCCL's NVTX payloads (tracelens.nccl, util's communication
view). No shared trace has NCCL ranges, so the fixtures are built here the way an nsys
export (schema 3.25) stores them: the schemas' entries in NVTX_PAYLOAD_SCHEMA_ENTRIES, each
range's payload in NVTX_EVENTS.binaryData (a 32-byte header, then the payload struct)."""

from __future__ import annotations

import json
import struct

import pytest
from conftest import run_cli
from fixtures.builder import NCCL_SENDRECV, XMMA_GEMM

import tracelens
from tracelens.nccl import message_sizes
from tracelens.synth import TraceBuilder

PID, OTHER = 3131, 3232
DOMAIN, ALLREDUCE, SEND = 7, 0x101, 0x102
MIB = 1 << 20


def payload(schema, body: bytes) -> bytes:
    return struct.pack("<IIIIQQ", DOMAIN, 0, schema, 0, len(body), 32 + len(body)) + body


def build(path, *, payloads=True, schema="3.25.0"):
    b = TraceBuilder(schema)
    b.process(PID, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    if payloads:
        entries = [
            # AllReduce: the size first (offset NULL means 0), then the reduction op.
            (ALLREDUCE, 0, 22, "Message size [bytes]", None),
            (ALLREDUCE, 1, 5, "Reduction operation", 8),
            # Send: communicator id, then the size at offset 8, then the peer.
            (SEND, 0, 18, "NCCL communicator ID", None),
            (SEND, 1, 22, "Message size [bytes]", 8),
            (SEND, 2, 5, "Peer rank", 16),
        ]
        for schema_id, idx, kind, name, offset in entries:
            b.add_row("NVTX_PAYLOAD_SCHEMA_ENTRIES", domainId=DOMAIN, schemaId=schema_id,
                      idx=idx, type=kind, name=name, offset=offset)  # fmt: skip
    t = 1_000_000
    calls = [
        ("ncclAllReduce", PID, payload(ALLREDUCE, struct.pack("<Qi4x", MIB, 0))),
        ("ncclAllReduce", PID, payload(ALLREDUCE, struct.pack("<Qi4x", 4 * MIB, 0))),
        ("ncclAllReduce", PID, payload(ALLREDUCE, struct.pack("<Qi4x", 2 * MIB, 0))),
        ("ncclSend", PID, payload(SEND, struct.pack("<QQi4x", 99, 4096, 1))),
        ("ncclSend", PID, payload(SEND, struct.pack("<QQi4x", 99, 4096, 1))),
        ("ncclAllReduce", PID, payload(ALLREDUCE, b"\x01\x02")),  # cut short: undecoded
        ("ncclAllReduce", OTHER, payload(ALLREDUCE, struct.pack("<Qi4x", 64 * MIB, 0))),
    ]
    for label, pid, blob in calls:
        extra = {"binaryData": blob} if payloads else {}
        b.nvtx_range(label, start=t, end=t + 500, pid=pid, **extra)
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 10, end=t + 20, pid=pid)
        b.kernel(NCCL_SENDRECV, start=t + 1000, end=t + 9000, stream=9, pid=pid,
                 correlation_id=cid)  # fmt: skip
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 30, end=t + 40, pid=pid)
        b.kernel(XMMA_GEMM, start=t + 2000, end=t + 4000, pid=pid, correlation_id=cid)
        t += 20_000
    return b.write(path)


@pytest.fixture(scope="module")
def nccl_trace(tmp_path_factory):
    """Seven NCCL ranges with payloads: six of PID (one cut short), one of OTHER."""
    directory = tmp_path_factory.mktemp("nccl")
    return build(directory / "nccl.sqlite")


def test_sizes_per_collective(nccl_trace):
    with tracelens.open(nccl_trace) as trace:
        sizes, payloads, undecoded = message_sizes(trace)
        mine, _, _ = message_sizes(trace, tracelens.EventFilter(pid=PID))
    rows = {r["collective"]: r for r in sizes.iter_rows(named=True)}
    assert (payloads, undecoded) == (7, 1)
    assert rows["AllReduce"] == {
        "collective": "AllReduce", "calls": 4, "total_bytes": 71 * MIB, "min_bytes": MIB,
        "median_bytes": 3 * MIB, "max_bytes": 64 * MIB,
    }  # fmt: skip
    assert rows["Send"]["calls"] == 2 and rows["Send"]["total_bytes"] == 8192
    assert mine.filter(collective="AllReduce")["total_bytes"].item() == 7 * MIB


def test_util_shows_them(nccl_trace, capsys):
    rc, out, err = run_cli(["util", str(nccl_trace), "--pid", str(PID)], capsys)
    assert rc == 0, err
    assert "NCCL message sizes (NVTX payloads, bytes)" in out
    assert (
        "note: message sizes from the payloads of 5 NCCL NVTX ranges; 1 without a message "
        "size (per NCCL call, not per kernel; any device)"
    ) in out
    rc, out, _ = run_cli(["util", str(nccl_trace), "-f", "json"], capsys)
    doc = json.loads(out)
    assert {r["collective"]: r["calls"] for r in doc["message_sizes"]} == {
        "AllReduce": 4,
        "Send": 2,
    }


def test_ranges_without_payloads_say_so(tmp_path, capsys):
    path = build(tmp_path / "plain.sqlite", payloads=False, schema="3.0.0")
    rc, out, _ = run_cli(["util", str(path)], capsys)
    assert rc == 0 and "NCCL message sizes" not in out
    assert (
        "note: message sizes unknown: the trace's 7 NCCL NVTX ranges carry no message size "
        "payload (NCCL 2.19+ records one; nsys exports it from schema 3.25, 2025.x)"
    ) in out
    with tracelens.open(path) as trace:
        assert trace.util().message_sizes is None
