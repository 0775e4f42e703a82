"""Golden tests of the queries that run on the export's own tables (through SQLite, as
Trace._sqlite_rows runs them): NCCL's payload schemas and ranges, the recorded launch
environment and the MPI ranks, on one schema-3.25 trace built here. Process 6161.

NVTX_PAYLOAD_SCHEMA_ENTRIES, domain 1 (schema: entries as type/name/offset):
  0x100 comm init: 18 communicator ID, 5 'No. of ranks' at 8, 5 'Rank' at 12, 5 CUDA device
  0x101 AllReduce: 22 'Message size [bytes]' (offset NULL: 0), 5 reduction op at 8
  0x102 Send:      18 communicator ID, 22 'Message size [bytes]' at 8, 5 peer rank at 16
NVTX ranges with a payload (a 32-byte header <IIIIQQ: domain 1, 0, schema, 0, body size,
32 + body size; then the body):
  [1000, 2000] ncclCommInitRank (registered label), comm 0xBEEF, 4 ranks, rank 2, device 0
  [3000, 3500] ncclCommSplit, comm 0xCAFE, 2 ranks, rank 1, device 0
  [4000, 4500] ncclAllReduce, 1 MiB, op 0
  [5000, 5500] ncclSend (registered label), comm 99, 4096 bytes, peer 1
  [6000, 6500] train_step (not NCCL's), [7000, -] ncclAllReduce left open, 2 MiB
and one ncclAllReduce [8000, 8500] without a payload.
"""

from __future__ import annotations

import sqlite3
import struct

import pytest

from queries.golden import assert_golden
from tracelens.synth import TraceBuilder, global_tid

PID = 6161
DOMAIN, COMM_INIT, ALLREDUCE, SEND = 1, 0x100, 0x101, 0x102
MIB = 1 << 20


def _payload(schema: int, body: bytes) -> bytes:
    return struct.pack("<IIIIQQ", DOMAIN, 0, schema, 0, len(body), 32 + len(body)) + body


def _add_mpi_ranks(path, rows) -> None:
    """The table nsys writes with --trace mpi (the builder's schemas do not have it)."""
    con = sqlite3.connect(path)
    try:
        con.execute("CREATE TABLE MPI_RANKS (rank INTEGER NOT NULL, globalTid INTEGER NOT NULL)")
        con.executemany("INSERT INTO MPI_RANKS VALUES (?, ?)", rows)
        con.commit()
    finally:
        con.close()


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python train.py")
    entries = [
        (COMM_INIT, 0, 18, "NCCL communicator ID", None), (COMM_INIT, 1, 5, "No. of ranks", 8),
        (COMM_INIT, 2, 5, "Rank", 12), (COMM_INIT, 3, 5, "CUDA device", 16),
        (ALLREDUCE, 0, 22, "Message size [bytes]", None),
        (ALLREDUCE, 1, 5, "Reduction operation", 8),
        (SEND, 0, 18, "NCCL communicator ID", None), (SEND, 1, 22, "Message size [bytes]", 8),
        (SEND, 2, 5, "Peer rank", 16),
    ]  # fmt: skip
    for schema, idx, kind, name, offset in entries:
        b.add_row("NVTX_PAYLOAD_SCHEMA_ENTRIES", domainId=DOMAIN, schemaId=schema, idx=idx,
                  type=kind, name=name, offset=offset)  # fmt: skip
    ranges = [
        ("ncclCommInitRank", 1000, 2000, True, _payload(COMM_INIT, struct.pack("<Qiii4x", 0xBEEF, 4, 2, 0))),
        ("ncclCommSplit", 3000, 3500, False, _payload(COMM_INIT, struct.pack("<Qiii4x", 0xCAFE, 2, 1, 0))),
        ("ncclAllReduce", 4000, 4500, False, _payload(ALLREDUCE, struct.pack("<Qi4x", MIB, 0))),
        ("ncclSend", 5000, 5500, True, _payload(SEND, struct.pack("<QQi4x", 99, 4096, 1))),
        ("train_step", 6000, 6500, False, _payload(ALLREDUCE, struct.pack("<Qi4x", MIB, 0))),
        ("ncclAllReduce", 8000, 8500, False, None),
    ]  # fmt: skip
    for label, start, end, registered, blob in ranges:
        b.nvtx_range(label, start=start, end=end, registered=registered, domain_id=DOMAIN,
                     binaryData=blob)  # fmt: skip
    b.add_row("NVTX_EVENTS", start=7000, end=None, eventType=59, text="ncclAllReduce",
              domainId=DOMAIN, globalTid=global_tid(PID, PID),
              binaryData=_payload(ALLREDUCE, struct.pack("<Qi4x", 2 * MIB, 0)))  # fmt: skip
    environment = [
        ("PROCESS_0:COMMAND", "python"),
        ("PROCESS_0:ENVIRONMENT_VARIABLE", "RANK=3"),
        ("PROCESS_0:ENVIRONMENT_VARIABLE", "LOCAL_RANK=1"),
        ("PROCESS_1:ENVIRONMENT_VARIABLE", "OMPI_COMM_WORLD_RANK=3"),
        ("PROCESSES:ENVIRONMENT_VARIABLE", "NOT_A_PROCESS=1"),  # '_' is literal in the LIKE
    ]
    for name, value in environment:
        b.add_row("META_DATA_CAPTURE", name=name, value=value)
    path = b.write(tmp_path_factory.mktemp("export_tables") / "export_tables.sqlite")
    # rank 3 on two threads, rank 1 on one: two distinct ranks, in order
    _add_mpi_ranks(path, [(3, global_tid(PID, PID)), (1, global_tid(PID, PID + 1)),
                          (3, global_tid(PID, PID + 2))])  # fmt: skip
    return path


def test_nccl_payload_fields(trace_path):
    # where AllReduce (0x101: type 22 at offset NULL, i.e. 0) and Send (0x102: type 22 at 8)
    # keep the message size; the comm-init schema has none
    assert_golden(trace_path, "nccl_payload_fields", "two_schemas", export_tables=True)


def test_nccl_payloads(trace_path):
    # The closed NCCL ranges with a payload, by start: the comm init and split (their labels
    # start with nccl too), the AllReduce and the Send; not train_step (not NCCL's), the open
    # AllReduce (no end) or the one without a payload. Payload: header then body, e.g. the
    # AllReduce 01000000 00000000 01010000 00000000 (domain 1, 0, schema 0x101, 0), body
    # size 16, total 48, then 1 MiB as <Q (0000100000000000) and op 0 with padding.
    assert_golden(trace_path, "nccl_payloads", "four_ranges", export_tables=True)


def test_ranks_nccl_comm_inits(trace_path):
    # ncclCommInitRank (registered label) and ncclCommSplit, by start, open or not: the
    # bodies <Qiii4x: comm 0xBEEF, 4 ranks, rank 2, device 0; comm 0xCAFE, 2, 1, 0
    assert_golden(trace_path, "ranks_nccl_comm_inits", "init_and_split", export_tables=True)


def test_ranks_nccl_rank_fields(trace_path):
    # the comm-init schema's 'No. of ranks' (int at 8) and 'Rank' (int at 12), by name
    assert_golden(trace_path, "ranks_nccl_rank_fields", "comm_init", export_tables=True)


def test_ranks_launch_environment(trace_path):
    # the three PROCESS_<n>:ENVIRONMENT_VARIABLE values, in table order; not the command,
    # nsys's own DEVICE_ID/CAPTURE_EVENT_TYPE rows, or PROCESSES:... (no '_' after PROCESS)
    assert_golden(trace_path, "ranks_launch_environment", "three_variables", export_tables=True)


def test_ranks_mpi_ranks(trace_path):
    assert_golden(trace_path, "ranks_mpi_ranks", "two_ranks", export_tables=True)
